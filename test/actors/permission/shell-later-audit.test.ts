/**
 * Holes an audit found in the gate (a policy that allows by default and denies `^rm\b`): each command line made
 * bash 5.2 run an rm it spells out, and was allowed. Variables bash runs as code later, set without an
 * assignment's syntax or as an array, and BASH_ENV/ENV, a file every later shell runs first; `source --`,
 * `--rcfile /dev/stdin`, env -S's own escapes, and wrappers the table did not know.
 */
import {
  assignedScript,
  assignmentRefusal,
  hiddenRun,
  laterProblem,
  laterRefusal,
  laterScripts,
  loopVariable,
} from '../../../actors/permission/shell-later.ts';
import { decideTerminal, merged } from '../../support/permission-fixtures.ts';

const POLICY = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });

describe('the gate reads what the audit found bash runs', () => {
  it.each([
    // 1. source and . read `--` as the end of their options.
    "source -- /dev/stdin <<<'rm x'",
    ". -- /dev/stdin <<<'rm x'",
    // 2. startup files that name the here-string.
    "bash --rcfile /dev/stdin -ic : <<<'rm x'",
    "bash --init-file /dev/stdin -ic : <<<'rm x'",
    "BASH_ENV=/dev/stdin bash -c : <<<'rm x'",
    "ENV=/dev/stdin sh -ic : <<<'rm x'",
    "export BASH_ENV=/dev/stdin; bash -c : <<<'rm x'",
    "printf -v BASH_ENV /dev/stdin; export BASH_ENV; bash -c : <<<'rm x'",
    "env BASH_ENV=/dev/stdin bash -c : <<<'rm x'",
    // 3. env -S's escapes: `\_` splits the word.
    "env -S 'rm\\_x'",
    "env -S 'rm\\tx'",
    "env -S 'rm\\nx'",
    // 4. prompt variables set without an assignment's syntax, or as an array.
    "printf -v PS4 '$(rm y)'; set -x; :",
    "read -r PS4 <<<'$(rm y)'; set -x; :",
    "mapfile -t PS4 <<<'$(rm y)'; set -x; :",
    "declare -n p=PS4; p='$(rm y)'; set -x; :",
    "PS4=('$(rm y)'); set -x; :",
    "for PS4 in '$(rm y)'; do set -x; :; done",
    "declare -n p; p=PS4; p='$(rm y)'; set -x; :",
    "PROMPT_COMMAND=(: 'rm y'); bash -i <<<':'",
    "read -r PROMPT_COMMAND <<<'rm y'; export PROMPT_COMMAND; bash -i <<<':'",
    'getopts a PS4 -a; set -x; :',
    "builtin printf -v PS1 '$(rm y)'",
    // 5. wrappers the table did not know.
    'chroot / rm x',
    'chroot --userspec 0:0 / rm x',
    "script -qc 'rm x' /dev/null",
    "script /dev/null -c 'rm x'",
    "script -q --command 'rm x' /dev/null",
    'unshare rm x',
    'unshare --map-user 0 -R / rm x',
    'nsenter -t 1 rm x',
    'setpriv rm x',
    'setpriv --reuid 0 --groups 0 rm x',
    'prlimit rm x',
    'prlimit --nofile=10 -o RESOURCE rm x',
    'logsave /dev/null rm x',
    'strace -o /dev/null rm x',
    'strace -f -e trace=none --string-limit 5 rm x',
    'valgrind rm x',
    'valgrind --tool=none rm x',
    'fakeroot rm x',
    'fakeroot -l lib.so -- rm x',
    'setarch x86_64 rm x',
    'setarch x86_64 -R rm x',
    'setarch -R rm x',
    'linux64 rm x',
    'linux32 rm x',
    'i386 rm x',
    'x86_64 rm x',
    'dbus-run-session -- rm x',
    'dbus-run-session --config-file /dev/null rm x',
    "sg root -c 'rm x'",
    "sg - root 'rm x'",
    "capsh -- -c 'rm x'",
    'capsh --shell=/bin/rm -- x',
    "capsh == -- -c 'rm x'",
  ])('%s is not allowed', async (command) => {
    expect((await decideTerminal(POLICY, command)).outcome).not.toBe('allow');
  });

  it.each([
    "source -- /dev/stdin <<<'rm x'",
    "bash --rcfile /dev/stdin -ic : <<<'rm x'",
    "env -S 'rm\\_x'",
    "PS4=('$(rm y)'); set -x; :",
    "script -qc 'rm x' /dev/null",
    "sg root -c 'rm x'",
    "capsh -- -c 'rm x'",
    'setarch x86_64 -R rm x',
    'strace -o /dev/null rm x',
  ])('%s is denied by the rule on rm', async (command) => {
    const d = await decideTerminal(POLICY, command);
    expect({ outcome: d.outcome, level: d.level }).toEqual({ outcome: 'deny', level: 'deny_rule' });
  });

  it.each([
    'source -- ./env.sh',
    'bash --rcfile ~/.bashrc -ic ls',
    "env -S 'ls\\_-l'",
    "PS4=('+ ' x); set -x; :",
    "script -qc 'ls' /dev/null",
    "sg root -c 'ls'",
    'setarch x86_64 -R ls',
    'strace -o /dev/null ls',
    'read -r line <<<x',
    'printf -v out %s x',
    'declare -n ref=arr',
  ])('%s is still allowed', async (command) => {
    expect((await decideTerminal(POLICY, command)).outcome).toBe('allow');
  });
});

