/**
 * Pipelines: the script echo or printf writes into a shell, the stage that writes it read through its wrappers,
 * the innermost form of each stage, and the nesting a piped script counts. Whole splits, written for the
 * mutants that survived in handlePipeline, innermostArgv and canonicalArgv (docs/quality.md). Two gate holes
 * came out of sorting them, pinned at the decision below: escapes echo -e and printf decode (`printf 'rm\x20x'
 * | sh` runs rm; the split read "rmx20x"), and a writer behind a wrapper (`sudo echo 'rm x' | sh` went unread).
 */
import type { ShellSplit, ShellSubCommand } from '../../../machines/permission/shell-words.ts';
import { decideTerminal, merged, shellSplitter } from '../../support/permission-fixtures.ts';

const split = async (src: string) => (await shellSplitter())(src);
const cmd = (text: string, argv: string[], via?: string, forms = [text]): ShellSubCommand =>
  via === undefined ? { kind: 'command', text, forms, argv } : { kind: 'command', text, forms, argv, via };
const pipe = (text: string, forms = [text]): ShellSubCommand => ({ kind: 'pipeline', text, forms, argv: [] });
const whole = (commands: ShellSubCommand[], unsafe: string[] = []): ShellSplit => ({ commands, unsafe });
const sudos = (n: number) => Array.from({ length: n }, () => 'sudo').join(' ');

describe('splitShell: the script echo and printf write into a shell', () => {
  it.each<[string, ShellSplit]>([
    // Only option words made of n, e and E, whole, are echo's.
    [
      'echo a-n rm x | sh',
      whole([
        cmd('echo a-n rm x', ['echo', 'a-n', 'rm', 'x']),
        cmd('sh', ['sh']),
        pipe('echo a-n rm x | sh'),
        cmd('a-n rm x', ['a-n', 'rm', 'x'], 'echo | sh'),
      ]),
    ],
    [
      'echo -nx rm | sh',
      whole([
        cmd('echo -nx rm', ['echo', '-nx', 'rm']),
        cmd('sh', ['sh']),
        pipe('echo -nx rm | sh'),
        cmd('-nx rm', ['-nx', 'rm'], 'echo | sh'),
      ]),
    ],
    // printf has no option words here: `-e` is its format.
    [
      'printf -e rm | sh',
      whole([
        cmd('printf -e rm', ['printf', '-e', 'rm']),
        cmd('sh', ['sh']),
        pipe('printf -e rm | sh'),
        cmd('-e rm', ['-e', 'rm'], 'printf | sh'),
      ]),
    ],
    // A writer behind a wrapper writes the same script; the pipeline's innermost form names it.
    [
      'sudo echo rm x | sh',
      whole([
        cmd('sudo echo rm x', ['sudo', 'echo', 'rm', 'x']),
        cmd('echo rm x', ['echo', 'rm', 'x'], 'sudo'),
        cmd('sh', ['sh']),
        pipe('sudo echo rm x | sh', ['sudo echo rm x | sh', 'echo rm x | sh']),
        cmd('rm x', ['rm', 'x'], 'echo | sh'),
      ]),
    ],
    // Escapes a shell reads as written (`r\m` is rm) are still decoded by echo under xpg_echo: a person decides.
    [
      'echo "r\\m x" | sh',
      whole(
        [
          cmd('echo r\\m x', ['echo', 'r\\m x']),
          cmd('sh', ['sh']),
          pipe('echo r\\m x | sh'),
          cmd('rm x', ['rm', 'x'], 'echo | sh'),
        ],
        ['echo r\\m x'],
      ),
    ],
    [
      'printf "rm\\x20x" | sh',
      whole(
        [
          cmd('printf rm\\x20x', ['printf', 'rm\\x20x']),
          cmd('sh', ['sh']),
          pipe('printf rm\\x20x | sh'),
          cmd('rmx20x', ['rmx20x'], 'printf | sh'),
        ],
        ['printf rm\\x20x'],
      ),
    ],
    [
      'printf %s%s r "m x" | sh',
      whole(
        [
          cmd('printf %s%s r m x', ['printf', '%s%s', 'r', 'm x']),
          cmd('sh', ['sh']),
          pipe('printf %s%s r m x | sh'),
          cmd('%s%s r m x', ['%s%s', 'r', 'm', 'x'], 'printf | sh'),
        ],
        ['printf %s%s r m x'],
      ),
    ],
    // echo writes `%` as it is, and `\n` (the one escape the split decodes) asks nobody.
    [
      'echo "ls %\\nls" | sh',
      whole([
        cmd('echo ls %\\nls', ['echo', 'ls %\\nls']),
        cmd('sh', ['sh']),
        pipe('echo ls %\\nls | sh'),
        cmd('ls %', ['ls', '%'], 'echo | sh'),
        cmd('ls', ['ls'], 'echo | sh'),
      ]),
    ],
    [
      '/bin/echo rm x | /bin/sh',
      whole([
        cmd('echo rm x', ['echo', 'rm', 'x']),
        cmd('sh', ['sh']),
        pipe('echo rm x | sh'),
        cmd('rm x', ['rm', 'x'], 'echo | sh'),
      ]),
    ],
  ])('%j', async (source, expected) => {
    expect(await split(source)).toEqual(expected);
  });

  it('counts a script piped into a shell as one level of nesting', async () => {
    expect((await split(`echo "${sudos(7)} rm x" | sh`)).parseError).toBeUndefined();
    expect((await split(`echo "${sudos(8)} rm x" | sh`)).parseError).toBe(
      'commands are nested more than 8 levels deep',
    );
  });
});

