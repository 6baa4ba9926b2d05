/**
 * The tree-sitter-bash splitter: whole split results for each construct, and
 * property tests (random compositions of commands and quoting).
 */
import fc from 'fast-check';
import { SHELL_LIMITS } from '../../../actors/permission/shell-parse.ts';
import { decide } from '../../../machines/permission/permission-policy.ts';
import { BYPASS_POLICY, merged, shellSplitter } from '../../support/permission-fixtures.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();
/** A pipe (`|` or `|&`) followed, on the same line, by the end of that line. */
const pipelineThenNewline = (src: string) => /(?<!\|)\|(?!\|)[^\n]*\n/.test(src);
const texts = async (src: string) =>
  (await shellSplitter())(src).commands.map((c) => (c.via ? `${c.kind}:${c.text} [${c.via}]` : `${c.kind}:${c.text}`));

describe('createShellSplitter', () => {
  it('gives a repeated input the split it made before (frozen, shared), not a second parse', async () => {
    const split = await shellSplitter();
    const first = split('git status && rm -rf "$HOME/x"');
    const again = split('git status && rm -rf "$HOME/x"');
    expect(again).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.commands[0])).toBe(true);
    expect(Object.isFrozen(first.commands[0]!.forms)).toBe(true);
    expect(first.unsafe).toEqual(['$HOME']);
    expect(split('git status')).not.toBe(first);
  });
});

