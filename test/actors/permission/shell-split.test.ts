/**
 * What the splitter refuses, with each message, the limits at their edges, and the shapes where
 * tree-sitter-bash and bash read different words (`$"…"`, a line continuation inside a word, a backslash after
 * a quoted piece, words after a redirect target). The whole splits of the constructs are in
 * shell-split-whole.test.ts.
 */
import { SHELL_LIMITS } from '../../../actors/permission/shell-parse.ts';
import type { PolicyInput } from '../../../schemas/policy.ts';
import {
  BYPASS_POLICY,
  decideTerminal,
  ISSUE_11_POLICY,
  merged,
  shellSplitter,
} from '../../support/permission-fixtures.ts';

const split = async (src: string) => (await shellSplitter())(src);

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
    // Also as the command's name, where the grammar makes it a translated_string node.
    expect((await split('$"ls" a')).unsafe).toEqual(['$"ls"']);
    expect(await decideTerminal(policy, '$"ls" a')).toMatchObject({ outcome: 'confirm', level: 'expansion' });
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

  it('keeps the whole input, trimmed, as a command', async () => {
    expect((await split('  if \n')).commands.at(-1)).toEqual({ kind: 'command', text: 'if', forms: ['if'], argv: [] });
  });

  it('checks a here-doc against the outer input after a nested script was parsed', async () => {
    // eval's script is parsed first; the here-doc's continuation is then looked for in the outer input.
    expect((await split('eval ls; cat <<EOF\nx\\\ny\nEOF')).parseError).toMatch(/^a line continuation \(backslash/);
  });

  it('keeps assignments with no command name as their own command (A=1 >x: a syntax error here)', async () => {
    expect((await split('A=1 >x')).commands).toEqual([
      { kind: 'command', text: 'A=1', forms: ['A=1'], argv: [] },
      { kind: 'redirect', text: '> x', forms: ['> x'], argv: [] },
      { kind: 'command', text: 'A=1 >x', forms: ['A=1 >x'], argv: [] },
    ]);
  });

  it('reads no word from a missing node', async () => {
    expect((await split('ls &&')).commands).toEqual([
      { kind: 'command', text: 'ls', forms: ['ls'], argv: ['ls'] },
      { kind: 'command', text: 'ls &&', forms: ['ls &&'], argv: [] },
    ]);
  });

  it('clips a long unexpected text to 80 characters in the message', async () => {
    const s = await split(`if ${'x'.repeat(100)}`);
    expect(s.parseError).toBe(`syntax error at line 1, column 1: unexpected "if ${'x'.repeat(76)}…"`);
    expect((await split(`if ${'x'.repeat(77)}`)).parseError).toBe(
      `syntax error at line 1, column 1: unexpected "if ${'x'.repeat(77)}"`,
    );
  });

  it('refuses a test that evaluates operands holding $, ` or [, and keeps the others', async () => {
    for (const src of ['[[ $(id) -eq 1 ]]', '[[ a[1] -eq 0 ]]', "[[ -v 'a[$(id)]' ]]", "[ -v 'a[$(id)]' ]"]) {
      expect((await split(src)).parseError, src).toMatch(/^the test ".*" holds \$, ` or \[ in an operand/);
    }
    // `[`'s -eq compares integers (no arithmetic), and == or -f evaluate nothing: their expansions are only that.
    for (const src of ['[[ -f x ]] && [ -d "y" ]', "[ 'a[$(id)]' -eq 0 ]", '[[ $a == b ]]', '[[ -n "$HOME" ]]'])
      expect((await split(src)).parseError, src).toBeUndefined();
    expect((await split("[[ 'a[$(id)]' -eq 1 ]]")).parseError).toBe(
      `the test "[[ 'a[$(id)]' -eq 1 ]]" holds $, \` or [ in an operand, which bash evaluates as arithmetic or an ` +
        'array subscript and so may run a command hidden in a string; compare literal values instead',
    );
    // A name's value ($x, or x) is evaluated as arithmetic: a person decides; what is always a number ($#, $?,
    // ${#a[@]}) is no risk (their expansions still ask, as any does).
    for (const src of ['[[ $x -eq 1 ]]', '[[ ${x} -gt 0 ]]']) {
      expect((await split(src)).parseError, src).toBeUndefined();
      expect((await split(src)).unsafe, src).toContain(`${src} (evaluates a name as arithmetic)`);
    }
    for (const src of ['[[ $# -eq 0 ]]', '[[ $? -ne 0 ]]', '[[ ${#a[@]} -gt 0 ]]'])
      expect(
        (await split(src)).unsafe.filter((u) => u.includes('arithmetic')),
        src,
      ).toEqual([]);
    // A name there is evaluated as the arithmetic its value holds: a person decides.
    expect((await split('[[ x -eq 0 ]]')).unsafe).toEqual(['[[ x -eq 0 ]] (evaluates a name as arithmetic)']);
    expect((await split('[[ 3 -eq 3 ]]')).unsafe).toEqual([]);
  });

  it('reads a test with its blanks collapsed, as one command', async () => {
    expect((await split('[[  -f   x ]]')).commands).toEqual([
      { kind: 'command', text: '[[ -f x ]]', forms: ['[[ -f x ]]'], argv: ['[[', '-f', 'x', ']]'] },
    ]);
  });

  it('names the here-doc problem: quoted delimiter, continuation, tabs', async () => {
    expect((await split('cat <<\\EOF\nx\nEOF')).parseError).toBe(
      'the here-doc delimiter \\EOF is quoted or escaped; bash and the permission check could disagree on ' +
        'where the here-doc ends. Use a bare delimiter (<<EOF), or write the text with file.write',
    );
    // Quoted whole (the usual way to write a file verbatim), it is read the same: its body is text, continuations
    // and all, and the command after the end is judged.
    const verbatim = await split("cat <<'EOF' > f.sh\necho a \\\n  $(rm x)\nEOF\nrm y");
    expect(verbatim.parseError).toBeUndefined();
    expect(verbatim.commands.map((c) => c.text)).toEqual(['cat', '> f.sh', 'rm y']);
    expect((await split('cat <<EOF\nx\\\ny\nEOF')).parseError).toBe(
      'a line continuation (backslash at the end of a line) follows the here-doc <<EOF; bash joins those lines ' +
        'before it looks for the delimiter, so the here-doc could end elsewhere than checked. Remove the ' +
        'continuation, or write the text with file.write',
    );
    // `<<-` strips tabs before the end line is compared: refused where tree-sitter-bash ends it elsewhere (here at a
    // line starting with a blank, where bash reads on); read where both end at the same line.
    expect((await split('cat <<-EOF\n\tx\n\tEOF\ntouch f')).commands.map((c) => c.text)).toEqual(['cat', 'touch f']);
    expect((await split('cat <<-EOF\n\tx\n \tEOF\nrm y')).parseError).toBe(
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

  it('leaves the backticks of a quoted here-doc as text (bash does not run them; the quoting is refused)', async () => {
    for (const src of ["cat <<'EOF'\n`a`\nEOF", 'cat <<"EOF"\n`a`\nEOF', 'cat <<\\EOF\n`a`\nEOF']) {
      const s = await split(src);
      expect(s.commands, src).toEqual([{ kind: 'command', text: 'cat', forms: ['cat'], argv: ['cat'] }]);
      expect(s.unsafe, src).toEqual([]);
    }
    // A plain here-doc with nothing to refuse leaves no parseError key.
    expect(Object.keys(await split('cat <<EOF\nx\nEOF'))).toEqual(['commands', 'unsafe']);
  });
});

describe('splitShell: a line continuation inside a word', () => {
  const policy = merged(BYPASS_POLICY);
  // bash removes backslash-newline before it splits words, so `r\<newline>m` is rm; tree-sitter-bash reads
  // the words r and m, and the gate judged "r m -rf /".
  it.each(['r\\\nm -rf /', 'rm -\\\nrf x', 'ls x\\\ny'])('refuses %j', async (src) => {
    expect((await split(src)).parseError).toMatch(
      /^a line continuation inside a word of "[\s\S]*" joins what the check reads as two$/,
    );
    expect((await decideTerminal(policy, src)).outcome).toBe('deny');
  });

  it('refuses a line break that tree-sitter-bash folds into a word (bash runs touch)', async () => {
    const s = await split('echo \n\\touch x');
    expect(s.parseError).toBe('a line break inside "echo \n\\touch x" was not read as the end of a command');
  });

  it('finds it in a command that does not start the input', async () => {
    expect((await split('ls; r\\\nm -rf /')).parseError).toBe(
      'a line continuation inside a word of "r\\\nm -rf /" joins what the check reads as two',
    );
    // tree-sitter-bash reads `ls\nrm -rf build` as one command after `|&` (the line break is the whole gap).
    expect((await split('ls && ls |& ls | ls\nrm -rf build && ls')).parseError).toBe(
      'a line break inside "ls\nrm -rf build" was not read as the end of a command',
    );
  });

  it('keeps a continuation between words, with a blank on either side', async () => {
    for (const src of ['ls a \\\nb', 'ls a\\\n b', 'ls \\\n-la']) {
      const s = await split(src);
      expect(s.parseError, src).toBeUndefined();
      expect((await decideTerminal(policy, src)).outcome, src).toBe('allow');
    }
  });
});

describe('splitShell: a backslash right after a quoted or braced piece', () => {
  const policy = merged(BYPASS_POLICY);
  const allowAll = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });
  // tree-sitter-bash ends the word before the backslash: `'r'\m` was the words r and m, so the gate judged
  // "r m -rf /" while bash runs rm -rf / (a deny rule on rm became an ask, or an allow under default allow).
  it.each([
    ["'r'\\m -rf /", `"'r'" and "\\m" in "'r'\\m -rf /"`],
    ['"r"\\m -rf /', `""r"" and "\\m" in ""r"\\m -rf /"`],
    // bash: rm rm -rf /
    ['r{,}\\m -rf /', `"r{,}" and "\\m" in "r{,}\\m -rf /"`],
    // bash: rm '-rf /x' (one word); the check read -rf and /x
    ['rm "-rf"\\ /x', `""-rf"" and "/x" in "rm "-rf"\\ /x"`],
  ])('refuses %j, which bash reads as one word', async (src, words) => {
    expect((await split(src)).parseError).toBe(
      `${words} touch with no blank between them: bash reads one word there, the check read two. Quote the ` +
        'whole word, or put a blank between the words',
    );
    expect((await decideTerminal(policy, src)).outcome).toBe('deny');
    expect((await decideTerminal(allowAll, src)).outcome).toBe('deny');
  });

  it('refuses a redirect target split the same way: > "/etc/pass"\\wd writes /etc/passwd', async () => {
    expect((await split('echo x > "/etc/pass"\\wd')).parseError).toMatch(/^""\/etc\/pass"" and "\\wd" in /);
    expect((await decideTerminal(allowAll, 'echo x > "/etc/pass"\\wd')).outcome).toBe('deny');
  });

  it("asks for a command naming .skein/ so split: cat .sk'e'\\in/policy.json was allowed", async () => {
    const policy11 = merged(ISSUE_11_POLICY as PolicyInput);
    expect((await decideTerminal(policy11, 'cat .skein/policy.json')).outcome).toBe('confirm');
    expect((await decideTerminal(policy11, "cat .sk'e'\\in/policy.json")).outcome).toBe('deny');
  });

  it('keeps words with a blank between them, and one word with its pieces touching', async () => {
    for (const src of ['ls "a" b', "ls 'a'\tb", 'ls a\\ b', 'ls "a"b\\c', 'ls $"x" y']) {
      expect((await split(src)).parseError, src).toBeUndefined();
    }
    expect((await split('ls "a"b\\c')).commands[0]!.argv).toEqual(['ls', 'abc']);
  });
});

describe('splitShell: words after a redirect target', () => {
  const policy = merged(BYPASS_POLICY);
  // bash: `rm >/dev/null -rf /` runs rm -rf /; tree-sitter-bash makes -rf and / more redirect destinations,
  // and hangs the redirect on the whole list or pipeline when the command ends one, so the gate judged `rm`.
  it.each([
    ['rm >/dev/null -rf /', ['rm -rf /']],
    ['ls; rm >/dev/null -rf /', ['ls', 'rm -rf /']],
    ['ls && rm 2>/dev/null -rf /', ['ls', 'rm -rf /']],
    ['ls | rm 2>/dev/null -rf /', ['ls', 'rm -rf /', 'ls | rm -rf /']],
    ['echo >&2 hi there', ['echo hi there']],
  ])('%j is read as bash runs it', async (src, texts) => {
    const s = await split(src);
    expect(s.parseError).toBeUndefined();
    expect(s.commands.map((c) => c.text)).toEqual(texts);
  });

  it.each(['ls; rm >/dev/null -rf /', 'ls && rm 2>/dev/null -rf /', 'ls | rm 2>/dev/null -rf /'])(
    'denies %j',
    async (src) => {
      expect((await decideTerminal(policy, src)).outcome).toBe('deny');
    },
  );

  it('keeps a compound command with a redirect and no words after its target', async () => {
    for (const src of ['(ls) >x', 'if true; then ls; fi >x 2>&1']) {
      expect((await split(src)).parseError, src).toBeUndefined();
    }
  });

  it('reads the commands in a redirect target: ls > "$(rm -rf /)"', async () => {
    const s = await split('ls > "$(rm -rf /)"');
    expect(s.commands.map((c) => c.text)).toEqual(['ls', '> $(rm -rf /)', 'rm -rf /']);
    expect(s.unsafe).toEqual(['$(rm -rf /)']);
  });

  it('refuses words after the redirect of a compound command, a syntax error in bash', async () => {
    for (const src of ['(rm) 2>x -rf', 'if true; then ls; fi >x y', 'ls | (rm) 2>x -rf']) {
      expect((await split(src)).parseError, src).toBe(
        `words follow the redirect target in "${src}", after a compound command`,
      );
    }
  });
});

describe('splitShell: a command inside ${…} or $((…))', () => {
  const policy = merged(BYPASS_POLICY);
  // bash runs rm when x is unset; the substitution sat inside an expansion whose children were not walked (and
  // tree-sitter-bash reads backticks there as a plain word), so the deny rule never saw rm: asked, not denied.
  it.each(['echo ${x:-$(rm -rf /)}', 'echo ${x:-`rm -rf /`}', 'echo "${x:-`rm -rf /`}"', 'echo $(( $(rm -rf /) ))'])(
    'denies %j, as $(rm -rf /) alone is',
    async (src) => {
      expect((await split(src)).commands.map((c) => c.text)).toContain('rm -rf /');
      expect((await decideTerminal(policy, src)).outcome).toBe('deny');
    },
  );

  it('asks for an allowed command inside one, as for any expansion', async () => {
    const s = await split('echo ${x:-`ls`}');
    expect(s.commands.map((c) => c.text)).toEqual(['echo ${x:-`ls`}', 'ls']);
    expect(s.unsafe).toEqual(['${x:-`ls`}']);
    expect((await decideTerminal(policy, 'ls ${x:-`ls`}')).outcome).toBe('confirm');
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

  it('nests aliases 8 deep, and refuses the 9th (an alias value is parsed as a script)', async () => {
    const deep = (n: number) => {
      let s = 'ls';
      for (let i = 0; i < n; i++) s = `alias a=${JSON.stringify(s)}`;
      return s;
    };
    const eight = await split(deep(SHELL_LIMITS.maxDepth));
    expect(eight.parseError).toBeUndefined();
    expect(eight.commands.at(-1)).toMatchObject({ text: 'ls', via: 'alias' });
    expect((await split(deep(SHELL_LIMITS.maxDepth + 1))).parseError).toBe(
      `commands are nested more than ${SHELL_LIMITS.maxDepth} levels deep`,
    );
  });

  it('has no parseError key when nothing was refused', async () => {
    expect(Object.keys(await split('ls'))).toEqual(['commands', 'unsafe']);
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
    // Also in a word after a redirect target, which is the command's argument.
    expect((await split('echo >x {1..257}')).parseError).toBe('a brace expansion in "echo" has more than 256 results');
    expect((await split('echo {1..257}')).parseError).toBe(
      'a brace expansion in "echo {1..257}" has more than 256 results',
    );
  });
});
