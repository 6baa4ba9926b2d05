/**
 * @module
 * The matcher's first resort (`edit-matcher.ts`): `old_text` found byte for byte, every occurrence (overlapping),
 * up to the count that makes it ambiguous. Pure.
 */
import { MAX_EXACT_MATCHES } from './edit-matcher-costs.ts';
import type { TextRange } from './edit-text.ts';

/**
 * All (overlapping) exact occurrences of `query`, at most `MAX_EXACT_MATCHES`; a trailing line ending is left out of
 * the range.
 */
export function findExactMatches(buffer: string, query: string): TextRange[] {
  if (query === '') return [];
  const trim = query.endsWith('\r\n') ? 2 : query.endsWith('\n') ? 1 : 0;
  const out: TextRange[] = [];
  for (let i = buffer.indexOf(query); i !== -1 && out.length < MAX_EXACT_MATCHES; i = buffer.indexOf(query, i + 1)) {
    out.push({ start: i, end: i + query.length - trim });
  }
  return out;
}
