/**
 * The words of tree-sitter-bash nodes (`shell-node-words.ts`), one function at a time: `commandWords` (a
 * pipeline stage's words), `segments` with the quoted flag of each piece (it decides brace expansion and
 * glob names), the `$` of `$"…"`, `unescapeWord`'s edges and `unquotedBreak`. Where a value concerns shell
 * meaning it is what bash 5.2.15 printed for `printf '<%s>' <the words>` (the comment beside it).
 */
import type { Node, Parser } from 'web-tree-sitter';
import { parserFor } from '../../../actors/common/tree-sitter.ts';
import {
  commandWords,
  isTranslationMark,
  joinedWords,
  lastCommand,
  redirectArguments,
  segments,
  unquotedBreak,
  wordText,
  wordValues,
} from '../../../actors/permission/shell-node-words.ts';

let parser: Parser;
beforeAll(async () => {
  parser = await parserFor('bash');
});

/** Every node of `type` in `src`, in source order. */
function all(src: string, type: string): Node[] {
  const root = parser.parse(src)!.rootNode;
  const out: Node[] = [];
  const visit = (n: Node) => {
    if (n.type === type) out.push(n);
    for (const c of n.children) if (c) visit(c);
  };
  visit(root);
  return out;
}

/** The argument nodes of the first command of `src` (the name's word when `name` is set). */
function args(src: string): Node[] {
  const command = all(src, 'command')[0]!;
  const out: Node[] = [];
  for (let i = 0; i < command.childCount; i++) {
    if (command.fieldNameForChild(i) === 'argument') out.push(command.child(i)!);
  }
  return out;
}

const q = (text: string) => ({ text, quoted: true });
const u = (text: string) => ({ text, quoted: false });

describe('commandWords: the words of each pipeline stage', () => {
  it.each([
    // bash: <ls><-a> and <cat>
    ['"l"s -a | c"a"t', [['ls', '-a'], ['cat']]],
    // bash: <echo><e><x>: brace expansion in the name, a quoted piece first
    ['"e"{cho,} x | cat', [['echo', 'e', 'x'], ['cat']]],
    // bash: <x><a> (translated string as the name)
    ['$"x" a | cat', [['x', 'a'], ['cat']]],
    // bash: <$><x><ab><$>: a $ apart from the string is a word; $"a"b is ab; a trailing $ is a word
    ['echo $ "x" $"a"b $ | cat', [['echo', '$', 'x', 'ab', '$'], ['cat']]],
    // bash: <xa><xb><{c,d}><e><f,g>
    ['echo x{a,b} "{c,d}" {e,"f,g"} | cat', [['echo', 'xa', 'xb', '{c,d}', 'e', 'f,g'], ['cat']]],
    // Assignments and redirect targets are not words of the command; a word after a target is (bash: ls y).
    ['A=1 ls >out y 2>&1 | B=2 cat', [['ls', 'y'], ['cat']]],
    ['ls >out | cat 2>&1 -n', [['ls'], ['cat', '-n']]],
    ['A=1 ls y | cat', [['ls', 'y'], ['cat']]],
    // A word whose braces expand too far gives no words (the splitter refuses the command).
    ['echo {1..300} x | cat', [['echo', 'x'], ['cat']]],
    // So does a word after a redirect target.
    ['ls | cat 2>x {1..300}', [['ls'], ['cat']]],
  ])('%j', (src, expected) => {
    expect(all(src, 'command').map(commandWords)).toEqual(expected);
  });
});

