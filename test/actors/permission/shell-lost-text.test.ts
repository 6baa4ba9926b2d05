/**
 * Text the parser loses (`shell-lost-text.ts`). tree-sitter-bash drops a lone `-` before an assignment where a
 * command may start: `- 00=` parsed as the assignment `00=`, so a rule learned for `00=` allowed it and a deny
 * rule on `^-` never saw `ls && - 00=`, while bash runs the command `-` (found by a random seed of the
 * permission-patterns property). The split now holds `-` as the command; any other lost text is refused. Each
 * expected split was checked against bash 5.2.15 with a program `-` on PATH (the comment beside it).
 */
import type { Parser } from 'web-tree-sitter';
import { parserFor } from '../../../actors/common/tree-sitter.ts';
import { type LostText, lostText } from '../../../actors/permission/shell-lost-text.ts';
import type { ShellSplit, ShellSubCommand } from '../../../machines/permission/shell-words.ts';
import { decideTerminal, merged, shellSplitter } from '../../support/permission-fixtures.ts';

const split = async (src: string) => (await shellSplitter())(src);
const run = (text: string, argv: string[], forms = [text]): ShellSubCommand => ({ kind: 'command', text, forms, argv });

/** Allows all but what a deny rule on `^-` matches (not an allow-all, so a parse failure denies). */
const denyDash = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^-' }] } } });

let parser: Parser;
beforeAll(async () => {
  parser = await parserFor('bash');
});

function lostIn(src: string): LostText[] {
  const tree = parser.parse(src)!;
  try {
    return lostText(tree, src);
  } finally {
    tree.delete();
  }
}

describe('lostText: what no token of the tree holds', () => {
  it.each<[string, LostText[]]>([
    ['- 00=', [{ index: 0, text: '-' }]],
    ['x=1 - a=1 ls', [{ index: 4, text: '-' }]],
    [
      'ls && - a=1 - b=2',
      [
        { index: 6, text: '-' },
        { index: 12, text: '-' },
      ],
    ],
    ['export - a=1', [{ index: 7, text: '-' }]],
    ['echo "$(- a=1)"', [{ index: 8, text: '-' }]],
    // bash: <a>< b>; tree-sitter-bash skips the escaped blank as whitespace and reads <b>.
    ['echo a \\ b', [{ index: 7, text: '\\' }]],
  ])('%j loses %j', (src, lost) => {
    expect(lostIn(src)).toEqual(lost);
  });

  it.each([
    '-x foo',
    '- b',
    'echo - a=1',
    // Blanks and line continuations separate tokens.
    'echo a \\\n  b\n\tls',
    // A here-doc's lines and a string's text are their nodes' own.
    'cat <<EOF\nhello $x there\nEOF',
    'echo "a $x b" $"c"',
    'ls # a comment',
    '',
  ])('%j loses nothing', (src) => {
    expect(lostIn(src)).toEqual([]);
  });
});

