/**
 * Wrapper shapes the gate misread before (sorting the shell-wrappers survivors, 2 December): a long option given
 * by an unambiguous prefix (`env --u HOME rm …`, `runuser --comm 'rm …' root`), runuser's `-u` seen in a value
 * (`runuser -wu root -c …`: `u` is -w's value), and `env -S` words that continue the split string. Each was
 * allowed under an allowing default with a deny rule on `^rm`; what the real programs run is noted by each.
 */
import { unwrapCommand } from '../../../machines/permission/shell-wrappers.ts';
import { readsScriptFromStdin } from '../../../machines/permission/shell-stdin-readers.ts';
import { decideTerminal, merged } from '../../support/permission-fixtures.ts';

const w = (line: string) => unwrapCommand(line.split(' '));
const RM = ['rm', '-rf', '/'];
const denyRm = merged({
  default: 'allow',
  tools: { terminal: { default: 'allow', always_deny: [{ pattern: '^rm' }] } },
});

describe('the gate denies rm behind these wrapper shapes', () => {
  it.each([
    // GNU env 9.1 here: `env --u HOME echo x` runs echo (getopt_long takes --u for --unset).
    'env --u HOME rm -rf /',
    // GNU env 9.1 sets every word with `=`: `env 1A=1 echo x` and `env ./a=1 echo x` run echo.
    'env 1A=1 rm -rf /',
    'env ./a=1 rm -rf /',
    // bash 5.2 defines ls from the variable: `env 'BASH_FUNC_ls%%=() { echo x; }' bash -c ls` prints x.
    "env 'BASH_FUNC_ls%%=() { rm -rf /; }' bash -c ls",
    // GNU env 9.1 reads a lone `-` after its options as -i: `env - echo x` and `env -- - echo x` print x.
    'env - rm -rf /',
    'env -- - rm -rf /',
    'env -u HOME - A=1 rm -rf /',
    // util-linux 2.38 runuser, as root here: each of these ran the echo put in place of rm.
    'runuser --comm "rm -rf /" root',
    'runuser root --comm "rm -rf /"',
    'runuser --us root rm -rf /',
    'runuser -wu root -c "rm -rf /"',
    'runuser -w -u root -c "rm -rf /"',
    'runuser -gusers root -c "rm -rf /"',
    // util-linux 2.38 su, as root here: `su --comm 'echo x' root` and `su --session-command 'echo x' root` run echo.
    'su --comm "rm -rf /" root',
    'su root --comm="rm -rf /"',
    'su --session-command "rm -rf /" root',
    'su --sess "rm -rf /" root',
    'runuser --session-command "rm -rf /" root',
    // GNU findutils 4.9 xargs: --replace, --max-lines and --eof take a value only with `=`; `echo a | xargs
    // --replace echo X{}` prints Xa.
    'xargs --replace rm -rf /',
    'xargs --max-lines rm -rf /',
    'xargs --eof rm -rf /',
  ])('denies %s', async (command) => {
    expect((await decideTerminal(denyRm, command)).outcome, command).toBe('deny');
  });

  // bash 5.2 here: `echo 'echo x' | bash -` (also `bash +`, `sh -`, `bash --norc`, `bash -es foo`) runs echo x, and
  // `bash -c + 'echo x'` (also dash) runs echo x.
  it.each([
    'echo rm -rf / | bash -',
    'echo rm -rf / | bash +',
    'echo rm -rf / | sh -',
    'echo rm -rf / | bash --norc',
    'echo rm -rf / | bash -es foo',
    'echo rm -rf / | bash +s foo',
    'bash -c + "rm -rf /"',
    'sh -c + "rm -rf /"',
  ])('denies %s', async (command) => {
    expect((await decideTerminal(denyRm, command)).outcome, command).toBe('deny');
  });

  // GNU env 9.1: `env -S'echo' hello` prints hello: the words after -S's string are its command's arguments.
  const denyPush = merged({
    default: 'allow',
    tools: { terminal: { default: 'allow', always_deny: [{ pattern: '^git\\s+push' }] } },
  });
  it.each(["env -S'git' push", 'env -S git push --force', "env --split-string='git' push"])(
    'denies %s under a deny rule on git push',
    async (command) => {
      expect((await decideTerminal(denyPush, command)).outcome, command).toBe('deny');
    },
  );
});

