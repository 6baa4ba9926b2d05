/**
 * @module
 * Cutting text an agent controls down to what a message quotes of it: one implementation, so no quote ends
 * inside a surrogate pair (a lone half becomes U+FFFD, or an escape, wherever the message goes).
 */

/** Whether the UTF-16 unit at `i` of `text` is the first half of a surrogate pair. */
function highSurrogateAt(text: string, i: number): boolean {
  const c = text.charCodeAt(i);
  return c >= 0xd800 && c <= 0xdbff;
}

/** Where a cut of `text` to `end` units lands so that it keeps no half of a pair. */
function cutAt(text: string, end: number): number {
  return end > 0 && highSurrogateAt(text, end - 1) ? end - 1 : end;
}

/** `text` whole when it fits in `max` UTF-16 units, else its start and `…` in `max` units at most. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, cutAt(text, Math.max(0, max - 1)))}…`;
}

/** `text` cut to `max` UTF-16 units, saying how many were left out: for quotes the reader may need to find. */
export function clipCounted(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = cutAt(text, max);
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

/** `clip` of `text` on one line: runs of white space (line breaks too) are one space. */
export function clipLine(text: string, max: number): string {
  return clip(text.replace(/\s+/g, ' ').trim(), max);
}
