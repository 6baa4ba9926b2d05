/**
 * @module
 * Why `shell-parse.ts` refuses an input, where bash and tree-sitter-bash could read it differently: a here-doc
 * whose end they could place apart, two words bash joins, a syntax error; and `clip`, the one way a message
 * quotes the input.
 */
import type { Node } from 'web-tree-sitter';

/** Why a here-doc's end cannot be found reliably (see the `heredoc_start` case), or undefined. */
export function heredocProblem(start: Node, source: string): string | undefined {
  const raw = start.text;
  if (/['"\\$`]/.test(raw)) {
    return (
      `the here-doc delimiter ${clip(raw)} is quoted or escaped; bash and the permission check could ` +
      `disagree on where the here-doc ends. Use a bare delimiter (<<EOF), or write the text with file.write`
    );
  }
  const op = start.parent?.children.find((c) => c && !c.isNamed && c.type.startsWith('<<'))?.type;
  // The body and its end line follow the operator's line; look from the operator to the end of the input.
  const after = source.slice(start.startIndex);
  if (/\\\r?\n/.test(after)) {
    return (
      `a line continuation (backslash at the end of a line) follows the here-doc <<${clip(raw)}; bash joins ` +
      `those lines before it looks for the delimiter, so the here-doc could end elsewhere than checked. ` +
      `Remove the continuation, or write the text with file.write`
    );
  }
  if (op === '<<-' && /\n\t/.test(after)) {
    return (
      `the here-doc <<-${clip(raw)} has lines starting with tabs, which bash strips before it compares ` +
      `them with the delimiter; use <<${clip(raw)} without tab indentation`
    );
  }
  return undefined;
}

/** Two words bash reads as one (`'r'\m`): refused, as the check would judge other words than bash runs. */
export function joinedMessage(text: string, prev: Node, next: Node): string {
  return (
    `"${clip(prev.text)}" and "${clip(next.text)}" in "${clip(text)}" touch with no blank between them: bash ` +
    'reads one word there, the check read two. Quote the whole word, or put a blank between the words'
  );
}

export function describeError(root: Node): string {
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'ERROR' || n.isMissing) {
      const what = n.isMissing ? `missing "${n.type}"` : `unexpected "${clip(n.text)}"`;
      return `syntax error at line ${n.startPosition.row + 1}, column ${n.startPosition.column + 1}: ${what}`;
    }
    for (let i = n.childCount - 1; i >= 0; i--) {
      const c = n.child(i);
      if (c && (c.hasError || c.isMissing)) stack.push(c);
    }
  }
  return 'syntax error';
}

export function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
