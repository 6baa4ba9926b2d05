/**
 * @module
 * The streaming fuzzy matcher (after zed's `StreamingFuzzyMatcher`): locates
 * `old_text` in a fixed buffer snapshot. `push(chunk)` grows a semi-global
 * line DP one query row at a time and returns a provisional range for the
 * live preview; `finish()` resolves authoritatively: byte-exact search first
 * (overlapping, stops at 2 hits), the fuzzy line DP second. Pure.
 */
import {
  FUZZY_LINE_THRESHOLD,
  fillHistogram,
  fuzzyEqHist,
  lineHistogram,
  normalizeLine,
  rowOf,
  similarity,
  textLines,
  type TextRange,
} from './edit-text.ts';
import { type BufferIndex, indexBuffer, lowerBound } from './edit-matcher-index.ts';

/** DP cost of a query line aligned to a buffer line that is only fuzzy equal. */
export const REPLACEMENT_COST = 1;
/** DP cost of an extra buffer line inside the match. */
export const INSERTION_COST = 3;
/** DP cost of a query line with no buffer counterpart. */
export const DELETION_COST = 10;
/** Two exact hits are enough to prove ambiguity. */
export const MAX_EXACT_MATCHES = 2;
/** A fuzzy candidate is kept when matched lines / max(buffer span, query lines) reaches this. */
export const MATCHED_RATIO = 0.8;
/**
 * Beyond zed (which keeps only exact cost ties): when the best candidate is
 * imperfect (cost > 0), a non-overlapping candidate whose cost is within this
 * of it also counts, making the edit ambiguous instead of silently picking by
 * a margin of one extra or one fuzzy line. Raising it refuses more
 * near-duplicates; 0 is zed's behaviour.
 */
export const NEAR_TIE_MARGIN = INSERTION_COST;
/** At most this many near-tie candidates are traced back (bounds time on repetitive files). */
const MAX_NEAR_TIES = 16;

export type SearchMatch = {
  range: TextRange;
  /** `[queryRow, bufferRow]` pairs of aligned lines (0-based). */
  linePairs: Array<[number, number]>;
  /** 0..1: 1 for exact; for fuzzy, the mean per-line similarity over max(span, query lines). */
  similarity: number;
};
export type SearchMatches = { kind: 'exact' | 'fuzzy'; matches: SearchMatch[] };

/** `#exactAt` while the query lines are to be searched (not yet, or they occurred several times), or when not found. */
const SEARCH = -1;
const NONE = -2;

const UP = 0;
const LEFT = 1;
const DIAG = 2;

export class StreamingFuzzyMatcher {
  readonly #buffer: string;
  /** Built on first need: a 50k-line buffer's index held the host ~90 ms, and an exact match needs none. */
  #built: BufferIndex | undefined;
  #rawQuery = '';
  #incomplete = '';
  /** Complete query lines not in the DP yet (left for `finish`, or while the lines so far occur exactly once). */
  readonly #pending: string[] = [];
  /** Where the complete query lines occur exactly, once, from a line start; or NONE, or SEARCH (again). */
  #exactAt = SEARCH;
  readonly #queryLines: string[] = [];
  readonly #costs: Uint32Array[] = [];
  readonly #dirs: Uint8Array[] = [];
  #matches: SearchMatch[] = [];

  constructor(buffer: string) {
    this.#buffer = buffer;
  }

