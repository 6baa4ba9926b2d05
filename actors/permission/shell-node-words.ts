/**
 * @module
 * The words of a tree-sitter-bash node as bash reads them: quote removal, backslash escapes, `$'…'`
 * decoding and brace expansion, with each piece marked quoted or not (an unquoted `*` globs, an unquoted
 * line break ends a command). Used by `shell-parse.ts`; the pure string rules are in
 * `machines/permission/shell-words.ts`.
 */
import type { Node } from 'web-tree-sitter';
import { decodeAnsiC, expandBraces, type WordSegment } from '../../machines/permission/shell-words.ts';

export const SUBSTITUTIONS = new Set(['command_substitution', 'process_substitution']);
export const EXPANSIONS = new Set(['simple_expansion', 'expansion', 'arithmetic_expansion', ...SUBSTITUTIONS]);

/** The words of a simple command's name and arguments, after quote removal and brace expansion. */
export function commandWords(node: Node): string[] {
  const words: string[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    const field = node.fieldNameForChild(i);
    if (!child || (field !== 'name' && field !== 'argument') || isTranslationMark(child)) continue;
    if (isRedirectDescriptor(child)) continue;
    words.push(...(wordValues(child.type === 'command_name' ? (child.firstChild ?? child) : child) ?? []));
  }
  for (const extra of redirectArguments(node)) words.push(...(wordValues(extra) ?? []));
  return words;
}

/**
 * The words tree-sitter-bash puts in a redirect after its target, which bash reads as arguments of the
 * command: in `rm >/dev/null -rf /` the target is `/dev/null` and bash runs `rm -rf /`, while the grammar
 * makes `-rf` and `/` more destinations of the redirect. The grammar also hangs such a redirect on the whole
 * pipeline or list when the command ends one (`ls && rm 2>x -rf /`), so this climbs while the command is the
 * last one. In source order; they follow the command's own words (a redirect before the name has one target).
 */
export function redirectArguments(command: Node): Node[] {
  const out: Node[] = [...extraDestinations(command)];
  let node = command;
  for (let parent = node.parent; parent; node = parent, parent = node.parent) {
    if (parent.type === 'redirected_statement' && parent.childForFieldName('body')?.equals(node))
      out.push(...extraDestinations(parent));
    else if (!['pipeline', 'list', 'negated_command'].includes(parent.type) || !parent.lastNamedChild?.equals(node))
      break;
  }
  return out;
}

/**
 * The words after each redirect's target held by `holder`: a file redirect's destinations after the first, and
 * the words after a here-doc's delimiter on its line (`nice <<EOF rm x` runs `nice rm x`). A number touching the
 * next redirect is its descriptor (`0<f 0<g rm x` runs `rm x`).
 */
export function extraDestinations(holder: Node): Node[] {
  return holder.namedChildren
    .flatMap((r) => {
      if (r?.type === 'file_redirect') return r.childrenForFieldName('destination').slice(1);
      if (r?.type === 'heredoc_redirect') {
        // Those on its line; a word holding a line break starts the body misread as words (refused elsewhere).
        const words = r.childrenForFieldName('argument');
        const broken = words.findIndex((w) => !!w && w.text.includes('\n'));
        return broken < 0 ? words : words.slice(0, broken);
      }
      return [];
    })
    .filter((w): w is Node => !!w && !isRedirectDescriptor(w));
}

/** The simple command that ends `node` (through redirects, pipelines and lists), if a simple command does. */
export function lastCommand(node: Node | null): Node | undefined {
  if (!node) return undefined;
  if (node.type === 'command') return node;
  if (node.type === 'redirected_statement') return lastCommand(node.childForFieldName('body'));
  if (node.type === 'pipeline' || node.type === 'list' || node.type === 'negated_command')
    return lastCommand(node.lastNamedChild);
  return undefined;
}

/**
 * Whether two sibling words touch with no unescaped blank between them, so that bash reads them as one word:
 * tree-sitter-bash splits a word at a backslash after a quoted or braced piece (`'r'\m` is `r` and `\m`;
 * bash runs `rm`), and at a line continuation (`r\<newline>m`).
 */
export function joinedWords(prev: Node, next: Node): boolean {
  const parent = prev.parent ?? next.parent;
  if (!parent) return false;
  const gap = parent.text.slice(prev.endIndex - parent.startIndex, next.startIndex - parent.startIndex);
  for (let i = 0; i < gap.length; i++) {
    if (gap[i] === '\\') i++;
    else if (gap[i] === ' ' || gap[i] === '\t' || gap[i] === '\n') return false;
  }
  return true;
}

/**
 * Whether bash reads `node`, a word before a command's name, as an assignment. bash decides by the word's text: an
 * unquoted name (a letter or `_`, then letters, digits and `_`), maybe a subscript, then `=` or `+=`.
 * tree-sitter-bash disagrees both ways: it reads `_=1` (also `_+=1`, `_[0]=1`) as a word, so `_=1 rm -rf /` was
 * judged as the command `_=1` (past a deny rule on rm and the built-in rules), and `0a=1`, `-x=1` or `ä=1` as
 * assignments, which bash runs as the command. A subscript tree-sitter-bash read is taken as it read it.
 */
