/**
 * Holes a second audit found in the gate (a policy that allows by default and denies `^rm\b`): each command line
 * made bash 5.2 run an rm it spells out, and was allowed. Programs that start a shell reading stdin (su, runuser,
 * sg, newgrp, script, `sudo -s`, `doas -s`), completion word lists (`compgen -W`), prompt strings' octal escapes,
 * a script file named by a descriptor number alone (`. 0` in /dev/fd), start-stop-daemon, and the empty word an
 * unquoted brace expansion leaves (`nice {,rm} x`). And the prompts that were refused though they run nothing.
 */
import { assignedScript, laterScripts, promptScript } from '../../../actors/permission/shell-later.ts';
import { expandBraces } from '../../../machines/permission/shell-words.ts';
import { unwrapCommand, WRAPPERS } from '../../../machines/permission/shell-wrappers.ts';
import { namesDescriptor, readsScriptFromStdin } from '../../../machines/permission/shell-stdin-readers.ts';
import { decideTerminal, merged } from '../../support/permission-fixtures.ts';

const POLICY = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });
const words = (line: string) => line.split(' ');

describe('the gate reads what the second audit found bash runs', () => {
  it.each([
    // 1. a shell started with no command reads the pipe.
    "echo 'rm x' | su",
    "echo 'rm x' | su -",
    "echo 'rm x' | su -l",
    "echo 'rm x' | su -m",
    "echo 'rm x' | su --pty",
    "echo 'rm x' | su -s /bin/sh root",
    "echo 'rm x' | su - root -- /dev/stdin",
    "echo 'rm x' | runuser root",
    "echo 'rm x' | runuser -l root",
    "echo 'rm x' | sg root",
    "echo 'rm x' | sg - root",
    "echo 'rm x' | script -q /dev/null",
    "echo 'rm x' | sudo -s",
    "echo 'rm x' | sudo -i",
    "echo 'rm x' | sudo -Es",
    "echo 'rm x' | sudo -u root --login",
    "echo 'rm x' | doas -s",
    "echo 'rm x' | newgrp",
    "echo 'rm x' | sudo su",
    "su <<<'rm x'",
    // 2. a completion word list is expanded.
    "compgen -W '$(rm x)' a",
    "complete -W '$(rm x)' a",
    "compgen -o default -W '`rm x`' a",
    'compgen -W \'$(echo${IFS}")";rm${IFS}x)\' a',
    // 3. a prompt's octal escapes are decoded before it is expanded.
    "PS4='\\044\\050rm x\\051'; set -x; :",
    "PS4='\\140rm x\\140'; set -x; :",
    "declare PS2='x\\140rm x\\140'",
    'PS4="\'\\$(rm x)\'"; set -x; :',
    // 4. a descriptor named by its number alone.
    "cd /dev/fd && . 0 <<<'rm x'",
    "cd /dev/fd && bash ./0 <<<'rm x'",
    // 5. start-stop-daemon runs --startas, else --exec.
    'start-stop-daemon --start --exec /usr/bin/rm -- x',
    'start-stop-daemon -S -x /usr/bin/ls -a /usr/bin/rm -- x',
    'start-stop-daemon --start --startas=/bin/rm --name ls x',
    // 6. bash drops an empty word an unquoted brace expansion made.
    'nice {,rm} x',
    'command {,rm} x',
    'env {,rm} x',
    'exec {,rm} x',
    'timeout 1 {,rm} x',
    'a=1 {,rm} x',
    'time {,,rm} x',
    'xargs {,rm} <<<x',
  ])('%s is denied', async (command) => {
    const d = await decideTerminal(POLICY, command);
    expect({ outcome: d.outcome, level: d.level }).toEqual({ outcome: 'deny', level: 'deny_rule' });
  });

  it('allows the prompts that run nothing, and the same programs that run no rm', async () => {
    const outcomes = async (commands: string[]) =>
      Promise.all(
        commands.map(async (command) => ({ command, outcome: (await decideTerminal(POLICY, command)).outcome })),
      );
    const commands = [
      "echo 'ls' | su",
      "echo 'ls' | sudo -s",
      'echo x | su -c ls root',
      'echo x | sudo -s ls',
      'echo x | runuser -u root cat',
      'echo x | script -qc cat /dev/null',
      'echo x | sg root cat',
      'echo x | su root ./script.sh',
      "compgen -W 'a b c' a",
      "compgen -W '\\$(rm x)' a",
      "PS1='$ '",
      "PS1='> '",
      "export PS1='[\\u@\\h \\W]\\$ '",
      "PS1='\\$(rm x)'",
      "PS4='\\\\$(rm x)'; set -x; :",
      "PS4='\\44(rm x)'; set -x; :",
      'start-stop-daemon --stop --exec /usr/bin/rm',
      'start-stop-daemon -S -x /usr/bin/ls -- x',
      "nice ''{,rm} x",
      "nice {'',rm} x",
      'echo a{,}',
      'cat 0',
    ];
    expect(await outcomes(commands)).toEqual(commands.map((command) => ({ command, outcome: 'allow' })));
  });
});