describe('splitShell', () => {
  it.each([
    ['\'rm\' -rf "/"', ['command:rm -rf /']],
    [
      'a && b || c; d | e |& f & g\nh',
      [
        'command:a',
        'command:b',
        'command:c',
        'command:d',
        'command:e',
        'command:f',
        'pipeline:d | e | f',
        'command:g',
        'command:h',
      ],
    ],
    [
      '(a; { b; }) && if c; then d; elif e; then f; else g; fi',
      ['command:a', 'command:b', 'command:c', 'command:d', 'command:e', 'command:f', 'command:g'],
    ],
    [
      'for x in 1 2; do a; done; while b; do c; done; case y in y) d;; esac',
      ['command:a', 'command:b', 'command:c', 'command:d'],
    ],
    ['f() { a; }; function g { b; }', ['command:a', 'command:b']],
    [
      'PAGER=less git log > out.txt 2>&1 < in >/dev/null 2>/dev/null',
      ['command:PAGER=less git log', 'redirect:> out.txt', 'redirect:< in'],
    ],
    ['/usr/bin/env FOO=1 ./tool -x', ['command:env FOO=1 ./tool -x', 'command:FOO=1 tool -x [env]']],
    [
      'sudo -u me timeout -k 1 5 nice -n 2 git status',
      [
        'command:sudo -u me timeout -k 1 5 nice -n 2 git status',
        'command:timeout -k 1 5 nice -n 2 git status [sudo]',
        'command:nice -n 2 git status [sudo > timeout]',
        'command:git status [sudo > timeout > nice]',
      ],
    ],
    [
      'bash -c \'a; sh -c "b"\'',
      [
        'command:bash -c a; sh -c "b"',
        'command:a [bash -c]',
        'command:sh -c b [bash -c]',
        'command:b [bash -c > sh -c]',
      ],
    ],
    [
      'find . -name "*.tmp" -exec rm {} + -delete',
      [
        'command:find . -name *.tmp -exec rm {} + -delete',
        'command:rm {} [find -exec]',
        'command:rm -f {} [find -delete]',
      ],
    ],
    [
      'ls | xargs -n1 -I{} cp {} /tmp',
      [
        'command:ls',
        'command:xargs -n1 -I{} cp {} /tmp',
        'command:cp {} /tmp [xargs]',
        'pipeline:ls | xargs -n1 -I{} cp {} /tmp',
      ],
    ],
    ['cat <<EOF\nhello\nEOF', ['command:cat']],
    ['echo {a,b}{1..2} "{x,y}"', ['command:echo a1 a2 b1 b2 {x,y}']],
    ["$'\\x6c\\x73' $'a\\tb'", ['command:ls a\tb']],
    ['export A=1 B="two words"; unset A; X=3', ['command:export A=1 B=two words', 'command:unset A', 'command:X=3']],
    ['# only a comment', []],
  ])('%j', async (src, expected) => {
    expect(await texts(src)).toEqual(expected);
  });

  it('reports expansions and substitutions, and recurses into substitutions', async () => {
    const split = (await shellSplitter())('echo $A ${B} $(c) `d` $((1+2)) <(e) >(f)');
    expect(split.unsafe).toEqual(['$A', '${B}', '$(c)', '`d`', '$((1+2))', '<(e)', '>(f)']);
    expect(split.commands.map((c) => c.text)).toEqual(['echo $A ${B} $(c) `d` $((1+2)) <(e) >(f)', 'c', 'd', 'e', 'f']);
    expect(split.parseError).toBeUndefined();
  });

  // Issue 11, hole 4: wherever bash and tree-sitter-bash could disagree on where a here-doc ends.
  it.each([
    ['a delimiter split by a line continuation', 'cat <<EOF\nEO\\\nF\ntouch f\nEOF', /line continuation/],
    [
      'a continuation in the operator line',
      'cat <<EO\\\nF\ntouch f\nEOF',
      /line continuation|quoted or escaped|syntax error/,
    ],
    ['a continuation inside the body', 'cat <<EOF\nx\\\ny\nEOF', /line continuation/],
    [
      'a quoted delimiter whose end tree-sitter-bash reads early',
      "cat <<'EOF'\nEOF2\ntouch f\nEOF",
      /quoted or|syntax/,
    ],
    ['a quoted delimiter with other characters', "cat <<'E F'\ntouch f\nE F", /quoted or escaped/],
    ['a partly quoted delimiter', 'cat <<E"O"F\nEOF\ntouch f\nE"O"F', /quoted or escaped/],
    ['an escaped delimiter', 'cat <<\\EOF\ntouch f\nEOF', /quoted or escaped/],
    ['<<- ended where bash reads on', 'cat <<-EOF\n\tx\n \tEOF\ntouch f\nEOF', /tabs/],
  ])('refuses %s as unparseable', async (_what, src, why) => {
    const s = (await shellSplitter())(src);
    expect(s.parseError).toMatch(why);
    const d = decide(
      { tool: 'terminal', input: src, split: s },
      merged({ tools: { terminal: { always_allow: [{ pattern: '^cat\\b' }] } } }),
    );
    expect(d).toMatchObject({ outcome: 'deny', level: 'unsafe_shell' });
  });

  it('reads a plain here-doc and <<- without tabs as before', async () => {
    expect(await texts('cat <<EOF\nhello\nEOF')).toEqual(['command:cat']);
    expect(await texts('cat <<-EOF\nhello\nEOF\nls')).toEqual(['command:cat', 'command:ls']);
    expect((await shellSplitter())('cat <<EOF\nhello\nEOF').parseError).toBeUndefined();
  });

  it('reports parse errors with a position', async () => {
    expect((await shellSplitter())('ls &&').parseError).toBe('syntax error at line 1, column 6: missing "word"');
    expect((await shellSplitter())('echo "x').parseError).toMatch(/^syntax error at line 1/);
  });

  it('limits nesting depth, input size and brace expansion', async () => {
    const split = await shellSplitter();
    let nested = 'ls';
    for (let i = 0; i < 12; i++) nested = `sh -c ${JSON.stringify(nested)}`;
    expect(split(nested).parseError).toBe(`commands are nested more than ${SHELL_LIMITS.maxDepth} levels deep`);
    expect(split('x'.repeat(SHELL_LIMITS.maxSourceChars + 1))).toEqual({
      commands: [],
      unsafe: [],
      parseError: 'input is longer than 65536 characters',
    });
    expect(split('echo {1..100000}').parseError).toMatch(/brace expansion .* more than 256 results/);
    // Thousands of nested substitutions, within the length limit: each nested command repeats the text around
    // it (88 MB of split for this 48 KB input before), so the split stops at its character bound.
    const substitutions = `${'$('.repeat(16_000)}true${')'.repeat(16_000)}`;
    expect(substitutions.length).toBeLessThan(SHELL_LIMITS.maxSourceChars);
    const bounded = split(substitutions);
    expect(bounded.parseError).toBe(
      `its sub-commands hold more than ${SHELL_LIMITS.maxSplitChars} characters (commands nested in each other ` +
        'repeat the text around them); split it into simpler commands',
    );
    expect(JSON.stringify(bounded).length).toBeLessThan(2 * SHELL_LIMITS.maxSplitChars);
    // Thousands of nested groups: the walk is recursive and the stack ends first (it used to throw, and the
    // command failed as an internal error). Unparseable either way, so a policy with rules cannot allow it.
    const groups = `${'{ '.repeat(10_000)}true${'; }'.repeat(10_000)}`;
    expect(split(groups).parseError).toBe(
      'the command is nested too deeply to be judged (its syntax tree overflowed the stack); ' +
        'split it into simpler commands',
    );
    const withRules = merged({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } });
    for (const input of [substitutions, groups]) {
      expect(decide({ tool: 'terminal', input, split: split(input) }, withRules)).toMatchObject({
        outcome: 'deny',
        level: 'unsafe_shell',
      });
    }
  });
});