describe('segments: each piece and whether it was quoted', () => {
  it.each([
    // An unquoted word: no backslash, one piece.
    ['echo ab*', [[u('ab*')]]],
    // bash: <a b>: the escaped blank is quoted
    ['echo a\\ b', [[u('a'), q(' '), u('b')]]],
    // bash: <a\>: an escaped backslash
    ['echo a\\\\', [[u('a'), q('\\')]]],
    // bash: <*>: an escaped star does not glob
    ['echo \\*', [[q('*')]]],
    // bash: <{a,b}>
    ["echo '{a,b}'c", [[q('{a,b}'), u('c')]]],
    // bash: <a	b>
    ["echo $'a\\tb'", [[q('a\tb')]]],
    // bash: <a"b\c$d`e\f>: in double quotes only \ " $ ` and a newline are escaped
    ['echo "a\\"b\\\\c\\$d\\`e\\f"', [[q('a"b\\c$d`e\\f')]]],
    // bash: <pq>: backslash-newline inside double quotes is removed
    ['echo "p\\\nq"', [[q('pq')]]],
    // An expansion inside a string is its own quoted piece (it is reported as unsafe).
    ['echo "a$x"', [[q('a'), q('$x')]]],
    // bash: <d*> then globbing: the star alone is unquoted
    ['echo "d"*', [[q('d'), u('*')]]],
    // bash: <rm>: the $ of $"m" is no part of the word
    ['echo r$"m"', [[u('r'), q('m')]]],
    // bash: <ab>
    ['echo $"a"b', [[u('$')], [q('a'), u('b')]]],
    // Expansions are quoted pieces (never globbed or brace-expanded by the gate).
    ['echo $x ${x} $((1)) $(id) <(ls)', [[q('$x')], [q('${x}')], [q('$((1))')], [q('$(id)')], [q('<(ls)')]]],
  ])('%j', (src, expected) => {
    expect(args(src).map(segments)).toEqual(expected);
  });

  it('leaves the text of an expansion inside double quotes as written', () => {
    // Only the string's own text loses its backslashes; the substitution is reported (unsafe) as typed.
    expect(args('echo "$(echo \\"a\\")"').map(segments)).toEqual([[q('$(echo \\"a\\")')]]);
  });

  it('reads a translated string as its string: $"a$y"', () => {
    const node = all('$"a$y" x', 'translated_string')[0]!;
    expect(segments(node)).toEqual([q('a'), q('$y')]);
  });

  it('reads an assignment as name, =, value: A="b c" and B=$x', () => {
    const [a, b] = all('A="b c" B=$x ls', 'variable_assignment');
    expect(segments(a!)).toEqual([u('A'), u('='), q('b c')]);
    expect(segments(b!)).toEqual([u('B'), u('='), q('$x')]);
    expect(segments(all('A+=x ls', 'variable_assignment')[0]!)).toEqual([u('A'), u('+='), u('x')]);
    expect(segments(all('A=1 ls', 'variable_name')[0]!)).toEqual([u('A')]);
  });
});

describe('wordValues and wordText: quote removal, brace expansion only of unquoted braces', () => {
  it.each([
    // bash: <{a,b}>
    ['"{"a,b}', ['{a,b}']],
    // bash: <a}><b}>
    ['{a,b}"}"', ['a}', 'b}']],
    // bash: <{a,b}>
    ['\\{a,b}', ['{a,b}']],
    // bash: <a,b><c>
    ['{a\\,b,c}', ['a,b', 'c']],
    // bash: <a><b>
    ['{"a",b}', ['a', 'b']],
    // bash: <xa><xb>
    ['"x"{a,b}', ['xa', 'xb']],
    // bash: <a	bx><a	by>
    ["$'a\\tb'{x,y}", ['a\tbx', 'a\tby']],
    // bash: <{a,b}c>
    ["'{a,b}'c", ['{a,b}c']],
    // bash: <A=b1><A=b2> (an argument, not an assignment)
    ['A=b{1,2}', ['A=b1', 'A=b2']],
  ])('echo %s', (word, expected) => {
    const [node] = args(`echo ${word}`);
    expect(wordValues(node!)).toEqual(expected);
  });

  it('gives 256 results and refuses 257', () => {
    expect(wordValues(args('echo {1..256}')[0]!)).toHaveLength(256);
    expect(wordValues(args('echo {1..257}')[0]!)).toBeUndefined();
  });

  it('wordText removes quotes and leaves braces alone', () => {
    expect(args('echo "a"{b,c} x\\ y').map(wordText)).toEqual(['a{b,c}', 'x y']);
  });
});