describe('readsScriptFromStdin: programs that start a shell with no command', () => {
  it('is true with no command, and false with one', () => {
    const reads = (lines: string[]) => lines.map((line) => [line, readsScriptFromStdin(words(line))]);
    const starts = [
      'su',
      'su -',
      'su -l',
      'su -m root',
      'su --pty',
      'su --login root',
      'su -s /bin/sh root',
      'su --shell=/bin/sh root',
      'su root -- -s',
      'runuser root',
      'runuser - root',
      'sg root',
      'sg - root',
      'newgrp',
      'newgrp - root',
      'script',
      'script -q /dev/null',
      'script -q -E never /dev/null',
      'sudo -s',
      'sudo -i',
      'sudo -Es',
      'sudo -u root -i',
      'sudo -uroot -s',
      'sudo --shell',
      'sudo --login',
      'sudo -s A=1',
      'doas -s',
      'doas -u root -s',
    ];
    const runs = [
      'su -c ls',
      'su root -c ls',
      'su -lc ls root',
      'su --command=ls root',
      'su root ./script.sh',
      'runuser -u root ls',
      'runuser -u root',
      'sg root ls',
      'sg root -c ls',
      'script -c ls /dev/null',
      'script /dev/null --command ls',
      'sudo',
      'sudo ls',
      'sudo -s ls',
      'sudo -u root',
      'sudo -us',
      'sudo -i -- ls',
      'doas ls',
      'doas -s ls',
      'doas -u s',
    ];
    expect(reads(starts)).toEqual(starts.map((line) => [line, true]));
    expect(reads(runs)).toEqual(runs.map((line) => [line, false]));
  });
});

describe('namesDescriptor: a number alone', () => {
  it('may name a descriptor in the working directory', () => {
    const paths = ['0', './0', 'fd/0', '3', '/dev/fd/0', 'stdin', 'x', '0x', './file', '/dev/null'];
    expect(paths.map(namesDescriptor)).toEqual([true, true, true, true, true, true, false, false, false, false]);
  });
});

describe('unwrapCommand: start-stop-daemon', () => {
  it('is a known wrapper', () => {
    expect(WRAPPERS).toContain('start-stop-daemon');
  });
  it.each<[string, string[]]>([
    ['start-stop-daemon --start --exec /usr/bin/rm -- x', ['/usr/bin/rm', 'x']],
    ['start-stop-daemon -S -x /usr/bin/rm -- x', ['/usr/bin/rm', 'x']],
    ['start-stop-daemon -Sx /usr/bin/rm -- -f x', ['/usr/bin/rm', '-f', 'x']],
    ['start-stop-daemon -S -b -p pid -x /bin/ls -a /bin/rm -- x', ['/bin/rm', 'x']],
    ['start-stop-daemon --start --exec=/bin/ls --startas /bin/rm x', ['/bin/rm', 'x']],
    ['start-stop-daemon --start --exe /bin/rm --chuid root -- x', ['/bin/rm', 'x']],
  ])('%s runs its program', (line, argv) => {
    expect(unwrapCommand(words(line))).toEqual([{ via: 'start-stop-daemon', argv }]);
    // Only --start runs one.
    expect(unwrapCommand(words(line.replace(/--start\b|-S/, '--stop')))).toEqual([]);
  });
});

