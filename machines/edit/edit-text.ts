/**
 * @module
 * Pure text helpers shared by the edit kernel: line splitting, the
 * comparison-only normalization of a line (whitespace, NBSP, smart quotes,
 * dashes), the bounded Levenshtein behind `fuzzyEq`, and the error texts the
 * agent sees. Nothing here ever changes the text that is written.
 */
import { clipLine } from '../../schemas/clip.ts';

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

/**
 * Work a search may do: `steps` so far (one per DP cell, or per Levenshtein cell) and the most it may take. A
 * Levenshtein run that would pass `limit` gives up, as if the strings were too far apart; the caller sees
 * `steps > limit` and knows the answer was cut short (`StreamingFuzzyMatcher` refuses the search then).
 */
export type Work = { steps: number; limit: number };

/** A histogram comparison's share of `Work`: at most 64 small steps, one DP cell's worth each few. */
export const HISTOGRAM_STEPS = 16;

/**
 * The rows `boundedLevenshtein` works in and `b`'s code units, kept between calls (a pair of lines is compared in
 * microseconds; allocating them took a quarter of the time). Pure all the same: nothing is kept between calls.
 */
const KEPT_ROW = 4096;
let rowA = new Int32Array(256);
let rowB = new Int32Array(256);
let codesB = new Int32Array(256);

/**
 * Levenshtein distance over UTF-16 units, giving up (returning `max + 1`) once it must exceed `max`, or once
 * `work` would pass its limit (each row's cells are charged to it). Only the band of cells within `max` of the
 * diagonal is computed (a path through any other costs more than `max`): a fuzzy-equal test of two lines
 * (`max` a fifth of their length) does 2/5 of the cells.
 */
