/**
 * @module
 * A redirect as the gate judges it: `> target` (its operator and target word), except the harmless ones
 * (`/dev/null`, duplicating or closing a descriptor); a target tree-sitter-bash split where bash joins it is
 * refused.
 */
import type { Node } from 'web-tree-sitter';
import { joinedWords, wordText } from './shell-node-words.ts';
import { joinedMessage } from './shell-refusals.ts';
import { type Ctx, push } from './shell-split-state.ts';

export function handleRedirect(node: Node, ctx: Ctx): void {
  const op = node.children.find((c) => c && !c.isNamed)?.type ?? '>';
  const dests = node.childrenForFieldName('destination');
  // `> "/etc/pass"\wd` writes /etc/passwd; tree-sitter-bash reads the target "/etc/pass" and a word `\wd`.
  for (let k = 1; k < dests.length; k++) {
    if (joinedWords(dests[k - 1]!, dests[k]!))
      ctx.state.errors.push(joinedMessage(node.text, dests[k - 1]!, dests[k]!));
  }
  const dest = dests[0];
  if (!dest) return; // `2>&-` closes a descriptor
  const target = wordText(dest);
  if (target === '/dev/null') return;
  if ((op === '>&' || op === '<&') && (/^\d+-?$/.test(target) || target === '-')) return;
  const text = `${op} ${target}`;
  push(ctx, { kind: 'redirect', text, forms: [text], argv: [] });
}