export function isAssignmentWord(node: Node): boolean {
  if (node.type === 'variable_assignment') return /^[A-Za-z_][A-Za-z0-9_]*(\[|\+?=)/.test(node.text);
  return /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/.test(node.text);
}

/**
 * The `$` of a locale-translated string `$"…"` where tree-sitter-bash leaves it beside the string (as an
 * argument, `$"a""b"` included, or inside a word: `r$"m"`): bash reads `$"m"` as `m`, so the `$` is no part
 * of the word.
 */
export function isTranslationMark(node: Node): boolean {
  const next = node.nextSibling;
  if (node.isNamed || node.type !== '$' || !next || next.startIndex !== node.endIndex) return false;
  // `$"a""b"`: the string is the start of a concatenation.
  return next.type === 'string' || (next.type === 'concatenation' && next.firstChild?.type === 'string');
}

/** A word's values after quote removal and brace expansion; undefined when braces expand too far. */
export function wordValues(node: Node): string[] | undefined {
  return expandBraces(segments(node));
}

/** A word's text after quote removal (no brace expansion). */
export function wordText(node: Node): string {
  return segments(node)
    .map((s) => s.text)
    .join('');
}

export function segments(node: Node): WordSegment[] {
  switch (node.type) {
    case 'word':
      return unescapeWord(node.text);
    case 'raw_string':
      return [{ text: node.text.slice(1, -1), quoted: true }];
    case 'ansi_c_string':
      return [{ text: decodeAnsiC(node.text.slice(2, -1)), quoted: true }];
    case 'translated_string':
      return node.namedChildren.flatMap((c) => (c ? segments(c) : []));
    case 'string': {
      // tree-sitter-bash leaves a line break between two parts out of both (`"ls<newline>rm x"` is `ls` and
      // `rm x`), so the text between the parts is taken from the string itself: bash -c runs two commands there.
      const out: WordSegment[] = [];
      const gap = (from: number, to: number) => {
        if (to > from) out.push({ text: unescapeDouble(node.text.slice(from, to)), quoted: true });
      };
      let at = 1;
      for (const c of node.namedChildren) {
        if (!c) continue;
        gap(at, c.startIndex - node.startIndex);
        out.push({ text: c.type === 'string_content' ? unescapeDouble(c.text) : c.text, quoted: true });
        at = c.endIndex - node.startIndex;
      }
      gap(at, node.text.length - 1);
      return out;
    }
    case 'concatenation':
    case 'variable_assignment':
      return node.children
        .filter((c): c is Node => !!c && !isTranslationMark(c))
        .flatMap((c) => (c.isNamed ? segments(c) : [{ text: c.type, quoted: false }]));
    default:
      return EXPANSIONS.has(node.type) ? [{ text: node.text, quoted: true }] : [{ text: node.text, quoted: false }];
  }
}

export function unquotedBreak(segment: WordSegment): boolean {
  return !segment.quoted && segment.text.includes('\n');
}

function unescapeWord(text: string): WordSegment[] {
  if (!text.includes('\\')) return [{ text, quoted: false }];
  const out: WordSegment[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\' && i + 1 < text.length) {
      i++;
      if (text[i] !== '\n') out.push({ text: text[i]!, quoted: true });
    } else out.push({ text: text[i]!, quoted: false });
  }
  return out;
}

function unescapeDouble(text: string): string {
  return text.replace(/\\([\\"$`\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
}

/**
 * Bodies of here-docs and here-strings attached to a command: its own, and those of the redirected statement it
 * ends (tree-sitter-bash hangs `ls && sh <<EOF`'s here-doc on the whole list, `! sh <<EOF`'s on the negation).
 */
export function stdinScripts(command: Node): string[] {
  const scripts = redirectBodies(command);
  let up = command.parent;
  while (up && (up.type === 'list' || up.type === 'pipeline' || up.type === 'negated_command')) up = up.parent;
  if (up?.type === 'redirected_statement' && lastCommand(up.childForFieldName('body'))?.id === command.id)
    scripts.push(...redirectBodies(up));
  return scripts;
}

/** Bodies of the here-docs and here-strings that are children of `holder` (a command or redirected statement). */
export function redirectBodies(holder: Node): string[] {
  const scripts: string[] = [];
  for (const c of holder.namedChildren) {
    if (c?.type === 'herestring_redirect') {
      const content = c.namedChildren.find((n) => n && n.type !== 'file_descriptor');
      if (content) scripts.push(wordText(content));
    }
    if (c?.type === 'heredoc_redirect') {
      const body = c.namedChildren.find((n) => n?.type === 'heredoc_body');
      const start = c.namedChildren.find((n) => n?.type === 'heredoc_start')?.text ?? '';
      // An unquoted here-doc's body reaches the reader with `\\`, `\$` and `\`` taken as escapes (`r\\m` is
      // `r\m`, which sh runs as rm); a quoted one's, as written.
      if (body) scripts.push(/['"\\]/.test(start) ? body.text : body.text.replace(/\\([\\$`])/g, '$1'));
    }
  }
  return scripts;
}

/**
 * A number touching the redirect after it (`0<<<`, `0<x`, `0>&1`): the descriptor it redirects, not a word.
 * tree-sitter-bash reads descriptor 0 so; the redirect is the command's next sibling when the number ends it.
 * Not before `&>`, which takes no descriptor (`echo 1&>x` writes "1").
 */
export function isRedirectDescriptor(child: Node): boolean {
  // `0</dev/null rm x`: tree-sitter-bash makes the 0 the command's name and `rm x` words of the redirect after
  // the command (bash runs `rm x` with its input from /dev/null); the name was read as a program `0`.
  const number = child.type === 'command_name' && child.childCount === 1 ? child.firstChild : child;
  if (number?.type !== 'number') return false;
  let at: Node = child;
  let next = at.nextSibling;
  while (!next && at.parent && at.parent.type !== 'program') {
    at = at.parent;
    next = at.nextSibling;
  }
  return !!next && next.type.endsWith('_redirect') && next.startIndex === number.endIndex && /^[<>]/.test(next.text);
}