export function boundedLevenshtein(a: string, b: string, max: number, work?: Work): number {
  if (a === b) return 0;
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (n === 0) return m;
  if (m === 0) return n;
  const width = Math.min(m, 2 * max + 1);
  // Not even one row fits: refused before its arrays are allocated (b may be megabytes long).
  if (work && work.steps + width > work.limit) {
    work.steps += width;
    return max + 1;
  }
  /** Stands for every cell off the band: more than `max`. */
  const far = max + 1;
  // Kept for lines of ordinary length; a longer one gets its own, let go after the call.
  if (rowA.length < m + 2 && m + 2 <= KEPT_ROW) {
    rowA = new Int32Array(KEPT_ROW);
    rowB = new Int32Array(KEPT_ROW);
    codesB = new Int32Array(KEPT_ROW);
  }
  const own = rowA.length < m + 2;
  let prev = own ? new Int32Array(m + 2) : rowA;
  let cur = own ? new Int32Array(m + 2) : rowB;
  const bc = own ? new Int32Array(m) : codesB;
  for (let j = 0; j < m; j++) bc[j] = b.charCodeAt(j);
  for (let j = 0; j <= m; j++) prev[j] = j;
  prev[m + 1] = far;
  for (let i = 1; i <= n; i++) {
    const lo = Math.max(1, i - max);
    const hi = Math.min(m, i + max);
    if (work) {
      work.steps += hi - lo + 1;
      if (work.steps > work.limit) return max + 1;
    }
    // The cells just off the band, read by this row (left) and the next (up): whatever they held two rows ago.
    cur[lo - 1] = lo === 1 ? i : far;
    cur[hi + 1] = far;
    let rowMin = far;
    const ca = a.charCodeAt(i - 1);
    let diag = prev[lo - 1]!;
    let left = cur[lo - 1]!;
    for (let j = lo; j <= hi; j++) {
      const up = prev[j]!;
      let v = diag + (ca === bc[j - 1] ? 0 : 1);
      if (up + 1 < v) v = up + 1;
      if (left + 1 < v) v = left + 1;
      cur[j] = v;
      diag = up;
      left = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    const t = prev;
    prev = cur;
    cur = t;
  }
  return prev[m]! > max ? max + 1 : prev[m]!;
}

/** `1 - levenshtein / max(len)` (strsim's `normalized_levenshtein`), 1 for two empty strings. */
export function similarity(a: string, b: string, work?: Work): number {
  const len = Math.max(a.length, b.length);
  if (len === 0) return 1;
  return 1 - boundedLevenshtein(a, b, len, work) / len;
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

/** Bytes of one line's histograms (`lineHistogram`): 64 character buckets, then 64 bigram buckets. */
export const HISTOGRAM_BYTES = 128;

/** A line's character and bigram histograms, 64 buckets each (saturating at 255); see `fuzzyEqHist`. */
export function lineHistogram(s: string): Uint8Array {
  const h = new Uint8Array(HISTOGRAM_BYTES);
  fillHistogram(s, h, 0);
  return h;
}

/** `lineHistogram` of `s` written into `into` at `at` (128 bytes there, zero before): many lines, one allocation. */
export function fillHistogram(s: string, into: Uint8Array, at: number): void {
  let prev = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const k = at + (c & 63);
    if (into[k]! < 255) into[k]!++;
    if (prev >= 0) {
      const g = at + 64 + ((prev * 31 + c) & 63);
      if (into[g]! < 255) into[g]!++;
    }
    prev = c;
  }
}

/**
 * `fuzzyEq` with precomputed histograms: the L1 distance of two character histograms is at most twice the edit
 * distance, and of two bigram histograms at most four times (an edit changes at most two bigrams of each line;
 * buckets shared and saturation only lower it), so most dissimilar pairs are rejected in 128 steps without
 * running Levenshtein: lines of one template (a table, generated code) share characters, not bigrams.
 * `hb` holds `b`'s at `at` (a flat store of many lines' histograms). `work`: charged, see `boundedLevenshtein`.
 */
export function fuzzyEqHist(a: string, ha: Uint8Array, b: string, hb: Uint8Array, at = 0, work?: Work): boolean {
  if (a === b) return true;
  const len = Math.max(a.length, b.length);
  if (len === 0) return true;
  if (1 - Math.abs(a.length - b.length) / len < FUZZY_LINE_THRESHOLD) return false;
  const max = Math.floor(len * (1 - FUZZY_LINE_THRESHOLD) + 1e-9);
  if (work) work.steps += HISTOGRAM_STEPS;
  // Given up as soon as the distance passes the bound: most candidates are far apart early.
  let d = 0;
  for (let i = 0; i < 64; i++) {
    const x = ha[i]! - hb[at + i]!;
    d += x < 0 ? -x : x;
    if (d > 2 * max) return false;
  }
  d = 0;
  for (let i = 64; i < HISTOGRAM_BYTES; i++) {
    const x = ha[i]! - hb[at + i]!;
    d += x < 0 ? -x : x;
    if (d > 4 * max) return false;
  }
  return boundedLevenshtein(a, b, max, work) <= max;
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
  /** `columns` (1-based) where two matches share a line (a minified file's one line): "1 (column 5), 1 (…)". */
  ambiguous: (index: number, lines: readonly number[], more = false, columns?: readonly number[]) =>
    `Edit ${index} matched multiple locations in the file at lines: ` +
    `${lines.map((l, i) => (columns ? `${l} (column ${columns[i]})` : l)).join(', ')}${more ? ' and more' : ''}. ` +
    `Please provide more context in old_text to uniquely identify the location.`,
  tooLarge: (index: number, queryLines: number, bufferLines: number) =>
    `Could not find matching text for edit at index ${index}. The old_text does not occur exactly in the file, ` +
    `and at ${queryLines} lines against the file's ${bufferLines} it is too large to search for approximately. ` +
    `Read the file again and copy old_text exactly from it, or give fewer lines of it.`,
  emptyOldText: (index: number) =>
    `Could not find matching text for edit at index ${index}. The old_text is empty. ` +
    `Put the lines to replace in old_text, or use write_file to replace the whole file.`,
  unshown: (index: number, at: { start: number; end: number; line: number; text: string }, similarity: number) =>
    `Edit ${index} matched lines ${at.start}-${at.end} only approximately (similarity ${similarity.toFixed(2)}), ` +
    `and line ${at.line} there, ${JSON.stringify(clipLine(at.text, 120))}, is not one of the old_text lines; an ` +
    `edit a person approves may replace only lines shown to them (spaces aside). Nothing of this edit was ` +
    `applied. Read the file again and copy old_text exactly from it.`,
  noOp: (index: number) =>
    `Edit ${index} makes no change: old_text and new_text are identical. Put the replacement text in new_text.`,
  noEdits: () => 'The edits array is empty. Give at least one { "old_text", "new_text" } edit.',
} as const;