describe('isTranslationMark: the $ of $"…"', () => {
  const marks = (src: string) => all(src, '$').map(isTranslationMark);
  it('is the $ right before a string, or before a concatenation that starts with one', () => {
    // echo $ "x" $"a"b $"c" $ : the first $ is apart from its string, the last ends the input.
    expect(marks('echo $ "x" $"a"b $"c" $')).toEqual([false, true, true, false]);
  });

  it('is not the $ of an expansion', () => {
    // ${y} has no `$` node of its own (its first token is `${`).
    expect(marks('echo $x ${y} $$')).toEqual([false, false]);
  });

  it('is not a $ before a concatenation that starts with a word', () => {
    // In an ERROR node, as tree-sitter-bash reads `$:a"b"` (bash prints <$:ab>).
    expect(marks('echo $:a"b"')).toEqual([false]);
  });

  it('is not another anonymous node right before a string: the = of A="b"', () => {
    const eq = all('A="b" ls', '=')[0]!;
    expect(eq.nextSibling?.type).toBe('string');
    expect(isTranslationMark(eq)).toBe(false);
  });
});

describe('unquotedBreak', () => {
  it('is an unquoted piece holding a line break', () => {
    expect(unquotedBreak(u('a\nb'))).toBe(true);
    expect(unquotedBreak(u('\n'))).toBe(true);
    expect(unquotedBreak(q('a\nb'))).toBe(false);
    expect(unquotedBreak(u('a b'))).toBe(false);
    expect(unquotedBreak(u(''))).toBe(false);
  });
});

describe('redirectArguments: words after a redirect target are arguments', () => {
  it.each([
    // bash runs rm -rf / (its output to /dev/null)
    ['rm >/dev/null -rf /', ['-rf', '/']],
    // bash: <hi><there> on stderr
    ['echo >&2 hi there', ['hi', 'there']],
    ['ls a >x b 2>y c', ['b', 'c']],
    // A redirect before the name has the one target.
    ['>x rm a', []],
    ['ls >x', []],
  ])('%j', (src, expected) => {
    const command = all(src, 'command')[0]!;
    expect(redirectArguments(command).map(wordText)).toEqual(expected);
  });

  it('gives a redirect hung on a pipeline or list to its last command only', () => {
    // bash: ls y, then cat z (cat's stderr to x)
    for (const src of ['ls y | cat 2>x z', 'ls y && cat 2>x z', 'ls y; cat 2>x z', 'ls y | ls | cat 2>x z']) {
      const commands = all(src, 'command');
      expect(
        commands.map((c) => redirectArguments(c).map(wordText)),
        src,
      ).toEqual([...commands.slice(0, -1).map(() => []), ['z']]);
    }
    // A command in a subshell does not take the words after the subshell's redirect (bash refuses them).
    expect(redirectArguments(all('(ls) 2>x y', 'command')[0]!)).toEqual([]);
  });
});

describe('joinedWords: siblings bash reads as one word', () => {
  const pairs = (src: string) => {
    const command = all(src, 'command').at(-1)!;
    const nodes = command.children.filter((c, i) => !!c && command.fieldNameForChild(i) === 'argument') as Node[];
    return nodes.slice(1).map((n, i) => joinedWords(nodes[i]!, n));
  };
  it.each([
    // bash: <rm>: tree-sitter-bash reads 'r' and \m
    ["echo 'r'\\m", [true]],
    // bash: <rm><rm>
    ['echo r{,}\\m', [true]],
    // bash: <a b>... as one word <"a"\ b> is <a b>
    ['echo "a"\\ b', [true]],
    ['echo a b', [false]],
    ['echo a\tb', [false]],
    // A line continuation between blanks separates; bash: <a><b>
    ['echo a \\\nb', [false]],
    ['echo a\\\n b', [false]],
    // The gap is measured inside the command, wherever it starts in the input.
    ["ls; echo 'r'\\m x", [true, false]],
    ['ls; echo a b', [false]],
  ])('%j', (src, expected) => {
    expect(pairs(src)).toEqual(expected);
  });
});

describe('lastCommand: the simple command that ends a redirected statement', () => {
  it.each([
    ['ls && cat >x 2>y z', 'cat'],
    ['ls | cat >x 2>y z', 'cat'],
    ['ls >x 2>y z', 'ls'],
    ['(ls) >x y', undefined],
    ['if true; then ls; fi >x y', undefined],
  ])('%j', (src, expected) => {
    expect(lastCommand(all(src, 'redirected_statement')[0]!)?.text).toBe(expected);
  });
});