describe('expandBraces: the empty words bash drops', () => {
  const plain = (text: string) => [{ text, quoted: false }];
  it('drops an empty result of an unquoted expansion, and keeps a quoted empty word', () => {
    expect(expandBraces(plain('{,rm}'))).toEqual(['rm']);
    expect(expandBraces(plain('{,,rm}'))).toEqual(['rm']);
    expect(expandBraces(plain('{,}'))).toEqual([]);
    expect(expandBraces(plain('a{,}'))).toEqual(['a', 'a']);
    expect(expandBraces([{ text: '', quoted: true }])).toEqual(['']);
    expect(expandBraces([{ text: '', quoted: true }, ...plain('{,rm}')])).toEqual(['', 'rm']);
    expect(expandBraces([...plain('{'), { text: '', quoted: true }, ...plain(',rm}')])).toEqual(['', 'rm']);
    expect(expandBraces([{ text: '{,}', quoted: true }])).toEqual(['{,}']);
  });
});

describe('shell-later: completion word lists and prompt strings', () => {
  it("gives a -W word list's substitutions as a here-doc body", () => {
    expect(laterScripts(['compgen', '-W', '$(rm x)', 'a'])).toEqual([': <<SKEIN_EXPANDED\n$(rm x)\nSKEIN_EXPANDED']);
    expect(laterScripts(['complete', '-o', 'x', '-W', '`rm x`', 'a'])).toHaveLength(1);
    expect(laterScripts(['compgen', '-W', 'a b', 'a'])).toEqual([]);
    expect(laterScripts(['compgen', '-X', '$(rm x)', 'a'])).toEqual([]);
  });

  it("decodes a prompt's \\nnn and \\\\ as bash does, and reads it only when it can run something", () => {
    expect(promptScript('\\044\\050rm x\\051')).toBe(': <<SKEIN_EXPANDED\n$(rm x)\nSKEIN_EXPANDED');
    expect(promptScript('\\140rm x\\140')).toBe(': <<SKEIN_EXPANDED\n`rm x`\nSKEIN_EXPANDED');
    expect(promptScript('\\044(rm x)')).toContain('$(rm x)');
    // Fewer than three digits, but for the last: the backslash stays (`\44(` prints `\44(`).
    expect(promptScript('\\44(rm x)')).toBeUndefined();
    expect(promptScript('\\4\\050rm x)')).toBeUndefined();
    expect(promptScript('\\0440(rm x)')).toBeUndefined();
    // A `"` is literal outside a substitution, and quoting inside one.
    expect(promptScript('"$(echo ")"; rm y)"')).toBe(': <<SKEIN_EXPANDED\n"$(echo ")"; rm y)"\nSKEIN_EXPANDED');
    // An escaped `$` runs nothing.
    expect(promptScript('\\\\$(rm x)')).toBe(': <<SKEIN_EXPANDED\n__(rm x)\nSKEIN_EXPANDED');
    for (const value of ['$ ', '> ', '[\\u@\\h \\W]\\$ ', '\\044']) expect(promptScript(value), value).toBeUndefined();
    expect(promptScript('SKEIN_EXPANDED\n$(rm x)')).toBe(
      ': <<SKEIN_EXPANDED_\nSKEIN_EXPANDED\n$(rm x)\nSKEIN_EXPANDED_',
    );
  });

  it('reads PS0-PS4 through promptScript and PROMPT_COMMAND as a command', () => {
    expect(assignedScript('PS1=$ ')).toBeUndefined();
    expect(assignedScript('PS4=\\140rm x\\140')).toBe(': <<SKEIN_EXPANDED\n`rm x`\nSKEIN_EXPANDED');
    expect(assignedScript("PS4=('+ ' x)")).toBeUndefined();
    expect(assignedScript('PROMPT_COMMAND=rm x')).toBe('rm x');
  });
});
