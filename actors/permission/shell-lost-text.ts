/**
 * @module
 * Text of a shell input that no token of its tree-sitter-bash tree holds, and the one known case of it that is
 * repaired. bash reads every character of an input; a split judges only what the tree holds, so a character the
 * tree lost is a word the gate did not judge.
 *
 * tree-sitter-bash's external scanner (as @vscode/tree-sitter-wasm 0.3.1 ships it), looking for a variable name
 * where a command may start, reads a `-` and then skips the blanks after it; a skip moves the start of the token,
 * so the `-` ends up in no token, and the tree has no error. `- a=1` parses as the assignment `a=1`,
 * `x=1 - a=1 ls` as `x=1 a=1 ls`, `ls && - 00=` as `ls && 00=`, `export - a=1` as `export a=1`; bash runs the
 * command `-` (a program any agent can put on PATH) with the rest as its words. Found by a random seed of the
 * permission-patterns property (`- 00=`). Quoted, `'-'`, which bash reads as the same word, the `-` is a token.
 */
import type { Node, Parser, Tree } from 'web-tree-sitter';
import { clip } from './shell-refusals.ts';

/** A run of characters bash reads that no token holds. */
export type LostText = { index: number; text: string };

/** Nodes whose text between their children is their own (the lines of a here-doc around its expansions). */
const OWN_TEXT: ReadonlySet<string> = new Set(['heredoc_body', 'string', 'translated_string']);

/**
 * Runs of `source` that no token of `tree` holds, less bash's blanks (space, tab, line break) and line
 * continuations (backslash-newline), which separate tokens. tree-sitter-bash also skips other whitespace, such as
 * a carriage return or an escaped blank after a blank (`echo \ x`), that bash reads as part of a word: those are
 * lost text too. Iterative (a cursor, no recursion): an input nested thousands deep must not overflow the stack.
 */
export function lostText(tree: Tree, source: string): LostText[] {
  const lost: LostText[] = [];
  const cursor = tree.walk();
  // Each open node: how far its text is accounted for, where it ends, and whether its gaps are its own text.
  const open: { at: number; end: number; own: boolean }[] = [{ at: 0, end: source.length, own: false }];
  try {
    for (;;) {
      const parent = open[open.length - 1]!;
      const { startIndex: start, endIndex: end, nodeType: type } = cursor;
      if (!parent.own) gapsIn(source, parent.at, start, lost);
      parent.at = Math.max(parent.at, end);
      if (cursor.gotoFirstChild()) {
        open.push({ at: start, end, own: OWN_TEXT.has(type) });
        continue;
      }
      // Past a node's last child its own text is accounted for; past the root's, the whole input's.
      while (!cursor.gotoNextSibling()) {
        const done = open.pop()!;
        if (!done.own) gapsIn(source, done.at, done.end, lost);
        if (!cursor.gotoParent()) return lost;
      }
    }
  } finally {
    cursor.delete();
  }
}

function gapsIn(source: string, from: number, to: number, lost: LostText[]): void {
  let run = -1;
  for (let i = from; i <= to; i++) {
    const c = source[i];
    const separates = i === to || c === ' ' || c === '\t' || c === '\n' || (c === '\\' && source[i + 1] === '\n');
    if (!separates) {
      if (run < 0) run = i;
      continue;
    }
    if (run >= 0) lost.push({ index: run, text: source.slice(run, i) });
    run = -1;
    if (c === '\\') i++;
  }
}

/** Where bash reads a lone `-` as a word: a command's name or argument, or a word of `export`/`declare`/… . */
const WORD_PARENTS: ReadonlySet<string> = new Set(['command_name', 'command', 'declaration_command']);

/**
 * The input parsed again with each lost `-` quoted, `'-'` (the same word to bash), when every lost run is a lone
 * `-` and the new tree holds each as a word and loses nothing; otherwise undefined (the caller refuses the input).
 * Not `\-`: after a line break tree-sitter-bash joins `\-` to the line before (`ls<newline>\- x` is one command).
 * The caller owns the returned tree. Its text, the node texts a split quotes (`$('-' a=1)`) included, is the
 * input with the quotes.
 */
export function reparseLostDashes(
  parser: Parser,
  source: string,
  lost: readonly LostText[],
): { tree: Tree; source: string } | undefined {
  if (lost.length === 0 || lost.some((l) => l.text !== '-')) return undefined;
  let repaired = '';
  let from = 0;
  for (const { index } of lost) {
    repaired += `${source.slice(from, index)}'-'`;
    from = index + 1;
  }
  repaired += source.slice(from);
  const tree = parser.parse(repaired);
  if (!tree) return undefined;
  const words = lost.map(({ index }, k) => tree.rootNode.descendantForIndex(index + 2 * k, index + 2 * k + 3));
  if (lostText(tree, repaired).length === 0 && words.every(isQuotedDash)) return { tree, source: repaired };
  tree.delete();
  return undefined;
}

function isQuotedDash(node: Node | null): boolean {
  return node?.type === 'raw_string' && node.text === "'-'" && WORD_PARENTS.has(node.parent?.type ?? '');
}

/** Why an input whose text the parser lost is refused. */
export function lostMessage(source: string, lost: readonly LostText[]): string {
  const first = lost[0]!;
  return (
    `the shell parser lost ${JSON.stringify(clip(first.text))} at position ${first.index} (0-based) of ` +
    `"${clip(source)}": bash reads it, the check would judge the command without it. Quote it, or put it ` +
    'elsewhere in the command'
  );
}
