/**
 * @module
 * Streaming character diff (after zed's `crates/streaming_diff`): the old
 * text is known, the new text arrives in chunks; each `pushNew` returns
 * keep/insert/delete operations up to the best point so far, `finish`
 * the rest. Insertions cost 1, deletions 20, equal runs earn 1.8^(run/4), so
 * new text appears at once and old text is removed late. Pure.
 */

export type CharOperation =
  | { op: 'insert'; text: string }
  | { op: 'delete'; length: number }
  | { op: 'keep'; length: number };

export const INSERTION_SCORE = -1;
export const DELETION_SCORE = -20;
export const EQUALITY_BASE = 1.8;
export const MAX_EQUALITY_EXPONENT = 16;
/**
 * Above this many DP cells (old chars × new chars) the diff stops aligning and
 * streams plain insertions, deleting the rest of the old text at finish: the
 * preview gets coarser, memory and time stay bounded. The final text is the same.
 */
export const MAX_DIFF_CELLS = 40_000_000;
/**
 * The DP cells one step of a push may hold (12 bytes each: a score and a run) before it commits: a longer chunk
 * is aligned a slice at a time, as if it had come in smaller chunks. Unsliced, one 1,000-character chunk
 * against a 40,000-character old text held 480 MB until the push returned.
 */
export const MAX_STEP_CELLS = 1_000_000;

export class StreamingDiff {
  readonly #old: string[];
  readonly #new: string[] = [];
  /** Score columns from the committed new index onward; column 0 is the committed one. */
  #scores: Float64Array[];
  #runs: Uint32Array[];
  #oldIx = 0;
  #newIx = 0;
  #coarse = false;
  #peak = 0;

  /** The most DP cells held at once so far (`MAX_STEP_CELLS` bounds it, one column over at most). */
  get peakCells(): number {
    return this.#peak;
  }

  constructor(old: string) {
    this.#old = Array.from(old);
    const col = new Float64Array(this.#old.length + 1);
    for (let i = 0; i <= this.#old.length; i++) col[i] = i * DELETION_SCORE;
    this.#scores = [col];
    this.#runs = [new Uint32Array(this.#old.length + 1)];
  }

  pushNew(text: string): CharOperation[] {
    const chars = Array.from(text);
    if (chars.length === 0) return [];
    const step = Math.max(1, Math.floor(MAX_STEP_CELLS / (this.#old.length + 1)));
    if (chars.length <= step) return this.#push(text, chars);
    const ops: CharOperation[] = [];
    for (let at = 0; at < chars.length; at += step) {
      const slice = chars.slice(at, at + step);
      ops.push(...this.#push(slice.join(''), slice));
    }
    return ops;
  }

  #push(text: string, chars: string[]): CharOperation[] {
    if (!this.#coarse && this.#old.length * (this.#new.length + chars.length) > MAX_DIFF_CELLS) this.#coarse = true;
    if (this.#coarse) {
      this.#new.push(...chars);
      this.#newIx = this.#new.length;
      return [{ op: 'insert', text }];
    }
    const old = this.#old;
    const n = old.length;
    for (const ch of chars) {
      this.#new.push(ch);
      const j = this.#new.length;
      const prevScores = this.#scores[this.#scores.length - 1]!;
      const prevRuns = this.#runs[this.#runs.length - 1]!;
      const col = new Float64Array(n + 1);
      const runs = new Uint32Array(n + 1);
      col[0] = j * INSERTION_SCORE;
      for (let i = 1; i <= n; i++) {
        const ins = prevScores[i]! + INSERTION_SCORE;
        const del = col[i - 1]! + DELETION_SCORE;
        let eq = -Infinity;
        if (old[i - 1] === ch) {
          const run = prevRuns[i - 1]! + 1;
          runs[i] = run;
          eq = prevScores[i - 1]! + EQUALITY_BASE ** Math.min(Math.floor(run / 4), MAX_EQUALITY_EXPONENT);
        }
        col[i] = ins > del ? Math.max(ins, eq) : Math.max(del, eq);
      }
      this.#scores.push(col);
      this.#runs.push(runs);
    }
    this.#peak = Math.max(this.#peak, this.#scores.length * (n + 1));
    const last = this.#scores[this.#scores.length - 1]!;
    let best = -Infinity;
    let nextOld = this.#oldIx;
    for (let i = this.#oldIx; i <= n; i++) {
      if (last[i]! > best) {
        best = last[i]!;
        nextOld = i;
      }
    }
    const ops = this.#backtrack(nextOld, this.#new.length);
    this.#commit(nextOld);
    return ops;
  }

  finish(): CharOperation[] {
    if (this.#coarse) {
      let len = 0;
      for (let i = this.#oldIx; i < this.#old.length; i++) len += this.#old[i]!.length;
      this.#oldIx = this.#old.length;
      return len > 0 ? [{ op: 'delete', length: len }] : [];
    }
    const ops = this.#backtrack(this.#old.length, this.#new.length);
    this.#commit(this.#old.length);
    return ops;
  }

  #commit(oldIx: number): void {
    this.#oldIx = oldIx;
    this.#newIx = this.#new.length;
    this.#scores = [this.#scores[this.#scores.length - 1]!];
    this.#runs = [this.#runs[this.#runs.length - 1]!];
  }

  #score(i: number, j: number): number {
    return this.#scores[j - this.#newIx]![i]!;
  }

  #backtrack(toOld: number, toNew: number): CharOperation[] {
    const ops: CharOperation[] = [];
    let pendingInsert: [number, number] | undefined;
    let i = toOld;
    let j = toNew;
    while (i !== this.#oldIx || j !== this.#newIx) {
      // Ties go to the later candidate (Rust's max_by_key): equality, then deletion, then insertion.
      let pi = -1;
      let pj = -1;
      let best = -Infinity;
      if (j > this.#newIx) {
        best = this.#score(i, j - 1);
        pi = i;
        pj = j - 1;
      }
      if (i > this.#oldIx) {
        const s = this.#score(i - 1, j);
        if (pi === -1 || s >= best) {
          best = s;
          pi = i - 1;
          pj = j;
        }
        if (j > this.#newIx && this.#old[i - 1] === this.#new[j - 1]) {
          const e = this.#score(i - 1, j - 1);
          if (e >= best) {
            best = e;
            pi = i - 1;
            pj = j - 1;
          }
        }
      }
      if (pi === i && pj === j - 1) {
        pendingInsert = pendingInsert ? [pj, pendingInsert[1]] : [pj, j];
      } else {
        if (pendingInsert) {
          ops.push({ op: 'insert', text: this.#new.slice(pendingInsert[0], pendingInsert[1]).join('') });
          pendingInsert = undefined;
        }
        const len = this.#old[i - 1]!.length;
        const kind = pi === i - 1 && pj === j ? 'delete' : 'keep';
        const top = ops[ops.length - 1];
        if (top && top.op === kind) top.length += len;
        else ops.push({ op: kind, length: len });
      }
      i = pi;
      j = pj;
    }
    if (pendingInsert) ops.push({ op: 'insert', text: this.#new.slice(pendingInsert[0], pendingInsert[1]).join('') });
    return ops.reverse();
  }
}

/** Applies operations to `old` starting at `cursor` (test and preview helper); returns the new text and cursor. */
export function applyCharOperations(old: string, ops: readonly CharOperation[]): string {
  let out = '';
  let at = 0;
  for (const o of ops) {
    if (o.op === 'insert') out += o.text;
    else if (o.op === 'keep') {
      out += old.slice(at, at + o.length);
      at += o.length;
    } else at += o.length;
  }
  return out + old.slice(at);
}
