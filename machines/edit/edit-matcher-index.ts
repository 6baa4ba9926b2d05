/**
 * @module
 * The buffer index of the streaming fuzzy matcher (edit-matcher.ts): a snapshot's lines, normalized and
 * interned, and their ids sorted by length so a query line's fuzzy candidates are a window. Pure.
 */
import { HISTOGRAM_BYTES, lineStarts, normalizeLine } from './edit-text.ts';

/** Interned, normalized buffer lines: the part of a snapshot the DP reads. */
export type BufferIndex = {
  starts: number[];
  ends: number[];
  /** Per buffer row: the id of its normalized text. */
  ids: Int32Array;
  norms: string[];
  intern: Map<string, number>;
  /**
   * Distinct ids sorted by normalized length, and those lengths: the fuzzy candidates of a query line are a window of
   * it.
   */
  byLength: Int32Array;
  lengths: Int32Array;
  /**
   * Each distinct line's histograms (`HISTOGRAM_BYTES` at id × HISTOGRAM_BYTES), filled when it is first a fuzzy
   * candidate (`histReady[id]` then 1): one allocation, where a Uint8Array a line made a 100k-line file's search
   * GC-bound.
   */
  hists: Uint8Array;
  histReady: Uint8Array;
};

/** The interned, normalized lines of `buffer`, built once per snapshot when the fuzzy search needs them. */
export function indexBuffer(buffer: string): BufferIndex {
  const all = lineStarts(buffer);
  // A trailing newline does not open another line (zed's rope has one, but it is empty and never matters).
  const starts = all.length > 1 && all[all.length - 1] === buffer.length ? all.slice(0, -1) : all;
  const ends: number[] = new Array(starts.length);
  const ids = new Int32Array(starts.length);
  const norms: string[] = [];
  const intern = new Map<string, number>();
  for (let i = 0; i < starts.length; i++) {
    let e = i + 1 < all.length ? all[i + 1]! - 1 : buffer.length;
    if (e > starts[i]! && buffer.charCodeAt(e - 1) === 13) e--;
    ends[i] = e;
    const norm = normalizeLine(buffer.slice(starts[i]!, e));
    let id = intern.get(norm);
    if (id === undefined) {
      id = norms.length;
      norms.push(norm);
      intern.set(norm, id);
    }
    ids[i] = id;
  }
  if (buffer === '')
    return {
      starts: [],
      ends: [],
      ids: new Int32Array(0),
      norms: [],
      intern,
      byLength: new Int32Array(0),
      lengths: new Int32Array(0),
      hists: new Uint8Array(0),
      histReady: new Uint8Array(0),
    };
  const { byLength, lengths } = sortByLength(norms);
  const hists = new Uint8Array(norms.length * HISTOGRAM_BYTES);
  return { starts, ends, ids, norms, intern, byLength, lengths, hists, histReady: new Uint8Array(norms.length) };
}

/**
 * Ids sorted by the length of their text, ties in id order (a stable counting sort: linear, where a comparison
 * sort of 50k ids was a third of a big file's index time), and the sorted lengths.
 */
export function sortByLength(norms: readonly string[]): { byLength: Int32Array; lengths: Int32Array } {
  let longest = 0;
  for (const n of norms) if (n.length > longest) longest = n.length;
  const offsets = new Int32Array(longest + 2);
  for (const n of norms) offsets[n.length + 1]!++;
  for (let l = 1; l < offsets.length; l++) offsets[l]! += offsets[l - 1]!;
  const byLength = new Int32Array(norms.length);
  const lengths = new Int32Array(norms.length);
  for (let id = 0; id < norms.length; id++) {
    const at = offsets[norms[id]!.length]!++;
    byLength[at] = id;
    lengths[at] = norms[id]!.length;
  }
  return { byLength, lengths };
}

/** First index with `sorted[i] >= value`. */
export function lowerBound(sorted: Int32Array, value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
