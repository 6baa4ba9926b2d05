/**
 * @module
 * Marked text for edit tests: `«` and `»` mark expected ranges inline.
 * `parseMarked('a «b» c')` → `{ text: 'a b c', ranges: [{ start: 2, end: 3 }] }`.
 */
import type { TextRange } from '../../machines/edit/edit-text.ts';

export function parseMarked(marked: string): { text: string; ranges: TextRange[] } {
  let text = '';
  const ranges: TextRange[] = [];
  let open: number | undefined;
  for (const ch of marked) {
    if (ch === '«') {
      if (open !== undefined) throw new Error('nested « in marked text');
      open = text.length;
    } else if (ch === '»') {
      if (open === undefined) throw new Error('» without «');
      ranges.push({ start: open, end: text.length });
      open = undefined;
    } else text += ch;
  }
  if (open !== undefined) throw new Error('unclosed « in marked text');
  return { text, ranges };
}

/** Inverse of parseMarked: inserts « » around each range. */
export function mark(text: string, ranges: readonly TextRange[]): string {
  let out = '';
  let at = 0;
  for (const r of [...ranges].sort((a, b) => a.start - b.start)) {
    out += `${text.slice(at, r.start)}«${text.slice(r.start, r.end)}»`;
    at = r.end;
  }
  return out + text.slice(at);
}
