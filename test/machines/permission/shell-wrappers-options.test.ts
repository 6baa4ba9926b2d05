/**
 * How the wrappers read their option words, pinned case by case where a mutation run (2 December) showed the
 * whole-result tests did not tell a changed reading apart: script options after su's user, `--` and a lone `-`
 * or `+` before a shell's script, assignments only where the wrapper takes them, the words parallel and flock
 * treat specially only for those two. Comments say what the real program does where it was tried here
 * (util-linux 2.38 su/setsid, GNU coreutils 9.1 env/nice, bash 5.2).
 */
import { unwrapCommand } from '../../../machines/permission/shell-wrappers.ts';
import { readsScriptFromStdin } from '../../../machines/permission/shell-stdin-readers.ts';

const w = (line: string) => unwrapCommand(line.split(' '));
const RM = ['rm', '-rf', '/'];

describe('unwrapCommand: option words of the generic wrappers', () => {
  it('reads the word after --split-string=… as a word of the command, not the option value', () => {
    expect(w('env --split-string=rm x')).toEqual([
      { via: 'env --split-string', script: 'rm' },
      { via: 'env', argv: ['x'] },
      { via: 'env --split-string', script: "rm 'x'" },
    ]);
  });

  it('reads a long option of a wrapper without a table of long options as taking no value', () => {
    // `setsid --wait echo x` runs echo.
    expect(w('setsid --wait rm -rf /')).toEqual([{ via: 'setsid', argv: RM }]);
  });

  it("reads nice's -5n as digits, then -n with its value", () => {
    // GNU nice refuses `-5n` (invalid adjustment); read as -5 and -n with a value, rm is still what is judged.
    expect(w('nice -5n 3 rm -rf /')).toEqual([{ via: 'nice', argv: RM }]);
  });

  it('reads an exported function only from a variable named BASH_FUNC_<name>%%', () => {
    expect(unwrapCommand(['env', 'XBASH_FUNC_f%%=x', 'bash'])).toEqual([{ via: 'env', argv: ['bash'] }]);
  });

  it('takes VAR=value words only for the wrappers that take them', () => {
    // watch hands its words to sh -c, assignment and all.
    expect(w('watch A=1 rm -rf /')).toEqual([{ via: 'watch', script: 'A=1 rm -rf /' }]);
    expect(w('env LANG=C rm')).toEqual([{ via: 'env', argv: ['LANG=C', 'rm'] }]);
  });

  it("reads parallel's ::: and flock's -c only for parallel and flock", () => {
    expect(w('nice echo ::: a')).toEqual([{ via: 'nice', argv: ['echo', ':::', 'a'] }]);
    expect(w('parallel rm -rf /')).toEqual([{ via: 'parallel', argv: RM }]);
    expect(w('nice -- -c rm')).toEqual([{ via: 'nice', argv: ['-c', 'rm'] }]);
  });

  it('reads a prefix shared by a script option and another as the script option', () => {
    // su refuses `--s` (ambiguous: --session-command, --shell, --supp-group); judging a script judges more.
    expect(w('su --s rm root')).toEqual([{ via: 'su --session-command', script: 'rm' }]);
  });

  it("reads runuser's --user only by its name", () => {
    expect(w('runuser --group g root -c rm')).toEqual([{ via: 'runuser -c', script: 'rm' }]);
  });
});

describe("unwrapCommand: su's options after the user", () => {
  it.each([
    // `su root --command` is refused (option requires an argument).
    ['su root --command', []],
    [
      'su root --command=rm -c ls',
      [
        { via: 'su --command', script: 'rm' },
        { via: 'su -c', script: 'ls' },
      ],
    ],
    ['su root --command -cx', [{ via: 'su --command', script: '-cx' }]],
    // `su root --group -cecho`: the group is -cecho.
    ['su root --group -crm', []],
    // `su root --login -c 'echo x'` and `su root --group=root -c 'echo x'` run echo.
    ['su root --login -c rm', [{ via: 'su -c', script: 'rm' }]],
    ['su root --group=wheel -c rm', [{ via: 'su -c', script: 'rm' }]],
    // `su a-c echo`: the user is a-c.
    ['su a-c rm', []],
    // `su root -c'echo 1' -c 'echo 2'` runs the last; both are judged.
    [
      'su root -crm -c ls',
      [
        { via: 'su -c', script: 'rm' },
        { via: 'su -c', script: 'ls' },
      ],
    ],
    ['su root -c -cx', [{ via: 'su -c', script: '-cx' }]],
  ])('%s', (line, expected) => {
    expect(w(line)).toEqual(expected);
  });
});

describe('unwrapCommand: the words before a shell script', () => {
  it.each([
    ['bash -c -- -x', [{ via: 'bash -c', script: '-x' }]],
    ['bash -c - -x', [{ via: 'bash -c', script: '-x' }]],
    ['bash -c a-b', [{ via: 'bash -c', script: 'a-b' }]],
    ['bash -x script.sh', []],
  ])('%s', (line, expected) => {
    expect(w(line)).toEqual(expected);
  });

  it('reads a script word with a dash in it as the script', () => {
    expect(unwrapCommand(['bash', '-c', 'rm -rf /'])).toEqual([{ via: 'bash -c', script: 'rm -rf /' }]);
  });
});

describe('readsScriptFromStdin: script files and -c', () => {
  it.each([
    [['bash', 'run.sh'], false],
    [['bash', 'my-app.sh'], false],
    [['bash', '-c'], false],
    [['env'], false],
    // `echo 'echo x' | bash - -x`: bash runs the file -x (No such file or directory), not stdin.
    [['bash', '-', '-x'], false],
    // `bash -- -s`: bash runs the file -s.
    [['bash', '--', '-s'], false],
  ])('%j: %s', (argv, expected) => {
    expect(readsScriptFromStdin(argv)).toBe(expected);
  });
});