  get #index(): BufferIndex {
    this.#built ??= indexBuffer(this.#buffer);
    return this.#built;
  }

  /** Whether the buffer was indexed (for tests: an exact match never needs it). */
  get indexed(): boolean {
    return this.#built !== undefined;
  }

  get rawQuery(): string {
    return this.#rawQuery;
  }

  /**
   * Feeds an old-text chunk; returns the provisional best range (or the first of several), if any. While the
   * complete lines so far occur exactly once in the buffer, from a line start, that occurrence is the range and
   * the buffer is not indexed. `last`: `finish` comes next, so nothing is computed (it searches exactly first).
   */
  push(chunk: string, last = false): TextRange | undefined {
    this.#rawQuery += chunk;
    this.#incomplete += chunk;
    const nl = this.#incomplete.lastIndexOf('\n');
    if (nl !== -1) {
      const complete = this.#incomplete.slice(0, nl + 1);
      this.#incomplete = this.#incomplete.slice(nl + 1);
      this.#pending.push(...textLines(complete));
    }
    if (last) return undefined;
    if (this.#built === undefined && this.#pending.length > 0 && this.#exactAt !== NONE) {
      const lines = this.#rawQuery.slice(0, this.#rawQuery.length - this.#incomplete.length);
      const trim = lines.endsWith('\r\n') ? 2 : 1;
      // Longer lines occur at most where the shorter ones did: once unique, one comparison says whether still.
      if (this.#exactAt >= 0) {
        if (this.#buffer.startsWith(lines, this.#exactAt)) {
          return { start: this.#exactAt, end: this.#exactAt + lines.length - trim };
        }
        this.#exactAt = NONE;
      } else {
        const exact = findExactMatches(this.#buffer, lines);
        const at = exact[0]?.start ?? -1;
        if (at === 0 || (at > 0 && this.#buffer.charCodeAt(at - 1) === 10)) {
          // Several: the first is the provisional range (as the DP gives the first of several), searched again.
          if (exact.length === 1) this.#exactAt = at;
          return exact[0];
        }
        this.#exactAt = NONE;
      }
    }
    this.#catchUp();
    return this.selectBestMatch() ?? this.#matches[0]?.range;
  }

  /** The single candidate, or undefined when there are none or several. */
  selectBestMatch(): TextRange | undefined {
    this.#catchUp();
    return this.#matches.length === 1 ? this.#matches[0]!.range : undefined;
  }

  /** Resolves the whole query: exact matches if any, otherwise fuzzy ones. */
  finish(): SearchMatches {
    const exact = findExactMatches(this.#buffer, this.#rawQuery);
    if (exact.length > 0) {
      const qCount = textLines(this.#rawQuery).length || 1;
      return {
        kind: 'exact',
        matches: exact.map((range) => {
          const startRow = this.#rowAt(range.start);
          const linePairs: Array<[number, number]> = [];
          for (let i = 0; i < qCount; i++) linePairs.push([i, startRow + i]);
          return { range, linePairs, similarity: 1 };
        }),
      };
    }
    this.#catchUp();
    if (this.#incomplete !== '') {
      const tail = this.#incomplete;
      this.#incomplete = '';
      const only = this.#matches.length === 1 ? this.#matches[0]! : undefined;
      if (only && this.#buffer.startsWith(tail, only.range.end + 1) && this.#buffer[only.range.end] === '\n') {
        const lastRow = only.linePairs.length > 0 ? rowOf(this.#index.starts, only.range.end) + 1 : 0;
        return {
          kind: 'fuzzy',
          matches: [
            {
              range: { start: only.range.start, end: only.range.end + 1 + tail.length },
              linePairs: [...only.linePairs, [this.#queryLines.length, lastRow]],
              similarity: only.similarity,
            },
          ],
        };
      }
      this.#addQueryLines([tail.endsWith('\r') ? tail.slice(0, -1) : tail]);
    }
    return { kind: 'fuzzy', matches: this.#matches };
  }

  /** The DP rows of the pending query lines. */
  #catchUp(): void {
    if (this.#pending.length > 0) this.#addQueryLines(this.#pending.splice(0));
  }

  /** 0-based row of `offset` (< the buffer's length): from the index when built, else by counting newlines. */
  #rowAt(offset: number): number {
    if (this.#built) return rowOf(this.#built.starts, offset);
    let row = 0;
    for (let i = this.#buffer.indexOf('\n'); i !== -1 && i < offset; i = this.#buffer.indexOf('\n', i + 1)) row++;
    return row;
  }

  #addQueryLines(lines: string[]): void {
    if (lines.length === 0) return;
    const { ids, norms } = this.#index;
    const cols = ids.length;
    for (const line of lines) {
      const q = normalizeLine(line);
      const qh = lineHistogram(q);
      const { hists, histReady } = this.#index;
      this.#queryLines.push(q);
      const r = this.#costs.length; // index of the row being computed (1-based DP row r+1)
      const prev = r === 0 ? new Uint32Array(cols + 1) : this.#costs[r - 1]!;
      const cost = new Uint32Array(cols + 1);
      const dir = new Uint8Array(cols + 1);
      // Per distinct buffer line: 0 equal, 1 fuzzy equal, 2 different. Only lines whose length
      // passes fuzzy_eq's length bound (0.8·|q| … 1.25·|q|) can be fuzzy equal, so only those are compared.
      const cls = new Uint8Array(norms.length).fill(2);
      const { byLength, lengths, intern } = this.#index;
      const exactId = intern.get(q);
      for (
        let i = lowerBound(lengths, Math.ceil(q.length * FUZZY_LINE_THRESHOLD - 1e-9));
        i < byLength.length && lengths[i]! <= q.length / FUZZY_LINE_THRESHOLD + 1e-9;
        i++
      ) {
        const id = byLength[i]!;
        if (id === exactId) continue;
        if (histReady[id] === 0) {
          fillHistogram(norms[id]!, hists, id * 64);
          histReady[id] = 1;
        }
        cls[id] = fuzzyEqHist(q, qh, norms[id]!, hists, id * 64) ? 1 : 2;
      }
      if (exactId !== undefined) cls[exactId] = 0;
      cost[0] = (r + 1) * DELETION_COST;
      dir[0] = UP;
      for (let c = 1; c <= cols; c++) {
        const k = cls[ids[c - 1]!]!;
        const up = prev[c]! + DELETION_COST;
        const left = cost[c - 1]! + INSERTION_COST;
        const diag = prev[c - 1]! + (k === 0 ? 0 : k === 1 ? REPLACEMENT_COST : DELETION_COST + INSERTION_COST);
        // Ties prefer Up, then Left, then Diagonal (zed's SearchState ordering).
        let best = up;
        let d = UP;
        if (left < best) {
          best = left;
          d = LEFT;
        }
        if (diag < best) {
          best = diag;
          d = DIAG;
        }
        cost[c] = best;
        dir[c] = d;
      }
      this.#costs.push(cost);
      this.#dirs.push(dir);
    }
    this.#matches = this.#collectMatches();
  }

  #absorbEdges(pairs: Array<[number, number]>, startRow: number, endRow: number): [number, number] {
    if (pairs.length === 0) return [startRow, endRow];
    const { ids, norms } = this.#index;
    const alike = (q: number, b: number) =>
      b >= 0 && b < ids.length && similarity(this.#queryLines[q]!, norms[ids[b]!]!) >= EDGE_SIMILARITY;
    const lastQ = pairs[pairs.length - 1]![0];
    for (let q = lastQ + 1; q < this.#queryLines.length && alike(q, endRow + 1); q++) pairs.push([q, ++endRow]);
    const firstQ = pairs[0]![0];
    for (let q = firstQ - 1; q >= 0 && alike(q, startRow - 1); q--) pairs.unshift([q, --startRow]);
    return [startRow, endRow];
  }

  #collectMatches(): SearchMatch[] {
    const rows = this.#costs.length;
    if (rows === 0) return [];
    const last = this.#costs[rows - 1]!;
    const cols = last.length - 1;
    if (cols === 0) return [];
    let min = Infinity;
    for (let c = 1; c <= cols; c++) if (last[c]! < min) min = last[c]!;
    const best: SearchMatch[] = [];
    const near: SearchMatch[] = [];
    // A whitespace-insensitive exact alignment (cost 0) is strong evidence on its own; near ties only
    // matter when the best candidate is itself imperfect.
    const margin = min === 0 ? 0 : NEAR_TIE_MARGIN;
    for (let end = 1; end <= cols; end++) {
      const cost = last[end]!;
      if (cost > min + margin || (cost !== min && near.length >= MAX_NEAR_TIES)) continue;
      const m = this.#traceback(end);
      if (m) (cost === min ? best : near).push(m);
    }
    // A near tie elsewhere means the query does not single out one place: report it rather than guess.
    const overlaps = (a: SearchMatch, b: SearchMatch) => a.range.start <= b.range.end && b.range.start <= a.range.end;
    const distinct: SearchMatch[] = [];
    for (const n of near)
      if (!best.some((b) => overlaps(n, b)) && !distinct.some((d) => overlaps(d, n))) distinct.push(n);
    return best.length === 0 ? [] : [...best, ...distinct].sort((a, b) => a.range.start - b.range.start);
  }

  /** Traces back from end column `end`; undefined when the aligned ratio is below MATCHED_RATIO. */
  #traceback(end: number): SearchMatch | undefined {
    const rows = this.#costs.length;
    const pairs: Array<[number, number]> = [];
    let r = rows;
    let c = end;
    while (r > 0 && c > 0) {
      const d = this.#dirs[r - 1]![c]!;
      if (d === DIAG) {
        pairs.push([r - 1, c - 1]);
        r--;
        c--;
      } else if (d === UP) r--;
      else c--;
    }
    const denom = Math.max(end - c, rows);
    if (pairs.length / denom < MATCHED_RATIO) return undefined;
    pairs.reverse();
    const [startRow, endRow] = this.#absorbEdges(pairs, c, end - 1);
    let sim = 0;
    for (const [q, b] of pairs) sim += similarity(this.#queryLines[q]!, this.#index.norms[this.#index.ids[b]!]!);
    return {
      range: { start: this.#index.starts[startRow]!, end: this.#index.ends[endRow]! },
      linePairs: pairs,
      similarity: sim / Math.max(endRow - startRow + 1, rows),
    };
  }
}

/**
 * Beyond zed: query lines left unaligned at either edge of an accepted match
 * (a misspelled short first or last line, "}):" for "});") take the adjacent
 * buffer line when it is at least EDGE_SIMILARITY alike, so the range covers
 * what the model meant and its new_text does not duplicate that line. An
 * unrelated (hallucinated) edge line is left out, as in zed. Mutates `pairs`.
 */
export const EDGE_SIMILARITY = 0.5;

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

/** Convenience: resolve `query` against `buffer` in one call. */
export function matchOldText(buffer: string, query: string): SearchMatches {
  const m = new StreamingFuzzyMatcher(buffer);
  m.push(query, true);
  return m.finish();
}