describe(`splitter properties (seed ${seed})`, () => {
  const policy = merged(BYPASS_POLICY);
  const allowed = fc.constantFrom('git status', 'ls', 'ls -la', 'npm test', 'git status --short', 'ls src');
  const sep = fc.constantFrom(' && ', ' || ', '; ', ' | ', ' |& ', ' & ', '\n', ' ;\n ');

  it('any chain of allowed commands is allowed, with one sub-command per link', async () => {
    const split = await shellSplitter();
    fc.assert(
      fc.property(
        fc.array(allowed, { minLength: 1, maxLength: 6 }),
        fc.array(sep, { minLength: 6, maxLength: 6 }),
        (cmds, seps) => {
          const src = cmds.map((c, i) => (i === 0 ? c : seps[i]! + c)).join('');
          const s = split(src);
          const d = decide({ tool: 'terminal', input: src, split: s }, policy);
          // tree-sitter-bash misreads a newline that ends a pipeline of several stages (`a | b | c\nd`
          // becomes `c d`); handleCommand reports that as a parse error, so such input is refused, never
          // allowed on a wrong reading. Any other parse error is a bug.
          if (s.parseError) return d.outcome === 'deny' && d.level === 'unsafe_shell' && pipelineThenNewline(src);
          return d.outcome === 'allow' && s.commands.filter((c) => c.kind === 'command').length === cmds.length;
        },
      ),
      { seed, numRuns: 200 },
    );
  });

  it('inserting rm -rf anywhere in such a chain, in any quoting, is denied', async () => {
    const split = await shellSplitter();
    const quote = (w: string) => fc.constantFrom(w, `'${w}'`, `"${w}"`, `\\${w}`, `${w[0]}''${w.slice(1)}`);
    const rm = fc
      .tuple(
        fc.constantFrom('rm', '/bin/rm', 'command rm', 'sudo rm', 'env rm', 'xargs rm'),
        quote('-rf'),
        quote('build'),
      )
      .map(([a, b, c]) => `${a} ${b} ${c}`);
    fc.assert(
      fc.property(fc.array(allowed, { maxLength: 4 }), rm, fc.nat(), sep, (cmds, bad, at, s) => {
        const list: string[] = [...cmds];
        list.splice(at % (list.length + 1), 0, bad);
        const src = list.join(s);
        return decide({ tool: 'terminal', input: src, split: split(src) }, policy).outcome === 'deny';
      }),
      { seed, numRuns: 300 },
    );
  });

  it('never throws and always returns plain JSON, whatever the input', async () => {
    const split = await shellSplitter();
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'ab $(){}[]|&;<>\'"`\\\n#=*~!-'.split('')), maxLength: 60 }),
        (src) => {
          const s = split(src);
          return JSON.parse(JSON.stringify(s)) !== null && Array.isArray(s.commands);
        },
      ),
      { seed, numRuns: 300 },
    );
  });
});

describe('regressions', () => {
  // Found by the chain property (seed 686225164): tree-sitter-bash parsed the line after a `|&` pipeline
  // into the previous command's arguments, so "ls rm -rf build" looked like an allowed `ls`.
  it('refuses a command whose words a newline separates (a misparse), instead of allowing it', async () => {
    const split = await shellSplitter();
    const src = 'ls && ls |& ls | ls\nrm -rf build && ls';
    const s = split(src);
    expect(s.parseError).toMatch(/line break inside "ls\nrm -rf build"/);
    expect(decide({ tool: 'terminal', input: src, split: s }, merged(BYPASS_POLICY)).outcome).toBe('deny');
    expect(split('echo a \\\nb').parseError).toBeUndefined();
    expect(split("echo 'a\nb'").parseError).toBeUndefined();
  });
});
