/**
 * The scripts a command feeds a shell (here-strings, here-docs, `echo … |`), what wrappers run and the
 * assignments they pass, redirect targets and pipeline forms: whole splits, written for the mutants that
 * survived in that part of shell-parse.ts (docs/quality.md). Each expected split is what bash 5.2 runs: the
 * here-string descriptor and echo's option words were gate holes (bash ran rm; the gate judged `bash 0` and
 * `-e rm -rf /`), and they are pinned at the decision too.
 */
import type { ShellSplit, ShellSubCommand } from '../../../machines/permission/shell-words.ts';
import { decideTerminal, merged, shellSplitter } from '../../support/permission-fixtures.ts';

const split = async (src: string) => (await shellSplitter())(src);
const cmd = (text: string, argv: string[], via?: string, forms = [text]): ShellSubCommand =>
  via === undefined ? { kind: 'command', text, forms, argv } : { kind: 'command', text, forms, argv, via };
const pipe = (text: string, forms = [text]): ShellSubCommand => ({ kind: 'pipeline', text, forms, argv: [] });
const redirect = (text: string): ShellSubCommand => ({ kind: 'redirect', text, forms: [text], argv: [] });
const whole = (commands: ShellSubCommand[], unsafe: string[] = []): ShellSplit => ({ commands, unsafe });

const RM = ['rm', 'x'];

describe('splitShell: scripts fed to a shell on stdin', () => {
  it.each<[string, ShellSplit]>([
    ['sh <<< "rm x"', whole([cmd('sh', ['sh']), cmd('rm x', RM, 'sh <<')])],
    // `0<<<` is the here-string's descriptor, not an argument: bash reads its script from it.
    ['bash 0<<< "rm x"', whole([cmd('bash', ['bash']), cmd('rm x', RM, 'bash <<')])],
    ['bash <<EOF\nrm x\nEOF', whole([cmd('bash', ['bash']), cmd('rm x', RM, 'bash <<')])],
    // Not a shell, or a shell with a script file (`0` with a blank before `<<<` is one): no script is read. But a
    // script file named by digits alone may be a descriptor (`cd /dev/fd && bash 0 <<<…` runs the here-string).
    ['cat <<< "rm x"', whole([cmd('cat', ['cat'])])],
    ['cat 0<<< x', whole([cmd('cat', ['cat'])])],
    ['bash 0 <<< "rm x"', whole([cmd('bash 0', ['bash', '0']), cmd('rm x', RM, 'bash <<')])],
    ['bash x<<< "rm x"', whole([cmd('bash x', ['bash', 'x'])])],
  ])('%j', async (source, expected) => {
    expect(await split(source)).toEqual(expected);
  });
});

describe('splitShell: what wrappers and aliases run', () => {
  it.each<[string, ShellSplit]>([
    [
      'sudo env rm x',
      whole([
        cmd('sudo env rm x', ['sudo', 'env', 'rm', 'x']),
        cmd('env rm x', ['env', 'rm', 'x'], 'sudo'),
        cmd('rm x', RM, 'sudo > env'),
      ]),
    ],
    [
      'sudo A=1 B=2 rm x',
      whole([
        cmd('sudo A=1 B=2 rm x', ['sudo', 'A=1', 'B=2', ...RM]),
        cmd('A=1 B=2 rm x', RM, 'sudo', ['A=1 B=2 rm x', 'rm x']),
      ]),
    ],
    [
      'sudo AB_1=x rm x',
      whole([
        cmd('sudo AB_1=x rm x', ['sudo', 'AB_1=x', ...RM]),
        cmd('AB_1=x rm x', RM, 'sudo', ['AB_1=x rm x', 'rm x']),
      ]),
    ],
    // nice runs a program named A=1 (no assignments before nice's command): the word is the command.
    ['nice A=1', whole([cmd('nice A=1', ['nice', 'A=1']), cmd('A=1', ['A=1'], 'nice')])],
    ['alias ll="rm x" y', whole([cmd('alias ll=rm x y', ['alias', 'll=rm x', 'y']), cmd('rm x', RM, 'alias')])],
    // `alias =rm` is refused by bash (invalid alias name) and defines nothing.
    ['alias =rm', whole([cmd('alias =rm', ['alias', '=rm'])])],
  ])('%j', async (source, expected) => {
    expect(await split(source)).toEqual(expected);
  });
});

