/**
 * Commands that change how the next typed line is read: skein types `\. <file>` for every command through
 * readline and the terminal's line discipline, so a key binding (`bind`), a special character (`stty`) or a file
 * of bindings (INPUTRC) can turn it into another command. Each asks a person under a policy that allows by
 * default; listing and reading them does not (`test/hostile/readline-state.integration.test.ts` runs them live).
 */
import { hiddenRun } from '../../../actors/permission/shell-later.ts';
import { inputrcAssignment } from '../../../actors/permission/shell-refusals.ts';
import { decideTerminal, merged } from '../../support/permission-fixtures.ts';

const POLICY = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });

describe('key bindings, terminal settings and INPUTRC', () => {
  it.each([
    `bind '"\\C-m": "\\C-a\\C-krm x\\C-j"'`,
    `bind 'Control-m: accept-line'`,
    "bind 'set enable-bracketed-paste off'",
    'bind -f ./keys',
    'bind -m vi-insert "x: y"',
    'bind -r "\\C-m"',
    'bind -u accept-line',
    'bind -pr x',
    'bind -- x',
    'bind -',
    'env bind "x: y"',
    'stty kill -',
    'stty intr x noflsh',
    'stty -F /dev/tty erase a',
    'stty --file=/dev/tty werase /',
    'stty sane kill -',
    'stty iuclc',
    'stty igncr',
    'stty -isig',
    'stty raw',
    'stty -icanon intr x',
    'export INPUTRC=./keys',
    'INPUTRC=./keys bash -i',
    "declare 'INPUTRC=./keys'",
    'INPUTRC+=x',
  ])('%s asks', async (command) => {
    const d = await decideTerminal(POLICY, command);
    expect({ command, outcome: d.outcome }).toEqual({ command, outcome: 'confirm' });
  });

  it.each([
    'bind -p',
    'bind -P',
    'bind -lpPvVsSX',
    'bind -m emacs -p',
    'bind -memacs -s',
    'bind -q accept-line',
    'bind -m vi -q abort',
    'stty',
    'stty -a',
    'stty --all',
    'stty -g',
    'stty --save',
    'stty size',
    'stty speed',
    'stty sane',
    'stty -echo',
    'stty -icanon min 1 time 0',
    'stty icanon echo',
    'stty rows 40 cols 120',
    'stty -F /dev/tty -a',
    'stty -F/dev/tty size',
    'stty --file=/dev/tty -g',
    'INPUTRCX=1',
  ])('%s is allowed (it lists, reports or resets)', async (command) => {
    expect((await decideTerminal(POLICY, command)).outcome).toBe('allow');
  });

  it('says why', () => {
    expect(hiddenRun(['bind', 'x: y'])).toBe(
      'bind changes what keys do, and skein types every command line through readline: the next line could run ' +
        'something else',
    );
    expect(hiddenRun(['stty', 'kill', '-'])).toMatch(/^stty changes how the terminal reads input/);
    expect(hiddenRun(['bind', '-x', 'x: y'])).toBe('bind -x runs a command on a key');
    expect(inputrcAssignment('INPUTRC=x')).toMatch(/INPUTRC names a file of key bindings/);
    expect(inputrcAssignment('INPUTRCX=x')).toBeUndefined();
  });
});