describe('unwrapCommand on these shapes', () => {
  it('reads a long option by its unambiguous prefix', () => {
    expect(w('env --u HOME rm -rf /')).toEqual([{ via: 'env', argv: RM }]);
    expect(w('sudo --login rm -rf /')).toEqual([{ via: 'sudo', argv: RM }]);
    expect(w('sudo --login-c c rm -rf /')).toEqual([{ via: 'sudo', argv: RM }]);
    expect(w('sudo --us root rm -rf /')).toEqual([{ via: 'sudo', argv: RM }]);
    expect(w('runuser --us root rm -rf /')).toEqual([{ via: 'runuser', argv: RM }]);
    expect(w('su --comm rm root')).toEqual([{ via: 'su --command', script: 'rm' }]);
    expect(w('su --sess=rm root')).toEqual([{ via: 'su --session-command', script: 'rm' }]);
    // Too short to name one (`--` ends the options; `--=x` is refused by getopt).
    expect(w('env --=x rm')).toEqual([{ via: 'env', argv: ['rm'] }]);
  });

  it("reads runuser's -u only as an option letter, not inside a value", () => {
    expect(w('runuser -wu root -c rm')).toEqual([{ via: 'runuser -c', script: 'rm' }]);
    expect(w('runuser -w -u root -c rm')).toEqual([{ via: 'runuser -c', script: 'rm' }]);
    expect(w('runuser -lu root rm')).toEqual([{ via: 'runuser', argv: ['rm'] }]);
  });

  it('reads env assignments as GNU env does, and an exported bash function as its definition', () => {
    expect(unwrapCommand(['env', '1A=1', 'A=2', 'BASH_FUNC_f%%=() { rm x; }', 'bash'])).toEqual([
      { via: 'env BASH_FUNC', script: 'f() { rm x; }' },
      { via: 'env', argv: ['A=2', 'bash'] },
    ]);
  });

  it("reads one lone - after env's options as -i, and a second as the command (`env - - x` runs -)", () => {
    expect(w('env - rm -rf /')).toEqual([{ via: 'env', argv: RM }]);
    expect(w('env -- - rm -rf /')).toEqual([{ via: 'env', argv: RM }]);
    expect(w('env -i - A=1 rm -rf /')).toEqual([{ via: 'env', argv: ['A=1', ...RM] }]);
    expect(w('env - - rm')).toEqual([{ via: 'env', argv: ['-', 'rm'] }]);
    // Only env's: sudo, nice and exec run a lone - as the command.
    expect(w('sudo - rm')).toEqual([{ via: 'sudo', argv: ['-', 'rm'] }]);
    expect(w('nice - rm')).toEqual([{ via: 'nice', argv: ['-', 'rm'] }]);
    expect(w('exec - rm')).toEqual([{ via: 'exec', argv: ['-', 'rm'] }]);
  });

  it("judges env -S's string with the words after it", () => {
    expect(w('env -S git push')).toEqual([
      { via: 'env -S', script: 'git' },
      { via: 'env', argv: ['push'] },
      { via: 'env -S', script: "git 'push'" },
    ]);
    expect(w("env -Secho it's")).toEqual([
      { via: 'env -S', script: 'echo' },
      { via: 'env', argv: ["it's"] },
      { via: 'env -S', script: "echo 'it'\\''s'" },
    ]);
  });
});

describe('readsScriptFromStdin where options end or -s comes in a cluster', () => {
  it.each([
    [['bash', '-'], true],
    [['bash', '-', 'f'], false],
    [['bash', '--'], true],
    [['bash', '--', 'f'], false],
    [['bash', '+'], true],
    [['bash', '--norc'], true],
    [['bash', '--rcfile', 'r'], true],
    [['bash', '--init-file', 'r', 'f'], false],
    [['bash', '--init-file', 'r'], true],
    [['bash', '--norc', 'f'], false],
    [['bash', '-es', 'foo'], true],
    [['bash', '+s', 'foo'], true],
    [['bash', '-cs', 'x'], false],
  ])('%j: %s', (argv, expected) => {
    expect(readsScriptFromStdin(argv)).toBe(expected);
  });

  it('reads a lone + before the script as an option word', () => {
    expect(w('bash -c + rm')).toEqual([{ via: 'bash -c', script: 'rm' }]);
  });
});