describe('shell-later: variables set as code without an assignment word', () => {
  it('refuses printf -v, read, mapfile, getopts and namerefs that set a code variable', () => {
    for (const argv of [
      ['printf', '-v', 'PS4', 'x'],
      ['printf', '-vPS1', 'x'],
      ['read', '-r', 'PS4'],
      ['read', '-a', 'PROMPT_COMMAND'],
      ['read', '-p', 'prompt:', 'PS0'],
      ['mapfile', '-t', 'PS4'],
      ['readarray', '-d', ',', 'PS2'],
      ['getopts', 'ab', 'PS4'],
      ['declare', '-n', 'p=PS4'],
      ['local', '-n', 'p=PROMPT_COMMAND'],
      ['typeset', '-gn', 'p=BASH_ENV'],
      ['printf', '-v', 'BASH_ENV', '/dev/stdin'],
      ['read', 'ENV'],
    ])
      expect(laterRefusal(argv), argv.join(' ')).toMatch(/sets (PS[0124]|PROMPT_COMMAND|BASH_ENV|ENV), whose value/);
    // A refusal (a parse error in the split), not an ask: hiddenRun leaves it to laterProblem.
    expect(hiddenRun(['read', '-r', 'PS4'])).toBeUndefined();
    expect(laterProblem(['read', '-r', 'PS4'])).toMatch(/^read sets PS4/);
    expect(laterProblem(['bash', '-c', ':'], ['BASH_ENV=/dev/stdin'])).toMatch(/BASH_ENV names a file bash runs/);
    expect(loopVariable('PS4')).toMatch(/a loop sets PS4/);
    expect(loopVariable('i')).toBeUndefined();
  });

  it('refuses a nameref whose target it cannot name, and a declared BASH_ENV or ENV', () => {
    expect(laterRefusal(['declare', '-n', 'p'])).toMatch(/a reference to a variable the check cannot name/);
    expect(laterRefusal(['local', '-n', 'r=$1'])).toMatch(/a reference to a variable the check cannot name/);
    expect(laterRefusal(['export', 'BASH_ENV=/dev/stdin'])).toMatch(/BASH_ENV names a file bash runs/);
    expect(laterRefusal(['declare', '-x', 'ENV=/dev/stdin'])).toMatch(/ENV names a file bash runs/);
  });

  it('leaves alone what sets other variables', () => {
    for (const argv of [
      ['printf', '-v', 'out', '%s', 'PS4'],
      ['printf', 'PS4'],
      ['read', '-r', 'line'],
      ['read', '-p', 'PS4', 'line'],
      ['mapfile', '-t', 'lines'],
      ['mapfile', '-C', 'cb', 'lines'],
      ['getopts', 'ab', 'opt', 'PS4'],
      ['declare', '-n', 'ref=arr'],
      ['declare', 'p=PS4'],
      ['export', '-n', 'PS4'],
      ['export', 'ENVIRONMENT=x'],
    ])
      expect(laterRefusal(argv), argv.join(' ')).toBeUndefined();
  });

  it('says why an assignment to BASH_ENV or ENV is refused', () => {
    expect(assignmentRefusal('BASH_ENV=/dev/stdin')).toMatch(/runs at the start of every later shell/);
    expect(assignmentRefusal('ENV=x')).toMatch(/outside the agent's command/);
    expect(assignmentRefusal('ENV_FILE=x')).toBeUndefined();
    expect(assignedScript('BASH_ENV=/dev/stdin')).toBe('. "$BASH_ENV"');
    expect(assignedScript('ENV+=x')).toBe('. "$ENV"');
  });

  it("reads an array's elements, quotes removed, each as a prompt (or PROMPT_COMMAND's in its own eval)", () => {
    expect(assignedScript("PS4=('$(rm y)' b)")).toBe(
      ": <<SKEIN_EXPANDED\n('$(rm y)' b)\nSKEIN_EXPANDED\n: <<SKEIN_EXPANDED\n$(rm y)\nSKEIN_EXPANDED",
    );
    expect(assignedScript('PROMPT_COMMAND=([1]="rm \\"x\\"" $\'rm\\x20z\')')).toBe(
      ["eval '([1]=\"rm \\\"x\\\"\" $'\\''rm\\x20z'\\'')'", 'eval \'rm "x"\'', "eval 'rm z'"].join('\n'),
    );
    // A prompt that can run nothing (no substitution) gives no script.
    expect(assignedScript('PS4=(a\\ b # c\n d)')).toBeUndefined();
  });

  it("finds mapfile's callback and a nameref's code variable", () => {
    expect(laterScripts(['mapfile', '-C', 'rm x', '-c', '1', 'a'])).toEqual(['rm x']);
    expect(laterScripts(['readarray', '-tCrm', 'a'])).toEqual(['rm']);
    expect(laterScripts(['declare', '-n', 'p=PS4'])).toEqual(['eval "$PS4"']);
    expect(laterScripts(['declare', '-n', 'p=arr'])).toEqual([]);
  });
});