describe('splitShell: pipelines and the scripts echo feeds a shell', () => {
  it.each<[string, ShellSplit]>([
    ['ls | wc', whole([cmd('ls', ['ls']), cmd('wc', ['wc']), pipe('ls | wc')])],
    [
      'echo -n -e rm x | sh',
      whole([
        cmd('echo -n -e rm x', ['echo', '-n', '-e', ...RM]),
        cmd('sh', ['sh']),
        pipe('echo -n -e rm x | sh'),
        cmd('rm x', RM, 'echo | sh'),
      ]),
    ],
    // Only leading option words are echo's: `echo rm -n` prints "rm -n".
    [
      'echo rm -n | sh',
      whole([
        cmd('echo rm -n', ['echo', 'rm', '-n']),
        cmd('sh', ['sh']),
        pipe('echo rm -n | sh'),
        cmd('rm -n', ['rm', '-n'], 'echo | sh'),
      ]),
    ],
    [
      'echo -e "ls\\nrm x" | sh',
      whole([
        cmd('echo -e ls\\nrm x', ['echo', '-e', 'ls\\nrm x']),
        cmd('sh', ['sh']),
        pipe('echo -e ls\\nrm x | sh'),
        cmd('ls', ['ls'], 'echo | sh'),
        cmd('rm x', RM, 'echo | sh'),
      ]),
    ],
    [
      'printf "rm x" | sudo bash',
      whole([
        cmd('printf rm x', ['printf', 'rm x']),
        cmd('sudo bash', ['sudo', 'bash']),
        cmd('bash', ['bash'], 'sudo'),
        pipe('printf rm x | sudo bash', ['printf rm x | sudo bash', 'printf rm x | bash']),
        cmd('rm x', RM, 'printf | sudo'),
      ]),
    ],
    // A stage with a redirect is still a stage.
    [
      'echo rm x 2>/dev/null | sh',
      whole([
        cmd('echo rm x', ['echo', ...RM]),
        cmd('sh', ['sh']),
        pipe('echo rm x | sh'),
        cmd('rm x', RM, 'echo | sh'),
      ]),
    ],
    [
      'echo x | sudo A=1 B=2 nice rm',
      whole([
        cmd('echo x', ['echo', 'x']),
        cmd('sudo A=1 B=2 nice rm', ['sudo', 'A=1', 'B=2', 'nice', 'rm']),
        cmd('A=1 B=2 nice rm', ['nice', 'rm'], 'sudo', ['A=1 B=2 nice rm', 'nice rm']),
        cmd('rm', ['rm'], 'sudo > nice'),
        pipe('echo x | sudo A=1 B=2 nice rm', ['echo x | sudo A=1 B=2 nice rm', 'echo x | rm']),
      ]),
    ],
    [
      'echo rm x | env A=1 sh',
      whole([
        cmd('echo rm x', ['echo', ...RM]),
        cmd('env A=1 sh', ['env', 'A=1', 'sh']),
        cmd('A=1 sh', ['sh'], 'env', ['A=1 sh', 'sh']),
        pipe('echo rm x | env A=1 sh', ['echo rm x | env A=1 sh', 'echo rm x | sh']),
        cmd('rm x', RM, 'echo | env'),
      ]),
    ],
  ])('%j', async (source, expected) => {
    expect(await split(source)).toEqual(expected);
  });
});