describe('splitShell: a lone - where a command may start is the command bash runs', () => {
  it.each<[string, ShellSplit]>([
    // bash: ran - with <00=>
    ['- 00=', { commands: [run('- 00=', ['-', '00='])], unsafe: [] }],
    // bash: ran - with <>
    ['- ', { commands: [run('-', ['-'])], unsafe: [] }],
    ['-x foo', { commands: [run('-x foo', ['-x', 'foo'])], unsafe: [] }],
    ['-- foo', { commands: [run('-- foo', ['--', 'foo'])], unsafe: [] }],
    ['a=1 - b', { commands: [run('a=1 - b', ['-', 'b'], ['a=1 - b', '- b'])], unsafe: [] }],
    // bash: ran - with <a=1> <ls>
    ['x=1 - a=1 ls', { commands: [run('x=1 - a=1 ls', ['-', 'a=1', 'ls'], ['x=1 - a=1 ls', '- a=1 ls'])], unsafe: [] }],
    ['ls && - 00=', { commands: [run('ls', ['ls']), run('- 00=', ['-', '00='])], unsafe: [] }],
    ['ls\n- 00=', { commands: [run('ls', ['ls']), run('- 00=', ['-', '00='])], unsafe: [] }],
    // bash: ran - with <>, then sets a
    ['-\n a=1', { commands: [run('-', ['-']), run('a=1', ['a=1'])], unsafe: [] }],
    // bash: ran - with <a=1> <-> <b=2>
    ['- a=1 - b=2', { commands: [run('- a=1 - b=2', ['-', 'a=1', '-', 'b=2'])], unsafe: [] }],
    // bash: export: `-': not a valid identifier (and a is exported)
    ['export - a=1', { commands: [run('export - a=1', ['export', '-', 'a=1'])], unsafe: [] }],
    [
      'sudo - a=1',
      {
        commands: [run('sudo - a=1', ['sudo', '-', 'a=1']), { ...run('- a=1', ['-', 'a=1']), via: 'sudo' }],
        unsafe: [],
      },
    ],
    // GNU env 9.1: the first lone - is -i, the second the command.
    [
      'env - - a=1',
      {
        commands: [run('env - - a=1', ['env', '-', '-', 'a=1']), { ...run('- a=1', ['-', 'a=1']), via: 'env' }],
        unsafe: [],
      },
    ],
    // In a substitution; its text as the split quotes it is what was parsed, with the - quoted.
    [
      'echo "$(- a=1)"',
      {
        commands: [run("echo $('-' a=1)", ['echo', "$('-' a=1)"]), run('- a=1', ['-', 'a=1'])],
        unsafe: ["$('-' a=1)"],
      },
    ],
    // In a script a shell runs.
    [
      "bash -c 'ls; - a=1'",
      {
        commands: [
          run('bash -c ls; - a=1', ['bash', '-c', 'ls; - a=1']),
          { ...run('ls', ['ls']), via: 'bash -c' },
          { ...run('- a=1', ['-', 'a=1']), via: 'bash -c' },
        ],
        unsafe: [],
      },
    ],
  ])('%j', async (src, expected) => {
    expect(await split(src)).toEqual(expected);
  });

  it.each(['- 00=', 'ls && - 00=', 'x=1 - a=1 ls', '(- a=1)', 'if - a=1; then :; fi', "bash -c 'ls; - a=1'"])(
    'a deny rule on ^- denies %j',
    async (command) => {
      expect(await decideTerminal(denyDash, command)).toMatchObject({ outcome: 'deny', level: 'deny_rule' });
    },
  );

  it('an allow-list of ls and assignments under default deny no longer allows `ls && - a=1`', async () => {
    const allowList = merged({
      default: 'deny',
      tools: { terminal: { always_allow: [{ pattern: '^ls$' }, { pattern: '^[a-z]+=\\d*$' }] } },
    });
    expect((await decideTerminal(allowList, 'ls && a=1')).outcome).toBe('allow');
    expect(await decideTerminal(allowList, 'ls && - a=1')).toMatchObject({ outcome: 'deny', level: 'global_default' });
  });

  it('a rule learned for `00=` does not allow `- 00=` (the property case)', async () => {
    const learned = (await decideTerminal(merged({}), '00=')).patterns;
    expect(learned).toEqual(['(?-i)^00=$']);
    const p = merged({ tools: { terminal: { always_allow: [{ pattern: learned[0]! }] } } });
    expect((await decideTerminal(p, '00=')).outcome).toBe('allow');
    expect((await decideTerminal(p, '- 00=')).outcome).toBe('confirm');
  });
});

describe('splitShell: other lost text is refused', () => {
  it.each([
    // Arithmetic: the - is no word there, and quoting it would change the expression.
    ['(( - a=1 ))', '"-" at position 3 (0-based) of "(( - a=1 ))"'],
    // bash: <a>< b>
    ['echo a \\ b', '"\\\\" at position 7 (0-based) of "echo a \\ b"'],
  ])('%j', async (src, where) => {
    expect((await split(src)).parseError).toBe(
      `the shell parser lost ${where}: bash reads it, the check would judge the command without it. Quote it, ` +
        'or put it elsewhere in the command',
    );
    expect(await decideTerminal(denyDash, src)).toMatchObject({ outcome: 'deny', level: 'unsafe_shell' });
  });
});