describe('splitShell: the innermost form of a pipeline stage', () => {
  it.each<[string, string[]]>([
    // An assignment is the wrapper's only while no word without `=` came before it.
    ['echo x | sudo A=1 rm B=2 y', ['echo x | sudo A=1 rm B=2 y', 'echo x | rm B=2 y']],
    // 1A=1 is no assignment: nice runs a program of that name.
    ['echo x | nice 1A=1 x', ['echo x | nice 1A=1 x', 'echo x | 1A=1 x']],
    ['echo x | sudo AB_1=x rm', ['echo x | sudo AB_1=x rm', 'echo x | rm']],
    ['echo x | sudo /bin/rm x', ['echo x | sudo /bin/rm x', 'echo x | rm x']],
    // At most 8 wrappers are taken off, as many as the split follows.
    [`echo x | ${sudos(9)} rm`, [`echo x | ${sudos(9)} rm`, 'echo x | sudo rm']],
  ])('%j', async (source, forms) => {
    const pipeline = (await split(source)).commands.find((c) => c.kind === 'pipeline');
    expect(pipeline).toEqual(pipe(source, forms));
  });

  it('reads a here-string fed to a shell named by its path', async () => {
    expect(await split('/bin/bash <<< "rm x"')).toEqual(
      whole([cmd('bash', ['bash']), cmd('rm x', ['rm', 'x'], 'bash <<')]),
    );
  });

  it('gives a command outside any wrapper or script no via at all', async () => {
    expect(await split('ls | wc')).toStrictEqual(whole([cmd('ls', ['ls']), cmd('wc', ['wc']), pipe('ls | wc')]));
  });
});

describe('splitShell: a descriptor closed with a blank or quotes', () => {
  // `>& -` and `>&"-"` close stdout as `>&-` does (bash expands the word first): no file is written.
  it.each(['ls >& -', 'ls >&"-"', 'cat <& -'])('%j writes no file', async (source) => {
    const name = source.split(' ')[0]!;
    expect(await split(source)).toEqual(whole([cmd(name, [name])]));
  });
});

describe('splitShell: backticks inside an expansion', () => {
  it('refuses an unpaired backtick inside ${…}', async () => {
    const word = '${x:-`rm}';
    expect(await split(`echo ${word}`)).toEqual({
      commands: [cmd(`echo ${word}`, ['echo', word])],
      unsafe: [word],
      parseError: 'an unpaired backtick in "`rm" could start a command the check cannot see',
    });
  });

  it('counts backticks inside ${…} as one level of nesting', async () => {
    const inside = (n: number) => `echo \${x:-\`${sudos(n)} rm x\`}`;
    expect((await split(inside(7))).parseError).toBeUndefined();
    expect((await split(inside(8))).parseError).toBe('commands are nested more than 8 levels deep');
  });

  // Read once: the quoted substitution by the walk, not a second time as a word's backticks.
  it('splits a quoted substitution inside ${…} once', async () => {
    const word = '${x:-"`ls`"}';
    expect(await split(`echo ${word}`)).toEqual({
      commands: [cmd(`echo ${word}`, ['echo', word]), cmd('ls', ['ls'])],
      unsafe: [word, '`ls`'],
    });
  });
});

