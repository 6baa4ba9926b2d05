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
  type Work,
  fillHistogram,
  HISTOGRAM_BYTES,
  fuzzyEqHist,
  lineHistogram,
  normalizeLine,
  rowOf,
  similarity,
  textLines,
  type TextRange,
} from './edit-text.ts';
import { type BufferIndex, indexBuffer, lowerBound } from './edit-matcher-index.ts';
import { findExactMatches } from './exact-matches.ts';
import {
  DELETION_COST,
  INSERTION_COST,
  MATCHED_RATIO,
  MAX_BEST_TRACED,
  MAX_FUZZY_STEPS,
  MAX_NEAR_TIES,
  MAX_PREVIEW_STEPS,
  NEAR_TIE_MARGIN,
  REPLACEMENT_COST,
  type SearchMatch,
  type SearchMatches,
} from './edit-matcher-costs.ts';
export { MAX_BEST_TRACED, MAX_FUZZY_STEPS } from './edit-matcher-costs.ts';
export { findExactMatches } from './exact-matches.ts';
export type { SearchMatch, SearchMatches } from './edit-matcher-costs.ts';

/** `#exactAt` while the query lines are to be searched (not yet, or they occurred several times), or when not found. */
const SEARCH = -1;
const NONE = -2;

const UP = 0;
const LEFT = 1;
const DIAG = 2;

