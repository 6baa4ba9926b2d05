/**
 * Wrappers the gate must read through, live: the holes that sorting the shell-wrappers mutants found (issue
 * 10, docs/quality.md). A real runtime and a sandboxed bash, an allowing default with one deny rule on rm, and
 * a file in the workspace that each attack tries to remove through a wrapper bash or coreutils would run it
 * with. Each was allowed before the fix (the gate judged other words than the program runs); the keep file
 * must survive every one, and a canary that one attack writes through the same wrapper must never appear.
 */
import { existsSync } from 'node:fs';
import { attack, expectNoCanary, keepFileScene, keepsFile, outcome, reportAttacks, stillRuns } from './support.ts';

const POLICY = { default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } };

const scene = keepFileScene(POLICY);
reportAttacks('wrappers');
const exec = (command: string) => scene.exec(command);

describe('rm behind a wrapper the gate used to misread', () => {
  keepsFile(scene, 'wrapper', [
    // getopt takes an unambiguous prefix of a long option: --u is --unset, which takes a value.
    'env --u HOME rm -f keep.txt',
    // GNU env sets every word holding `=`, not only shell names.
    'env 1A=1 rm -f keep.txt',
    // env -S splits its string into the argv.
    "env -S'rm -f' keep.txt",
    // bash - reads the script from stdin; bash -c + runs the word after the lone +.
    'echo rm -f keep.txt | bash -',
    'bash -c + "rm -f keep.txt"',
    // xargs --replace takes its value only after =: here it replaces {} and runs rm.
    'echo x | xargs --replace rm -f keep.txt',
  ]);

  attack('wrapper', 'a canary written through env --u and an rm in the same line', async () => {
    const { halves, path } = scene.c;
    const command = `env --u HOME rm -f keep.txt; printf %s%s ${halves[0]} ${halves[1]} > ${path}`;
    expect(outcome(await exec(command))).toBe('permission_denied');
    expect(existsSync(scene.keep)).toBe(true);
    await expectNoCanary(scene.rt, scene.c);
  });

  // Found by a review (3 December): the glob check on a program's name ran on the command line's first word
  // only, so the program a wrapper runs could be a glob (bash expands it to /bin/rm before the wrapper starts);
  // and builtins that evaluate an array subscript in a variable name ran a command hidden in a quoted string.
  keepsFile(scene, 'wrapper', [
    'nice /bin/r? -f keep.txt',
    'command /bin/r? -f keep.txt',
    'echo keep.txt | xargs /bin/r?',
    'find . -name keep.txt -exec /bin/r? {} +',
    "test -v 'a[$(rm -f keep.txt)]'",
    "printf -v 'a[$(rm -f keep.txt)]' %s x",
    "echo y | read 'a[$(rm -f keep.txt)]'",
    "nice printf -v 'a[`rm -f keep.txt`]' %s x",
    "declare 'a[$(rm -f keep.txt)]=1'",
    "unset 'a[$(rm -f keep.txt)]'",
    // Code bash runs later from a string (shell-later.ts), and builtins that run what the gate cannot see.
    "trap 'rm -f keep.txt' RETURN",
    "PS4='$(rm -f keep.txt)'; set -x; true",
    "export PROMPT_COMMAND='rm -f keep.txt'",
    'hash -p /bin/rm ls; ls -f keep.txt',
    "history -s 'rm -f keep.txt'; fc -s",
  ]);

  // Found 5 December: tree-sitter-bash puts the `| sh` of `cat <<EOF | sh` inside the here-doc, so the lines
  // sh reads were never split (and a bare cat, or tee, between a writer and a shell passed its script unread).
  keepsFile(scene, 'wrapper', [
    'cat <<EOF | sh\nrm -f keep.txt\nEOF',
    'cat <<EOF | tee /dev/null | bash\nrm -f keep.txt\nEOF',
    "cat <<< 'rm -f keep.txt' | sh",
    "echo 'rm -f keep.txt' | cat | sh",
    "echo 'rm -f keep.txt' | (sh)",
    // A script file naming a descriptor reads the same text.
    "bash /dev/stdin <<< 'rm -f keep.txt'",
    "source /dev/stdin <<< 'rm -f keep.txt'",
    "echo 'rm -f keep.txt' | sh /dev/fd/0",
  ]);

  // Found by an audit (5 December), each run by bash while the gate allowed it: a compound command behind `!`,
  // `time` or `coproc`, here-docs hung on a list or negation, a compound statement's input, a reader behind a
  // wrapper, a shell string or a function, a bare exec's here-string, a literal through `head`, xargs (-0 too),
  // and a name in a subscript whose value bash evaluates (a second audit's cases after the last four).
  keepsFile(scene, 'wrapper', [
    '! { rm -f keep.txt; }',
    'time { rm -f keep.txt; }',
    'ls && sh <<EOF\nrm -f keep.txt\nEOF',
    '! cat <<EOF | sh\nrm -f keep.txt\nEOF',
    "if true; then sh; fi <<<'rm -f keep.txt'",
    "env sh <<<'rm -f keep.txt'",
    "bash -c 'cat | sh' <<<'rm -f keep.txt'",
    "f(){ sh; }; f <<<'rm -f keep.txt'",
    "exec <<<'rm -f keep.txt'",
    "echo 'rm -f keep.txt' | head -1 | sh",
    'echo rm -f keep.txt | xargs env',
    "x='a[$(rm -f keep.txt)]'; unset 'arr[x]'",
    "yes 'rm -f keep.txt' | head -1 | sh",
    "xargs -0 sh -c <<<'nice rm -f keep.txt'",
    "exec -a x <<<'rm -f keep.txt'",
    // A third audit's: a leading `0<` read as a program `0`, an unquoted here-doc's escapes, xargs batches.
    '0</dev/null rm -f keep.txt',
    'sh <<EOF\nr\\\\m -f keep.txt\nEOF',
    "xargs -n1 sh -c <<<\"'echo hi' 'rm -f keep.txt'\"",
    // A fourth audit's: a command table write, words after a here-doc's delimiter, `!` before a redirect's words.
    'BASH_CMDS[ls]=/bin/rm; ls -f keep.txt',
    'nice <<EOF rm -f keep.txt\nhi\nEOF',
    '! nice >/dev/null rm -f keep.txt',
  ]);

  attack('wrapper', 'a canary written by the lines of a here-doc piped into sh', async () => {
    const { halves, path } = scene.c;
    const command = `cat <<EOF | sh\nrm -f keep.txt\nprintf %s%s ${halves[0]} ${halves[1]} > ${path}\nEOF`;
    expect(outcome(await exec(command))).toBe('permission_denied');
    expect(existsSync(scene.keep)).toBe(true);
    await expectNoCanary(scene.rt, scene.c);
  });

  attack('wrapper', 'a function that starts itself in the background (a fork bomb, cut short)', async () => {
    const { halves, path } = scene.c;
    // The return ends it after the canary; a gate that let it through would run the printf.
    const command = `f(){ printf %s%s ${halves[0]} ${halves[1]} > ${path}; return; f & f; }; f`;
    expect(outcome(await exec(command))).toBe('permission_denied');
    await expectNoCanary(scene.rt, scene.c);
  });

  stillRuns(scene, 'still runs the same wrappers around an allowed command (control group)', [
    'env --u HOME ls keep.txt',
    'echo ls keep.txt | bash -',
    'env 1A=1 ls keep.txt',
    'nice ls keep.txt',
    "printf -v a '%s' x; ls keep.txt",
  ]);
});
