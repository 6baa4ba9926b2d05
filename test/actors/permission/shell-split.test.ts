/**
 * The whole split of each shell construct the gate reads (commands, forms, argv, via, unsafe, parseError),
 * beside shell-parse.test.ts: redirects, pipelines and the scripts they feed a shell, here-strings and
 * here-docs, aliases, tests, globbed names, escapes, assignments and `$"…"`. Then every refusal the splitter
 * can give, with its message, and the limits at their edges. Each expected split was checked against what
 * bash 5.2 runs for the input.
 */
import { SHELL_LIMITS } from '../../../actors/permission/shell-parse.ts';
import type { ShellSplit } from '../../../machines/permission/shell-words.ts';
import { BYPASS_POLICY, decideTerminal, merged, shellSplitter } from '../../support/permission-fixtures.ts';

const split = async (src: string) => (await shellSplitter())(src);

const WHOLE: [string, ShellSplit][] = [
  [
    'A=1 /opt/x/rm a',
    {
      commands: [
        { kind: 'command', text: 'A=1 rm a', forms: ['A=1 rm a', 'rm a', 'A=1 /opt/x/rm a'], argv: ['rm', 'a'] },
      ],
      unsafe: [],
    },
  ],
  [
    'A=1 B=2',
    {
      commands: [
        { kind: 'command', text: 'A=1', forms: ['A=1'], argv: ['A=1'] },
        { kind: 'command', text: 'B=2', forms: ['B=2'], argv: ['B=2'] },
      ],
      unsafe: [],
    },
  ],
  [
    'A=1 B=2 ls',
    { commands: [{ kind: 'command', text: 'A=1 B=2 ls', forms: ['A=1 B=2 ls', 'ls'], argv: ['ls'] }], unsafe: [] },
  ],
  [
    'ls >&2 2>&1 <&0 >&- 1>&3- >& file',
    {
      commands: [
        { kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'] },
        { kind: 'redirect', text: '>& file', forms: ['>& file'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    'ls > out 2>> err &> both >| force < in',
    {
      commands: [
        { kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'] },
        { kind: 'redirect', text: '> out', forms: ['> out'], argv: [] },
        { kind: 'redirect', text: '>> err', forms: ['>> err'], argv: [] },
        { kind: 'redirect', text: '&> both', forms: ['&> both'], argv: [] },
        { kind: 'redirect', text: '>| force', forms: ['>| force'], argv: [] },
        { kind: 'redirect', text: '< in', forms: ['< in'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    'ls > /dev/null 2>/dev/null &>/dev/null',
    { commands: [{ kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'] }], unsafe: [] },
  ],
  [
    'a | b | c',
    {
      commands: [
        { kind: 'command', text: 'a', forms: ['a'], argv: ['a'] },
        { kind: 'command', text: 'b', forms: ['b'], argv: ['b'] },
        { kind: 'command', text: 'c', forms: ['c'], argv: ['c'] },
        { kind: 'pipeline', text: 'a | b | c', forms: ['a | b | c'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    'sudo a | b',
    {
      commands: [
        { kind: 'command', text: 'sudo a', forms: ['sudo a'], argv: ['sudo', 'a'] },
        { kind: 'command', text: 'a', forms: ['a'], argv: ['a'], via: 'sudo' },
        { kind: 'command', text: 'b', forms: ['b'], argv: ['b'] },
        { kind: 'pipeline', text: 'sudo a | b', forms: ['sudo a | b', 'a | b'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    'sudo -u x cat f | env A=1 bash',
    {
      commands: [
        { kind: 'command', text: 'sudo -u x cat f', forms: ['sudo -u x cat f'], argv: ['sudo', '-u', 'x', 'cat', 'f'] },
        { kind: 'command', text: 'cat f', forms: ['cat f'], argv: ['cat', 'f'], via: 'sudo' },
        { kind: 'command', text: 'env A=1 bash', forms: ['env A=1 bash'], argv: ['env', 'A=1', 'bash'] },
        { kind: 'command', text: 'A=1 bash', forms: ['A=1 bash', 'bash'], argv: ['bash'], via: 'env' },
        {
          kind: 'pipeline',
          text: 'sudo -u x cat f | env A=1 bash',
          forms: ['sudo -u x cat f | env A=1 bash', 'cat f | bash'],
          argv: [],
        },
      ],
      unsafe: [],
    },
  ],
  [
    'nice -n 1 sudo grep x | sh',
    {
      commands: [
        {
          kind: 'command',
          text: 'nice -n 1 sudo grep x',
          forms: ['nice -n 1 sudo grep x'],
          argv: ['nice', '-n', '1', 'sudo', 'grep', 'x'],
        },
        { kind: 'command', text: 'sudo grep x', forms: ['sudo grep x'], argv: ['sudo', 'grep', 'x'], via: 'nice' },
        { kind: 'command', text: 'grep x', forms: ['grep x'], argv: ['grep', 'x'], via: 'nice > sudo' },
        { kind: 'command', text: 'sh', forms: ['sh'], argv: ['sh'] },
        {
          kind: 'pipeline',
          text: 'nice -n 1 sudo grep x | sh',
          forms: ['nice -n 1 sudo grep x | sh', 'grep x | sh'],
          argv: [],
        },
      ],
      unsafe: [],
    },
  ],
  [
    "echo 'rm -rf /' | sh",
    {
      commands: [
        { kind: 'command', text: 'echo rm -rf /', forms: ['echo rm -rf /'], argv: ['echo', 'rm -rf /'] },
        { kind: 'command', text: 'sh', forms: ['sh'], argv: ['sh'] },
        { kind: 'pipeline', text: 'echo rm -rf / | sh', forms: ['echo rm -rf / | sh'], argv: [] },
        { kind: 'command', text: 'rm -rf /', forms: ['rm -rf /'], argv: ['rm', '-rf', '/'], via: 'echo | sh' },
      ],
      unsafe: [],
    },
  ],
  [
    "printf 'rm -rf x\\nls' | bash",
    {
      commands: [
        {
          kind: 'command',
          text: 'printf rm -rf x\\nls',
          forms: ['printf rm -rf x\\nls'],
          argv: ['printf', 'rm -rf x\\nls'],
        },
        { kind: 'command', text: 'bash', forms: ['bash'], argv: ['bash'] },
        { kind: 'pipeline', text: 'printf rm -rf x\\nls | bash', forms: ['printf rm -rf x\\nls | bash'], argv: [] },
        { kind: 'command', text: 'rm -rf x', forms: ['rm -rf x'], argv: ['rm', '-rf', 'x'], via: 'printf | bash' },
        { kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'], via: 'printf | bash' },
      ],
      unsafe: [],
    },
  ],
  [
    "echo -n 'touch f' | sh",
    {
      commands: [
        { kind: 'command', text: 'echo -n touch f', forms: ['echo -n touch f'], argv: ['echo', '-n', 'touch f'] },
        { kind: 'command', text: 'sh', forms: ['sh'], argv: ['sh'] },
        { kind: 'pipeline', text: 'echo -n touch f | sh', forms: ['echo -n touch f | sh'], argv: [] },
        { kind: 'command', text: 'touch f', forms: ['touch f'], argv: ['touch', 'f'], via: 'echo | sh' },
      ],
      unsafe: [],
    },
  ],
  [
    "echo -e 'touch f' | bash -s",
    {
      commands: [
        { kind: 'command', text: 'echo -e touch f', forms: ['echo -e touch f'], argv: ['echo', '-e', 'touch f'] },
        { kind: 'command', text: 'bash -s', forms: ['bash -s'], argv: ['bash', '-s'] },
        { kind: 'pipeline', text: 'echo -e touch f | bash -s', forms: ['echo -e touch f | bash -s'], argv: [] },
        { kind: 'command', text: 'touch f', forms: ['touch f'], argv: ['touch', 'f'], via: 'echo | bash' },
      ],
      unsafe: [],
    },
  ],
  [
    "echo -ne 'touch f' | sh",
    {
      commands: [
        { kind: 'command', text: 'echo -ne touch f', forms: ['echo -ne touch f'], argv: ['echo', '-ne', 'touch f'] },
        { kind: 'command', text: 'sh', forms: ['sh'], argv: ['sh'] },
        { kind: 'pipeline', text: 'echo -ne touch f | sh', forms: ['echo -ne touch f | sh'], argv: [] },
        { kind: 'command', text: 'touch f', forms: ['touch f'], argv: ['touch', 'f'], via: 'echo | sh' },
      ],
      unsafe: [],
    },
  ],
  [
    'echo x | cat',
    {
      commands: [
        { kind: 'command', text: 'echo x', forms: ['echo x'], argv: ['echo', 'x'] },
        { kind: 'command', text: 'cat', forms: ['cat'], argv: ['cat'] },
        { kind: 'pipeline', text: 'echo x | cat', forms: ['echo x | cat'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    "cat f | bash -c 'ls'",
    {
      commands: [
        { kind: 'command', text: 'cat f', forms: ['cat f'], argv: ['cat', 'f'] },
        { kind: 'command', text: 'bash -c ls', forms: ['bash -c ls'], argv: ['bash', '-c', 'ls'] },
        { kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'], via: 'bash -c' },
        { kind: 'pipeline', text: 'cat f | bash -c ls', forms: ['cat f | bash -c ls'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    'a > f | b',
    {
      commands: [
        { kind: 'command', text: 'a', forms: ['a'], argv: ['a'] },
        { kind: 'redirect', text: '> f', forms: ['> f'], argv: [] },
        { kind: 'command', text: 'b', forms: ['b'], argv: ['b'] },
        { kind: 'pipeline', text: 'a | b', forms: ['a | b'], argv: [] },
      ],
      unsafe: [],
    },
  ],
  [
    "bash <<< 'touch f'",
    {
      commands: [
        { kind: 'command', text: 'bash', forms: ['bash'], argv: ['bash'] },
        { kind: 'command', text: 'touch f', forms: ['touch f'], argv: ['touch', 'f'], via: 'bash <<' },
      ],
      unsafe: [],
    },
  ],
  [
    'sh <<EOF\ntouch f\nEOF',
    {
      commands: [
        { kind: 'command', text: 'sh', forms: ['sh'], argv: ['sh'] },
        { kind: 'command', text: 'touch f', forms: ['touch f'], argv: ['touch', 'f'], via: 'sh <<' },
      ],
      unsafe: [],
    },
  ],
  ["cat <<< 'touch f'", { commands: [{ kind: 'command', text: 'cat', forms: ['cat'], argv: ['cat'] }], unsafe: [] }],
  [
    'bash <<EOF > out\ntouch g\nEOF',
    {
      commands: [
        { kind: 'command', text: 'bash', forms: ['bash'], argv: ['bash'] },
        { kind: 'command', text: 'touch g', forms: ['touch g'], argv: ['touch', 'g'], via: 'bash <<' },
        { kind: 'redirect', text: '> out', forms: ['> out'], argv: [] },
      ],
      unsafe: [],
    },
  ],
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
  [
    'cat <<EOF\n\\`touch f\\`\nEOF',
    { commands: [{ kind: 'command', text: 'cat', forms: ['cat'], argv: ['cat'] }], unsafe: [] },
  ],
  [
    '/???/r? -rf x',
    {
      commands: [{ kind: 'command', text: 'r? -rf x', forms: ['r? -rf x', '/???/r? -rf x'], argv: ['r?', '-rf', 'x'] }],
      unsafe: ['/???/r?'],
    },
  ],
  ["'*' a", { commands: [{ kind: 'command', text: '* a', forms: ['* a'], argv: ['*', 'a'] }], unsafe: [] }],
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

describe('splitShell: whole splits', () => {
  it.each(WHOLE)('%j', async (src, expected) => {
    expect(await split(src)).toEqual(expected);
  });
});

describe('splitShell: $"…" (a locale-translated string)', () => {
  const policy = merged(BYPASS_POLICY);
  // tree-sitter-bash leaves the $ beside the string; read as text, `$"rm" -rf /` was the command `"rm"` and
  // `r$"m"` the word `r$m`, so the deny rules never saw rm.
  it.each(['$"rm" -rf /', 'r$"m" -rf /', '$"r"m -rf x', 'rm $"-rf" x', 'sudo $"rm" -rf x'])(
    'denies %s, as bash runs rm',
    async (command) => {
      expect((await decideTerminal(policy, command)).outcome).toBe('deny');
    },
  );

  it('reads $"a""b" as one word ab, also as an argument, where a deny rule on the words must see it', async () => {
    const s = await split('git push $"--fo""rce" x');
    expect(s.commands.map((c) => c.argv)).toEqual([['git', 'push', '--force', 'x']]);
    expect(s.unsafe).toEqual(['$"--fo""rce"']);
    const noForce = merged({
      default: 'allow',
      tools: { terminal: { always_deny: [{ pattern: '^git push --force' }] } },
    });
    expect((await decideTerminal(noForce, 'git push $"--fo""rce" x')).outcome).toBe('deny');
  });

  it('asks for an otherwise allowed command: a message catalogue may translate the text', async () => {
    expect(await decideTerminal(policy, 'ls $"x"')).toMatchObject({ outcome: 'confirm', level: 'expansion' });
    expect((await decideTerminal(policy, 'ls x')).outcome).toBe('allow');
  });
});

describe('splitShell: refusals', () => {
  it.each([
    ['ls &&', 'syntax error at line 1, column 6: missing "word"'],
    ['if', 'syntax error at line 1, column 1: unexpected "if"'],
    ['ls )', 'syntax error at line 1, column 4: unexpected ")"'],
    ['echo (', 'syntax error at line 1, column 6: unexpected "("'],
    ["ls\necho 'x", `syntax error at line 2, column 5: unexpected " 'x"`],
    ['$(', 'syntax error at line 1, column 1: unexpected "$("'],
  ])('%j: %s', async (src, message) => {
    const s = await split(src);
    expect(s.parseError).toBe(message);
    // The whole input is also a command, so no allow rule can match it piecewise.
    expect(s.commands.at(-1)).toEqual({ kind: 'command', text: src.trim(), forms: [src.trim()], argv: [] });
  });

  it('clips a long unexpected text to 80 characters in the message', async () => {
    const s = await split(`if ${'x'.repeat(100)}`);
    expect(s.parseError).toBe(`syntax error at line 1, column 1: unexpected "if ${'x'.repeat(74)}..."`);
    expect((await split(`if ${'x'.repeat(77)}`)).parseError).toBe(
      `syntax error at line 1, column 1: unexpected "if ${'x'.repeat(77)}"`,
    );
  });

  it('refuses a test whose operands hold $, ` or [, and keeps one without them', async () => {
    for (const src of ['[[ $x -eq 1 ]]', "[ 'a[$(id)]' -eq 0 ]", '[[ `id` ]]', '[[ a[1] -eq 0 ]]']) {
      expect((await split(src)).parseError, src).toMatch(/^the test ".*" holds \$, ` or \[ in an operand/);
    }
    expect((await split('[[ -f x ]] && [ -d "y" ]')).parseError).toBeUndefined();
  });

  it('names the here-doc problem: quoted delimiter, continuation, tabs', async () => {
    expect((await split("cat <<'EOF'\nx\nEOF")).parseError).toBe(
      "the here-doc delimiter 'EOF' is quoted or escaped; bash and the permission check could disagree on " +
        'where the here-doc ends. Use a bare delimiter (<<EOF), or write the text with file.write',
    );
    expect((await split('cat <<EOF\nx\\\ny\nEOF')).parseError).toBe(
      'a line continuation (backslash at the end of a line) follows the here-doc <<EOF; bash joins those lines ' +
        'before it looks for the delimiter, so the here-doc could end elsewhere than checked. Remove the ' +
        'continuation, or write the text with file.write',
    );
    expect((await split('cat <<-EOF\n\tx\nEOF')).parseError).toBe(
      'the here-doc <<-EOF has lines starting with tabs, which bash strips before it compares them with the ' +
        'delimiter; use <<EOF without tab indentation',
    );
    // A continuation before the here-doc, and tabs with plain <<, are read the same by both.
    expect((await split('echo a \\\nb; cat <<EOF\nx\nEOF')).parseError).toBeUndefined();
    expect((await split('cat <<EOF\n\tx\nEOF')).parseError).toBeUndefined();
    expect((await split('cat <<-EOF\nx\nEOF')).parseError).toBeUndefined();
  });

  it('runs the backticks of an unquoted here-doc only, and not escaped ones', async () => {
    const s = await split('cat <<EOF\n`a` \\`b\\` `c`\nEOF');
    expect(s.commands).toEqual([
      { kind: 'command', text: 'cat', forms: ['cat'], argv: ['cat'] },
      { kind: 'command', text: 'a', forms: ['a'], argv: ['a'], via: 'here-doc' },
      { kind: 'command', text: 'c', forms: ['c'], argv: ['c'], via: 'here-doc' },
    ]);
    expect(s.unsafe).toEqual(['`a`', '`c`']);
  });
});

describe('splitShell: a line continuation inside a word', () => {
  const policy = merged(BYPASS_POLICY);
  // bash removes backslash-newline before it splits words, so `r\<newline>m` is rm; tree-sitter-bash reads
  // the words r and m, and the gate judged "r m -rf /".
  it.each(['r\\\nm -rf /', 'rm -\\\nrf x', 'ls x\\\ny'])('refuses %j', async (src) => {
    expect((await split(src)).parseError).toMatch(
      /^a line continuation inside a word of "[^]*" joins what the check reads as two$/,
    );
    expect((await decideTerminal(policy, src)).outcome).toBe('deny');
  });

  it('keeps a continuation between words, with a blank on either side', async () => {
    for (const src of ['ls a \\\nb', 'ls a\\\n b', 'ls \\\n-la']) {
      const s = await split(src);
      expect(s.parseError, src).toBeUndefined();
      expect((await decideTerminal(policy, src)).outcome, src).toBe('allow');
    }
  });
});

describe('splitShell: limits at their edges', () => {
  it('parses an input of exactly the limit, and refuses one character more', async () => {
    const max = SHELL_LIMITS.maxSourceChars;
    const at = await split(`ls ${'x'.repeat(max - 3)}`);
    expect(at.parseError).toBeUndefined();
    expect(at.commands).toHaveLength(1);
    expect(await split(`ls ${'x'.repeat(max - 2)}`)).toEqual({
      commands: [],
      unsafe: [],
      parseError: `input is longer than ${max} characters`,
    });
  });

  it('unwraps wrappers 8 deep, and refuses the 9th', async () => {
    const deep = (n: number) => `${'nice '.repeat(n)}ls`;
    const eight = await split(deep(SHELL_LIMITS.maxDepth));
    expect(eight.parseError).toBeUndefined();
    expect(eight.commands.at(-1)).toMatchObject({ text: 'ls', via: Array(8).fill('nice').join(' > ') });
    const nine = await split(deep(SHELL_LIMITS.maxDepth + 1));
    expect(nine.parseError).toBe(`commands are nested more than ${SHELL_LIMITS.maxDepth} levels deep`);
    expect(nine.commands.map((c) => c.text)).not.toContain('ls');
  });

  it('nests scripts 8 deep, and refuses the 9th', async () => {
    const deep = (n: number) => {
      let s = 'ls';
      for (let i = 0; i < n; i++) s = `eval ${JSON.stringify(s)}`;
      return s;
    };
    expect((await split(deep(SHELL_LIMITS.maxDepth))).parseError).toBeUndefined();
    expect((await split(deep(SHELL_LIMITS.maxDepth + 1))).parseError).toBe(
      `commands are nested more than ${SHELL_LIMITS.maxDepth} levels deep`,
    );
  });

  it('keeps 2,000 sub-commands and refuses the 2,001st with one message', async () => {
    const at = await split(Array(SHELL_LIMITS.maxCommands).fill('ls').join(';'));
    expect(at.commands).toHaveLength(SHELL_LIMITS.maxCommands);
    expect(at.parseError).toBeUndefined();
    const over = await split(
      Array(SHELL_LIMITS.maxCommands + 5)
        .fill('ls')
        .join(';'),
    );
    expect(over.commands).toHaveLength(SHELL_LIMITS.maxCommands);
    expect(over.parseError).toBe(`more than ${SHELL_LIMITS.maxCommands} sub-commands`);
  });

  it('names the command whose braces expand past 256 results', async () => {
    expect((await split('echo {1..256}')).parseError).toBeUndefined();
    expect((await split('echo {1..257}')).parseError).toBe(
      'a brace expansion in "echo {1..257}" has more than 256 results',
    );
  });
});
