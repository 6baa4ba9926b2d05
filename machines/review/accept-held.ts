/**
 * @module
 * Which of a descendant's own hunks an accepted content holds as they are. The change from the descendant's
 * current to the accepted content (a line diff) must change none of the lines a hunk's run of changes put there,
 * nor insert a line inside such a run (by position), nor write anywhere a line the run deleted (by text: it may be
 * that line put back). Compared by text, a `}` the ancestor wrote anywhere made the descendant's own `}` look
 * unaccepted: its hunk stayed listed after an accept-all, and its reject-all removed lines a person had accepted.
 * An insertion that a run of identical lines lets slide (a `}` inserted after a `}` is the same text as one
 * inserted before it) counts as inside a run only when every place it can slide to is inside. Pure.
 */
import type { Hunk } from '../../schemas/review.ts';
import { boundedStructuredPatch, splitLines } from './bounded-diff.ts';

/** A run of changes in the descendant's current: lines [from, to) it put there, and the lines it deleted there. */
type Run = { from: number; to: number; deleted: string[] };

/** `hunks` (of base → current) that `target` holds as they are. */
export function heldHunks(current: string, target: string, hunks: Hunk[]): Hunk[] {
  const lines = splitLines(current).map((l) => l.replace(/\n$/, ''));
  /** Lines [from, to) of current that the change to target changes or deletes. */
  const changed: Array<[number, number]> = [];
  /** Each insertion: the places it can slide to (before line lo … before line hi), and its lines. */
  const inserted: Array<{ lo: number; hi: number; lines: string[] }> = [];
  const moves = boundedStructuredPatch('a', 'b', current, target, 0).hunks;
  for (const m of moves) {
    if (m.oldLines > 0) {
      changed.push([m.oldStart, m.oldStart + m.oldLines]);
      continue;
    }
    const added = m.lines.filter((l) => l.startsWith('+')).map((l) => l.slice(1));
    if (added.length === 0) continue;
    // jsdiff (9) gives an insertion's oldStart as the line it goes before.
    const at = m.oldStart;
    // Slid up: before the line above when that line is the insertion's last (its lines then rotate); down alike.
    const n = added.length;
    let lo = at;
    for (let k = n - 1; lo > 1 && lines[lo - 2] === added[k]; k = (k + n - 1) % n) lo--;
    let hi = at;
    for (let k = 0; hi <= lines.length && lines[hi - 1] === added[k]; k = (k + 1) % n) hi++;
    inserted.push({ lo, hi, lines: added });
  }
  /** Every line the change to target writes (a line a run deleted, written anywhere, may be it put back). */
  const written = new Set(moves.flatMap((m) => m.lines.filter((l) => l.startsWith('+')).map((l) => l.slice(1))));
  const held = (r: Run) => {
    if (r.deleted.some((l) => written.has(l))) return false;
    // Where a run deleted lines, a change touching that place (the line after it, or the line before) may be the
    // other half of a move: a line the run took out and put back elsewhere, shown by the diff as its neighbour moved.
    // Only a move: a line it changes that the change writes again (a line merely deleted beside the run moved
    // nothing: an ancestor's deletion beside the descendant's replaced line left that line accepted as it is).
    const moved = ([a, b]: [number, number]) => lines.slice(a - 1, b - 1).some((l) => written.has(l));
    if (r.deleted.length > 0 && changed.some(([a, b]) => a <= r.from && b >= r.from && moved([a, b]))) return false;
    if (r.to === r.from) return true;
    if (changed.some(([a, b]) => a < r.to && b > r.from)) return false;
    return !inserted.some((i) => i.lo > r.from && i.hi < r.to);
  };
  return hunks.filter((h) => runsOf(h).every(held));
}

/** A hunk's runs of changes, placed in the text it changes to (its new side, 1-based). */
function runsOf(h: Hunk): Run[] {
  // jsdiff (9): a hunk that only deletes starts at the line its deletion goes before.
  let n = h.newStart;
  const runs: Run[] = [];
  let run: Run | undefined;
  for (const l of h.lines) {
    if (l.startsWith('\\')) continue;
    if (l.startsWith(' ')) {
      if (run) runs.push(run);
      run = undefined;
      n++;
      continue;
    }
    run ??= { from: n, to: n, deleted: [] };
    if (l.startsWith('+')) run.to = ++n;
    else run.deleted.push(l.slice(1));
  }
  if (run) runs.push(run);
  return runs;
}
