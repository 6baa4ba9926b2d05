/**
 * @module
 * Pure text helpers shared by the edit kernel: line splitting, the
 * comparison-only normalization of a line (whitespace, NBSP, smart quotes,
 * dashes), the bounded Levenshtein behind `fuzzyEq`, and the error texts the
 * agent sees. Nothing here ever changes the text that is written.
 */

/** Per-line similarity at or above which two trimmed lines count as "fuzzy equal" (zed `THRESHOLD`). */
export const FUZZY_LINE_THRESHOLD = 0.8;

/** A `[start, end)` range of UTF-16 offsets into a text. */
export type TextRange = { start: number; end: number };

/**
 * Lines as Rust's `str::lines` gives them: split on `\n`, a trailing `\r`
 * stripped from each, and no empty last element when the text ends in `\n`.
 */
export function textLines(text: string): string[] {
  if (text === '') return [];
  const parts = text.split('\n');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/** Start offset of every line of `text` (line i spans `starts[i]` up to its `\n`). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** 0-based row of `offset` given `lineStarts(text)`. */
export function rowOf(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const ODD_SPACES = /[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\ufeff]/g;
const SINGLE_QUOTES = /[\u2018\u2019\u201a\u201b\u2032]/g;
const DOUBLE_QUOTES = /[\u201c\u201d\u201e\u201f\u2033]/g;
const DASHES = /[\u2010-\u2015\u2212]/g;
const WS_RUN = /[ \t\r\f\v]+/g;
const NON_ASCII = /[^\x00-\x7f]/;
const NEEDS_COLLAPSE = /[\t\r\f\v]| {2}/;

/**
 * The form of a line used only for comparison: odd spaces (NBSP …) become
 * spaces, smart quotes and dashes become ASCII, whitespace runs collapse to
 * one space, and both ends are trimmed (so indentation, tabs vs spaces,
 * trailing whitespace and `\r` never matter).
 */
export function normalizeLine(line: string): string {
  let s = line;
  // Fast path: pure ASCII lines only need whitespace handling.
  if (NON_ASCII.test(s)) {
    s = s.replace(ODD_SPACES, ' ').replace(SINGLE_QUOTES, "'").replace(DOUBLE_QUOTES, '"').replace(DASHES, '-');
  }
  s = s.trim();
  return NEEDS_COLLAPSE.test(s) ? s.replace(WS_RUN, ' ') : s;
}

/** Levenshtein distance over UTF-16 units, giving up (returning `max + 1`) once it must exceed `max`. */
export function boundedLevenshtein(a: string, b: string, max: number): number {
  if (a === b) return 0;
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (n === 0) return m;
  if (m === 0) return n;
  let prev = new Uint32Array(m + 1);
  let cur = new Uint32Array(m + 1);
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const sub = prev[j - 1]! + (ca === b.charCodeAt(j - 1) ? 0 : 1);
      const del = prev[j]! + 1;
      const ins = cur[j - 1]! + 1;
      const v = sub < del ? Math.min(sub, ins) : Math.min(del, ins);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    const t = prev;
    prev = cur;
    cur = t;
  }
  return prev[m]!;
}

/** `1 - levenshtein / max(len)` (strsim's `normalized_levenshtein`), 1 for two empty strings. */
export function similarity(a: string, b: string): number {
  const len = Math.max(a.length, b.length);
  if (len === 0) return 1;
  return 1 - boundedLevenshtein(a, b, len) / len;
}

/**
 * Whether two already-normalized lines are fuzzy equal: a cheap length bound,
 * a character-histogram bound, then a bounded Levenshtein (zed `fuzzy_eq`).
 */
export function fuzzyEq(a: string, b: string): boolean {
  if (a === b) return true;
  const len = Math.max(a.length, b.length);
  if (len === 0) return true;
  if (1 - Math.abs(a.length - b.length) / len < FUZZY_LINE_THRESHOLD) return false;
  const max = Math.floor(len * (1 - FUZZY_LINE_THRESHOLD) + 1e-9);
  if (histogramDistance(a, b) > 2 * max) return false;
  return boundedLevenshtein(a, b, max) <= max;
}

/** A 64-bucket character histogram (saturating at 255); see `fuzzyEqHist`. */
export function lineHistogram(s: string): Uint8Array {
  const h = new Uint8Array(64);
  fillHistogram(s, h, 0);
  return h;
}

/** `lineHistogram` of `s` written into `into` at `at` (64 bytes there, zero before): many lines, one allocation. */
export function fillHistogram(s: string, into: Uint8Array, at: number): void {
  for (let i = 0; i < s.length; i++) {
    const k = at + (s.charCodeAt(i) & 63);
    if (into[k]! < 255) into[k]!++;
  }
}

/**
 * `fuzzyEq` with precomputed histograms: the L1 distance of two histograms
 * is at most twice the edit distance, so most dissimilar pairs are rejected
 * in 64 steps without running Levenshtein. (Saturation only lowers the bound.)
 * `hb` holds `b`'s at `at` (a flat store of many lines' histograms).
 */
export function fuzzyEqHist(a: string, ha: Uint8Array, b: string, hb: Uint8Array, at = 0): boolean {
  if (a === b) return true;
  const len = Math.max(a.length, b.length);
  if (len === 0) return true;
  if (1 - Math.abs(a.length - b.length) / len < FUZZY_LINE_THRESHOLD) return false;
  const max = Math.floor(len * (1 - FUZZY_LINE_THRESHOLD) + 1e-9);
  // Given up as soon as the distance passes the bound: most candidates are far apart early.
  const bound = 2 * max;
  let d = 0;
  for (let i = 0; i < 64; i++) {
    const x = ha[i]! - hb[at + i]!;
    d += x < 0 ? -x : x;
    if (d > bound) return false;
  }
  return boundedLevenshtein(a, b, max) <= max;
}

function histogramDistance(a: string, b: string): number {
  const ha = lineHistogram(a);
  const hb = lineHistogram(b);
  let d = 0;
  for (let i = 0; i < 64; i++) d += Math.abs(ha[i]! - hb[i]!);
  return d;
}

/** Exact error texts (zed `extract_match`), kept in one place so tests and the CLI agree. */
export const editErrors = {
  noMatch: (index: number, stale: boolean) =>
    `Could not find matching text for edit at index ${index}. The old_text did not match any content in the file.` +
    `${stale ? ' The file has changed on disk since you last read it.' : ''} ` +
    `Please read the file again to get the current content.`,
  ambiguous: (index: number, lines: readonly number[]) =>
    `Edit ${index} matched multiple locations in the file at lines: ${lines.join(', ')}. ` +
    `Please provide more context in old_text to uniquely identify the location.`,
  emptyOldText: (index: number) =>
    `Could not find matching text for edit at index ${index}. The old_text is empty. ` +
    `Put the lines to replace in old_text, or use write_file to replace the whole file.`,
  noOp: (index: number) =>
    `Edit ${index} makes no change: old_text and new_text are identical. Put the replacement text in new_text.`,
  noEdits: () => 'The edits array is empty. Give at least one { "old_text", "new_text" } edit.',
} as const;
