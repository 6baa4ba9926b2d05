/**
 * The whole split of each shell construct the gate reads (beside shell-split-whole.test.ts): aliases, tests
 * and arithmetic, substitutions in here-docs, globbed command names, escapes, declarations and `$"…"`. Each
 * expected split was checked against what bash 5.2 runs for the input.
 */
import type { ShellSplit } from '../../../machines/permission/shell-words.ts';
import { shellSplitter } from '../../support/permission-fixtures.ts';

const split = async (src: string) => (await shellSplitter())(src);

const WHOLE: [string, ShellSplit][] = [
  [
    "alias ll='rm -rf x' la=ls",
    {
      commands: [
        {
          kind: 'command',
          text: 'alias ll=rm -rf x la=ls',
          forms: ['alias ll=rm -rf x la=ls'],
          argv: ['alias', 'll=rm -rf x', 'la=ls'],
        },
        { kind: 'command', text: 'rm -rf x', forms: ['rm -rf x'], argv: ['rm', '-rf', 'x'], via: 'alias' },
        { kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'], via: 'alias' },
      ],
      unsafe: [],
    },
  ],
  [
    'alias ll',
    { commands: [{ kind: 'command', text: 'alias ll', forms: ['alias ll'], argv: ['alias', 'll'] }], unsafe: [] },
  ],
  [
    '[[ -f x ]]',
    {
      commands: [{ kind: 'command', text: '[[ -f x ]]', forms: ['[[ -f x ]]'], argv: ['[[', '-f', 'x', ']]'] }],
      unsafe: [],
    },
  ],
  [
    '[ -f x ]',
    { commands: [{ kind: 'command', text: '[ -f x ]', forms: ['[ -f x ]'], argv: ['[', '-f', 'x', ']'] }], unsafe: [] },
  ],
  [
    '((x++))',
    { commands: [{ kind: 'command', text: '((x++))', forms: ['((x++))'], argv: ['((x++))'] }], unsafe: ['((x++))'] },
  ],
  [
    'for ((i=0;i<3;i++)); do ls; done',
    {
      commands: [
        { kind: 'command', text: 'i=0', forms: ['i=0'], argv: ['i=0'] },
        { kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'] },
      ],
      unsafe: ['for ((i=0;i<3;i++)); do ls; done'],
    },
  ],
  [
    'cat <<EOF\n`touch f`\nEOF',
    {
      commands: [
        { kind: 'command', text: 'cat', forms: ['cat'], argv: ['cat'] },
        { kind: 'command', text: 'touch f', forms: ['touch f'], argv: ['touch', 'f'], via: 'here-doc' },
      ],
      unsafe: ['`touch f`'],
    },
  ],
  // A body line starting with an escaped backtick: tree-sitter-bash reads the body as words of the command (and
  // reports it empty), so what a reader of it would run cannot be checked: refused (`sh <<EOF` + it ran rm).
  [
    'cat <<EOF\n\\`touch f\\`\nEOF',
    {
      commands: [{ kind: 'command', text: 'cat', forms: ['cat'], argv: ['cat'] }],
      unsafe: [],
      parseError:
        'the here-doc <<EOF has a body tree-sitter-bash reads as words of the command, so the check cannot read ' +
        'it as bash does; start its first line with another character, or write the text with file.write',
    },
  ],
  [
    '/???/r? -rf x',
    {
      commands: [{ kind: 'command', text: 'r? -rf x', forms: ['r? -rf x', '/???/r? -rf x'], argv: ['r?', '-rf', 'x'] }],
      unsafe: ['/???/r?'],
    },
  ],
  ["'*' a", { commands: [{ kind: 'command', text: '* a', forms: ['* a'], argv: ['*', 'a'] }], unsafe: [] }],
  // A quoted piece before the glob: the star still globs (bash runs whatever l* matches).
  ['"l"* x', { commands: [{ kind: 'command', text: 'l* x', forms: ['l* x'], argv: ['l*', 'x'] }], unsafe: ['"l"*'] }],
  [
    'r[m] x',
    {
      commands: [{ kind: 'command', text: 'r[m] x', forms: ['r[m] x'], argv: [] }],
      unsafe: [],
      parseError: 'syntax error at line 1, column 1: unexpected "r[m] x"',
    },
  ],
  ['l\\s', { commands: [{ kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'] }], unsafe: [] }],
  [
    'echo "a\\"b\\$c\\`d\\\\e\\\nf"',
    {
      commands: [
        { kind: 'command', text: 'echo a"b$c`d\\ef', forms: ['echo a"b$c`d\\ef'], argv: ['echo', 'a"b$c`d\\ef'] },
      ],
      unsafe: [],
    },
  ],
  [
    'echo a\\ b',
    { commands: [{ kind: 'command', text: 'echo a b', forms: ['echo a b'], argv: ['echo', 'a b'] }], unsafe: [] },
  ],
  [
    'x=1 y=2 z',
    { commands: [{ kind: 'command', text: 'x=1 y=2 z', forms: ['x=1 y=2 z', 'z'], argv: ['z'] }], unsafe: [] },
  ],
  [
    'declare -x A=1',
    {
      commands: [
        { kind: 'command', text: 'declare -x A=1', forms: ['declare -x A=1'], argv: ['declare', '-x', 'A=1'] },
      ],
      unsafe: [],
    },
  ],
  [
    'unset -f g',
    {
      commands: [{ kind: 'command', text: 'unset -f g', forms: ['unset -f g'], argv: ['unset', '-f', 'g'] }],
      unsafe: [],
    },
  ],
  [
    'export A=$(id)',
    {
      commands: [
        { kind: 'command', text: 'export A=$(id)', forms: ['export A=$(id)'], argv: ['export', 'A=$(id)'] },
        { kind: 'command', text: 'id', forms: ['id'], argv: ['id'] },
      ],
      unsafe: ['$(id)'],
    },
  ],
  [
    '$"rm" -rf /',
    {
      commands: [{ kind: 'command', text: 'rm -rf /', forms: ['rm -rf /'], argv: ['rm', '-rf', '/'] }],
      unsafe: ['$"rm"'],
    },
  ],
  [
    'r$"m" -rf /',
    {
      commands: [{ kind: 'command', text: 'rm -rf /', forms: ['rm -rf /'], argv: ['rm', '-rf', '/'] }],
      unsafe: ['$"m"'],
    },
  ],
  ['ls $"x"', { commands: [{ kind: 'command', text: 'ls x', forms: ['ls x'], argv: ['ls', 'x'] }], unsafe: ['$"x"'] }],
  [
    'echo $ "x"',
    { commands: [{ kind: 'command', text: 'echo $ x', forms: ['echo $ x'], argv: ['echo', '$', 'x'] }], unsafe: [] },
  ],
  [
    'echo \\\ntouch x',
    {
      commands: [{ kind: 'command', text: 'echo touch x', forms: ['echo touch x'], argv: ['echo', 'touch', 'x'] }],
      unsafe: [],
    },
  ],
  [
    "echo $'\\x72m'",
    { commands: [{ kind: 'command', text: 'echo rm', forms: ['echo rm'], argv: ['echo', 'rm'] }], unsafe: [] },
  ],
  [
    '\\rm -rf x',
    { commands: [{ kind: 'command', text: 'rm -rf x', forms: ['rm -rf x'], argv: ['rm', '-rf', 'x'] }], unsafe: [] },
  ],
];

describe('splitShell: whole splits of names, tests and escapes', () => {
  it.each(WHOLE)('%j', async (src, expected) => {
    expect(await split(src)).toEqual(expected);
  });
});