describe('splitShell: what runs unseen in assignments, case values and here-docs', () => {
  // `$"…"` is looked up in the locale's catalogue wherever it stands: bash may use other text.
  it.each<[string, ShellSplit]>([
    ['x=$"a"', whole([cmd('x=a', ['x=a'])], ['$"a"'])],
    ['case $"x" in a) ;; esac', whole([], ['$"x"'])],
  ])('%j', async (source, expected) => {
    expect(await split(source)).toEqual(expected);
  });

  it('counts backticks in a here-doc as one level of nesting', async () => {
    const heredoc = (n: number) => `cat <<EOF\n\`${sudos(n)} rm x\`\nEOF`;
    expect((await split(heredoc(7))).parseError).toBeUndefined();
    expect((await split(heredoc(8))).parseError).toBe('commands are nested more than 8 levels deep');
  });
});

describe('splitShell: a line break inside double quotes', () => {
  // tree-sitter-bash leaves it out of both parts of the string; bash keeps it, and bash -c runs two commands.
  it.each<[string, ShellSplit]>([
    [
      'bash -c "ls\nrm x"',
      whole([
        cmd('bash -c ls\nrm x', ['bash', '-c', 'ls\nrm x']),
        cmd('ls', ['ls'], 'bash -c'),
        cmd('rm x', ['rm', 'x'], 'bash -c'),
      ]),
    ],
    ['echo "\na\n"', whole([cmd('echo \na\n', ['echo', '\na\n'])])],
    // A quoted name keeps its line break: no line-break refusal, which is for unquoted ones.
    ['"a\nb" x', whole([cmd('a\nb x', ['a\nb', 'x'])])],
  ])('%j', async (source, expected) => {
    expect(await split(source)).toEqual(expected);
  });
});

describe('splitShell: descriptor 0 before a redirect', () => {
  // tree-sitter-bash reads the 0 of `0<x` as an argument; bash reads a descriptor. `&>` takes none.
  const redirect = (text: string): ShellSubCommand => ({ kind: 'redirect', text, forms: [text], argv: [] });
  it.each<[string, ShellSplit]>([
    ['git push 0</dev/null', whole([cmd('git push', ['git', 'push'])])],
    ['git push 0>&1', whole([cmd('git push', ['git', 'push'])])],
    ['cat 0<x', whole([cmd('cat', ['cat']), redirect('< x')])],
    ['echo 1&>x', whole([cmd('echo 1', ['echo', '1']), redirect('&> x')])],
    ['echo 0 <x', whole([cmd('echo 0', ['echo', '0']), redirect('< x')])],
    ['echo 0 | cat', whole([cmd('echo 0', ['echo', '0']), cmd('cat', ['cat']), pipe('echo 0 | cat')])],
  ])('%j', async (source, expected) => {
    expect(await split(source)).toEqual(expected);
  });

  it.each(['git push 0</dev/null', 'git push 0>&1'])('denies %s under a rule anchored at the end', async (command) => {
    const policy = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^git\\s+push$' }] } } });
    expect((await decideTerminal(policy, command)).outcome).toBe('deny');
  });
});

describe('splitShell: alias definitions', () => {
  // Only the words after the name define aliases: an `=` in the program's path is no definition.
  it('reads no definition in the path of the program', async () => {
    expect(await split('/a=b/alias ll=ls')).toEqual(
      whole([
        cmd('alias ll=ls', ['alias', 'll=ls'], undefined, ['alias ll=ls', '/a=b/alias ll=ls']),
        cmd('ls', ['ls'], 'alias'),
      ]),
    );
  });
});