/** A DP row's directions, packed 2 bits a cell (a fresh row is all UP). */
function dirAt(row: Uint8Array, c: number): number {
  return (row[c >> 2]! >> ((c & 3) << 1)) & 3;
}

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
  /** The last DP row's costs (a row needs only the one before it; the candidates are read from the last). */
  #lastCost: Uint32Array | undefined;
  /** Every DP row's directions (`dirAt`), for the tracebacks. */
  #dirs: Uint8Array[] = [];
  #matches: SearchMatch[] = [];
  #more = false;
  /** The search's work so far (`MAX_FUZZY_STEPS`); past it, `#tooLarge`. */
  readonly #work: Work = { steps: 0, limit: MAX_FUZZY_STEPS };
  /** The streaming preview's (`MAX_PREVIEW_STEPS`). */
  readonly #preview: Work = { steps: 0, limit: MAX_PREVIEW_STEPS };
  #tooLarge = false;

  constructor(buffer: string) {
    this.#buffer = buffer;
  }

  get #index(): BufferIndex {
    this.#built ??= indexBuffer(this.#buffer);
    return this.#built;
  }

  /** The fuzzy search's work so far, in `Work` steps (`MAX_FUZZY_STEPS` bounds it). */
  get steps(): number {
    return this.#work.steps;
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
    if (last || this.#preview.steps > this.#preview.limit) return undefined;
    if (this.#built === undefined && this.#pending.length > 0 && this.#exactAt !== NONE) {
      const lines = this.#rawQuery.slice(0, this.#rawQuery.length - this.#incomplete.length);
      const trim = lines.endsWith('\r\n') ? 2 : 1;
      // Longer lines occur at most where the shorter ones did: once unique, one comparison says whether still.
      if (this.#exactAt >= 0) {
        this.#preview.steps += lines.length >> 4;
        if (this.#buffer.startsWith(lines, this.#exactAt)) {
          return { start: this.#exactAt, end: this.#exactAt + lines.length - trim };
        }
        this.#exactAt = NONE;
      } else {
        // A search of the buffer each line while the lines so far occur several times: charged to the preview.
        this.#preview.steps += this.#buffer.length >> 4;
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
    return this.selectBestMatch() ?? this.#matches[0]?.range;
  }

  /** The single candidate, or undefined when there are none or several (or the preview is over its work). */
  selectBestMatch(): TextRange | undefined {
    if (this.#catchUp() && this.#preview.steps <= this.#preview.limit) this.#matches = this.#collectMatches(false);
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
    this.#matches = this.#collectMatches(true);
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
      this.#matches = this.#collectMatches(true);
    }
    if (this.#tooLarge) {
      const bufferLines = this.#built?.ids.length ?? textLines(this.#buffer).length;
      const queryLines = textLines(this.#rawQuery).length;
      return { kind: 'fuzzy', matches: [], tooLarge: { queryLines, bufferLines } };
    }
    return { kind: 'fuzzy', matches: this.#matches, ...(this.#more ? { more: true } : {}) };
  }

  /** The DP rows of the pending query lines; whether there were any. */
  #catchUp(): boolean {
    if (this.#pending.length === 0) return false;
    this.#addQueryLines(this.#pending.splice(0));
    return true;
  }

  /** Gives the fuzzy search up (over `MAX_FUZZY_STEPS`): its rows are dropped, `finish` says it was too large. */
  #refuse(): void {
    this.#tooLarge = true;
    this.#dirs = [];
    this.#lastCost = undefined;
    this.#matches = [];
  }

  /** 0-based row of `offset` (< the buffer's length): from the index when built, else by counting newlines. */
  #rowAt(offset: number): number {
    if (this.#built) return rowOf(this.#built.starts, offset);
    let row = 0;
    for (let i = this.#buffer.indexOf('\n'); i !== -1 && i < offset; i = this.#buffer.indexOf('\n', i + 1)) row++;
    return row;
  }

  #addQueryLines(lines: string[]): void {
    if (lines.length === 0 || this.#tooLarge) return;
    this.#queryLines.push(...lines.map(normalizeLine));
    const { ids, norms } = this.#index;
    const cols = ids.length;
    const work = this.#work;
    // Known too large before any of it is done: the rows alone would pass the bound.
    if ((this.#queryLines.length - this.#dirs.length) * cols > work.limit - work.steps) {
      this.#refuse();
      return;
    }
    for (const q of this.#queryLines.slice(this.#dirs.length)) {
      const qh = lineHistogram(q);
      const { hists, histReady } = this.#index;
      const r = this.#dirs.length; // index of the row being computed (1-based DP row r+1)
      const prev = this.#lastCost ?? new Uint32Array(cols + 1);
      const cost = new Uint32Array(cols + 1);
      const dir = new Uint8Array((cols >> 2) + 1);
      work.steps += cols;
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
        if (work.steps > work.limit) break;
        if (histReady[id] === 0) {
          fillHistogram(norms[id]!, hists, id * HISTOGRAM_BYTES);
          histReady[id] = 1;
        }
        cls[id] = fuzzyEqHist(q, qh, norms[id]!, hists, id * HISTOGRAM_BYTES, work) ? 1 : 2;
      }
      if (work.steps > work.limit) {
        this.#refuse();
        return;
      }
      if (exactId !== undefined) cls[exactId] = 0;
      cost[0] = (r + 1) * DELETION_COST;
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
        if (d !== UP) dir[c >> 2]! |= d << ((c & 3) << 1);
      }
      this.#lastCost = cost;
      this.#dirs.push(dir);
    }
  }

  #absorbEdges(pairs: Array<[number, number]>, startRow: number, endRow: number, work: Work): [number, number] {
    if (pairs.length === 0) return [startRow, endRow];
    const { ids, norms } = this.#index;
    const alike = (q: number, b: number) =>
      b >= 0 && b < ids.length && similarity(this.#queryLines[q]!, norms[ids[b]!]!, work) >= EDGE_SIMILARITY;
    const lastQ = pairs[pairs.length - 1]![0];
    for (let q = lastQ + 1; q < this.#queryLines.length && alike(q, endRow + 1); q++) pairs.push([q, ++endRow]);
    const firstQ = pairs[0]![0];
    for (let q = firstQ - 1; q >= 0 && alike(q, startRow - 1); q--) pairs.unshift([q, --startRow]);
    return [startRow, endRow];
  }

  /**
   * The candidates of the DP so far. `full`: for `finish` (similarities computed, work charged to the search, past
   * its bound the search is refused); else for the preview (charged to the preview's, past it what was found).
   */
  #collectMatches(full: boolean): SearchMatch[] {
    const last = this.#lastCost;
    if (!last || this.#tooLarge) return [];
    const cols = last.length - 1;
    if (cols === 0) return [];
    const work = full ? this.#work : this.#preview;
    work.steps += cols;
    this.#more = false;
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
      if (cost === min && best.length >= MAX_BEST_TRACED) {
        this.#more = true;
        continue;
      }
      const m = this.#traceback(end, work, full);
      if (work.steps > work.limit) {
        if (!full) break;
        this.#refuse();
        return [];
      }
      if (m) (cost === min ? best : near).push(m);
    }
    // A near tie elsewhere means the query does not single out one place: report it rather than guess.
    const overlaps = (a: SearchMatch, b: SearchMatch) => a.range.start <= b.range.end && b.range.start <= a.range.end;
    const distinct: SearchMatch[] = [];
    for (const n of near)
      if (!best.some((b) => overlaps(n, b)) && !distinct.some((d) => overlaps(d, n))) distinct.push(n);
    return best.length === 0 ? [] : [...best, ...distinct].sort((a, b) => a.range.start - b.range.start);
  }

  /**
   * Traces back from end column `end`; undefined when the aligned ratio is below MATCHED_RATIO. The walk and the
   * similarities are charged to `work`; `similar`: compute the match's similarity (0 for the preview, which shows
   * only ranges).
   */
  #traceback(end: number, work: Work, similar: boolean): SearchMatch | undefined {
    const rows = this.#dirs.length;
    const pairs: Array<[number, number]> = [];
    let r = rows;
    let c = end;
    while (r > 0 && c > 0) {
      const d = dirAt(this.#dirs[r - 1]!, c);
      if (d === DIAG) {
        pairs.push([r - 1, c - 1]);
        r--;
        c--;
      } else if (d === UP) r--;
      else c--;
    }
    work.steps += rows + end - c;
    const denom = Math.max(end - c, rows);
    if (pairs.length / denom < MATCHED_RATIO) return undefined;
    pairs.reverse();
    const [startRow, endRow] = this.#absorbEdges(pairs, c, end - 1, work);
    let sim = 0;
    if (similar) {
      for (const [q, b] of pairs) {
        sim += similarity(this.#queryLines[q]!, this.#index.norms[this.#index.ids[b]!]!, work);
        if (work.steps > work.limit) break;
      }
    }
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

/** Convenience: resolve `query` against `buffer` in one call. */
export function matchOldText(buffer: string, query: string): SearchMatches {
  const m = new StreamingFuzzyMatcher(buffer);
  m.push(query, true);
  return m.finish();
}