describe('splitShell: pipeline stages that are not simple commands, and the innermost form', () => {
  it.each<[string, ShellSplit]>([
    // A subshell stage is not a simple command: what it writes is not known as `echo`'s is. The literal texts in
    // it are judged as the script (deny rules see them) and a person decides what the stage made of them; the
    // pipeline names the stage by its text, for the deny rules on pipelines.
    [
      '(echo rm x) | sh',
      whole(
        [cmd('echo rm x', ['echo', ...RM]), cmd('sh', ['sh']), pipe('(echo rm x) | sh'), cmd('rm x', RM, 'pipe | sh')],
        ['(echo rm x)'],
      ),
    ],
    [
      '(echo rm x) 2>/dev/null | sh',
      whole(
        [
          cmd('echo rm x', ['echo', ...RM]),
          cmd('sh', ['sh']),
          pipe('(echo rm x) 2>/dev/null | sh'),
          cmd('rm x', RM, 'pipe | sh'),
        ],
        ['(echo rm x) 2>/dev/null'],
      ),
    ],
    [
      'echo x | nice A=1',
      whole([
        cmd('echo x', ['echo', 'x']),
        cmd('nice A=1', ['nice', 'A=1']),
        cmd('A=1', ['A=1'], 'nice'),
        pipe('echo x | nice A=1', ['echo x | nice A=1', 'echo x | A=1']),
      ]),
    ],
    // A=1 after the program is its argument, not an assignment.
    [
      'echo x | nice rm A=1 y',
      whole([
        cmd('echo x', ['echo', 'x']),
        cmd('nice rm A=1 y', ['nice', 'rm', 'A=1', 'y']),
        cmd('rm A=1 y', ['rm', 'A=1', 'y'], 'nice'),
        pipe('echo x | nice rm A=1 y', ['echo x | nice rm A=1 y', 'echo x | rm A=1 y']),
      ]),
    ],
    // An unquoted glob in the name runs whatever it matches: unsafe. Quoted, it is a plain name.
    ['r* x', { commands: [cmd('r* x', ['r*', 'x'])], unsafe: ['r*'] }],
    ["'r*' x", whole([cmd('r* x', ['r*', 'x'])])],
    // Two runs (find's -exec and -delete): no single innermost command, so the pipeline keeps its one form.
    [
      'echo x | find . -exec rm {} \\; -delete',
      whole([
        cmd('echo x', ['echo', 'x']),
        cmd('find . -exec rm {} ; -delete', ['find', '.', '-exec', 'rm', '{}', ';', '-delete']),
        cmd('rm {}', ['rm', '{}'], 'find -exec'),
        cmd('rm -f {}', ['rm', '-f', '{}'], 'find -delete'),
        pipe('echo x | find . -exec rm {} ; -delete'),
      ]),
    ],
    ['nice 1A=1 x', whole([cmd('nice 1A=1 x', ['nice', '1A=1', 'x']), cmd('1A=1 x', ['1A=1', 'x'], 'nice')])],
  ])('%j', async (source, expected) => {
    expect(await split(source)).toEqual(expected);
  });

  it('keeps the assignments of a command whose only word expands past the limit', async () => {
    expect(await split('A=1 B=2 {1..300}')).toEqual({
      commands: [{ kind: 'command', text: 'A=1 B=2', forms: ['A=1 B=2'], argv: [] }],
      unsafe: [],
      parseError: 'a brace expansion in "A=1 B=2 {1..300}" has more than 256 results',
    });
  });

  it('counts a script fed on stdin as one level of nesting', async () => {
    const sudos = (n: number) => Array.from({ length: n }, () => 'sudo').join(' ');
    expect((await split(`bash <<< "${sudos(7)} rm x"`)).parseError).toBeUndefined();
    expect((await split(`bash <<< "${sudos(8)} rm x"`)).parseError).toBe('commands are nested more than 8 levels deep');
    expect((await split(`${sudos(8)} rm x`)).parseError).toBeUndefined();
  });

  it('refuses a brace expansion past its limit in the words after a redirect target', async () => {
    expect((await split('rm >/dev/null {1..300}')).parseError).toBe(
      'a brace expansion in "rm" has more than 256 results',
    );
  });
});

describe('splitShell: redirect targets', () => {
  it.each<[string, ShellSplit]>([
    ['> out', whole([redirect('> out')])],
    ['ls >&2x', whole([cmd('ls', ['ls']), redirect('>& 2x')])],
    ['ls >&x2', whole([cmd('ls', ['ls']), redirect('>& x2')])],
    // `>&10` duplicates descriptor 10 (bash: "10: Bad file descriptor"); `> 2` writes a file named 2.
    ['ls >&10', whole([cmd('ls', ['ls'])])],
    ['ls > 2', whole([cmd('ls', ['ls']), redirect('> 2')])],
    ['cat <&3-', whole([cmd('cat', ['cat'])])],
    ['ls 2>&-', whole([cmd('ls', ['ls'])])],
  ])('%j', async (source, expected) => {
    expect(await split(source)).toEqual(expected);
  });
});

describe('splitShell: numbers beside redirects, and a redirect alone as a pipeline stage', () => {
  // A number is a descriptor only when a redirect touches it; at the end of the input nothing follows it.
  it.each<[string, ShellSplit]>([
    ['sleep 1', whole([cmd('sleep 1', ['sleep', '1'])])],
    ['kill -9 1234', whole([cmd('kill -9 1234', ['kill', '-9', '1234'])])],
    // A stage that is only a redirect has no command in it (tree-sitter-bash: a statement without a body).
    ['>x | cat', whole([redirect('> x'), cmd('cat', ['cat']), pipe('>x | cat')])],
  ])('%j', async (source, expected) => {
    expect(await split(source)).toEqual(expected);
  });

  it('refuses a number touching a process substitution: bash reads one word (0/dev/fd/63), no descriptor', async () => {
    for (const source of ['echo 0<(ls)', 'echo 0>(ls)']) {
      expect((await split(source)).parseError).toMatch(/^"0" and "[<>]\(ls\)" in .* touch with no blank/);
    }
  });
});

describe('the gate sees the script bash reads', () => {
  const policy = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });
  it.each(['bash 0<<< "rm -rf /"', 'echo -n -e rm -rf / | sh', 'echo -E -n rm -rf / | bash'])(
    'denies %s (bash runs rm)',
    async (command) => {
      expect((await decideTerminal(policy, command)).outcome).toBe('deny');
    },
  );
});