describe('the gate reads the script a writer pipes into a shell', () => {
  const policy = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });
  it.each(['bash -c "ls\nrm x"', "sudo echo 'rm x' | sh", "command echo 'rm x' | sh", "builtin printf 'rm x' | bash"])(
    'denies %s (bash runs rm)',
    async (command) => {
      expect((await decideTerminal(policy, command)).outcome).toBe('deny');
    },
  );
  it.each([
    "echo -e 'rm\\x20x' | sh",
    "printf 'rm\\x20x' | sh",
    "echo -e 'r\\0155 x' | sh",
    "printf '%s%s' r 'm x' | sh",
  ])('asks a person for %s (what the shell reads is decoded by the writer)', async (command) => {
    expect((await decideTerminal(policy, command)).outcome).toBe('confirm');
  });
});

describe('splitShell: a script reaching a shell through a here-doc, a here-string, cat or tee', () => {
  it.each<[string, ShellSplit]>([
    // tree-sitter-bash nests `| sh` inside the here-doc's redirect; bash pipes cat's output (the body) into sh.
    [
      'cat <<EOF | sh\nrm x\nEOF',
      whole([cmd('cat', ['cat']), cmd('sh', ['sh']), pipe('cat | sh'), cmd('rm x', ['rm', 'x'], 'cat << | sh')]),
    ],
    [
      'cat <<EOF | tee y | sh\nrm x\nEOF',
      whole([
        cmd('cat', ['cat']),
        cmd('tee y', ['tee', 'y']),
        cmd('sh', ['sh']),
        pipe('cat | tee y | sh'),
        cmd('rm x', ['rm', 'x'], 'cat << | sh'),
      ]),
    ],
    [
      "cat - <<< 'rm x' | sh",
      whole([
        cmd('cat -', ['cat', '-']),
        cmd('sh', ['sh']),
        pipe('cat - | sh'),
        cmd('rm x', ['rm', 'x'], 'cat << | sh'),
      ]),
    ],
    [
      "echo 'rm x' | cat | sh",
      whole([
        cmd('echo rm x', ['echo', 'rm x']),
        cmd('cat', ['cat']),
        cmd('sh', ['sh']),
        pipe('echo rm x | cat | sh'),
        cmd('rm x', ['rm', 'x'], 'echo | sh'),
      ]),
    ],
    // A shell inside a compound stage reads the pipe too.
    [
      "echo 'rm x' | (sh)",
      whole([
        cmd('echo rm x', ['echo', 'rm x']),
        cmd('sh', ['sh']),
        pipe('echo rm x | (sh)'),
        cmd('rm x', ['rm', 'x'], 'echo | (sh)'),
      ]),
    ],
    // cat with an option writes other text than the here-string: the here-string is judged as the script, and a
    // person decides what cat made of it.
    [
      "cat -n <<< 'rm x' | sh",
      whole(
        [
          cmd('cat -n', ['cat', '-n']),
          cmd('sh', ['sh']),
          pipe('cat -n | sh'),
          cmd('-n', ['-n'], 'pipe | sh'),
          cmd('rm x', ['rm', 'x'], 'pipe | sh'),
        ],
        ["cat -n <<< 'rm x'"],
      ),
    ],
    // A here-doc's body goes to cat only: `&& sh` reads the terminal.
    ['cat <<EOF && sh\nrm x\nEOF', whole([cmd('cat', ['cat']), cmd('sh', ['sh'])])],
  ])('%j', async (source, expected) => {
    expect(await split(source)).toEqual(expected);
  });

  it('judges a three-stage pipeline after a here-doc once, whole', async () => {
    const got = await split('cat <<EOF | tee y | sh\nls\nEOF');
    expect(got.commands.filter((c) => c.kind === 'pipeline').map((c) => c.text)).toEqual(['cat | tee y | sh']);
  });

  it.each(['cat <<EOF | sh\nrm x\nEOF', "cat <<< 'rm x' | bash", "echo 'rm x' | tee y | sh", "echo 'rm x' | { sh; }"])(
    'the gate denies %j under a deny rule on rm',
    async (command) => {
      const policy = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });
      expect((await decideTerminal(policy, command)).outcome).toBe('deny');
    },
  );
});
