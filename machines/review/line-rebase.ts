/**
 * @module
 * A three-way line merge for one case: `current` is `base` with a log's own changes, and `changed` is
 * `current` with someone else's (a person's edit, another agent's). `rebaseOutside` makes those other changes
 * to `base` instead, by line position, without context: a person's line right beside the agent's still
 * folds in, where a hunk with 3 lines of context (`applyHunks`) fails on the agent's line in its context.
 * Another change that overlaps the log's own, or is not placed (`conflicts`), gives up the merge
 * (undefined), and the caller keeps its base; `rebaseOutsideInPart` leaves such runs out and folds the rest.
 * Pure: jsdiff only, its work bounded
 * like the review's diffs (`bounded-diff.ts`).
 */
import { diffArrays } from 'diff';
import { DIFF_BUDGET, MIN_EDIT_LENGTH, splitLines } from './bounded-diff.ts';

/** Lines `from`..`to` (0-based, end excluded) of the old text replaced by lines `newFrom`..`newTo` of the new. */
type Run = { from: number; to: number; newFrom: number; newTo: number };

/** `base` with the change `current` → `changed` made to it; undefined when that change touches base's own. */
export function rebaseOutside(base: string, current: string, changed: string): string | undefined {
  return merge(base, current, changed, false)?.base;
}

/**
 * Like `rebaseOutside`, but a run of the other change that is not placed (`conflicts`) is left out instead of
 * giving up: `base` gets the other runs, and `mid` is `current` with those same runs, so that `base` → `mid` is the
 * log's own change alone and `mid` → `changed` the runs left out (charged to the log by its caller, visible).
 * Undefined past the diff budget.
 */
export function rebaseOutsideInPart(
  base: string,
  current: string,
  changed: string,
): { base: string; mid: string } | undefined {
  return merge(base, current, changed, true);
}

function merge(
  base: string,
  current: string,
  changed: string,
  skip: boolean,
): { base: string; mid: string } | undefined {
  const b = splitLines(base);
  const c = splitLines(current);
  const d = splitLines(changed);
  const own = runs(b, c);
  const other = runs(c, d);
  if (!own || !other) return undefined;
  const notPlaced = unplaced(own, other);
  if (notPlaced.size > 0 && !skip) return undefined;
  const left = withMoves(notPlaced, other, c, d);
  const out: string[] = [];
  const mid: string[] = [];
  let taken = 0; // lines of base copied so far
  let midTaken = 0; // lines of current copied to mid so far
  let shift = 0; // base index = current index - shift, left of the next own run
  let k = 0;
  for (const [n, r] of other.entries()) {
    while (k < own.length && own[k]!.newTo <= r.from && !conflicts(own[k]!, r)) {
      shift += own[k]!.newTo - own[k]!.newFrom - (own[k]!.to - own[k]!.from);
      k++;
    }
    if (left.has(n)) continue;
    const from = r.from - shift;
    const to = r.to - shift;
    for (let i = taken; i < from; i++) out.push(b[i]!);
    for (let i = midTaken; i < r.from; i++) mid.push(c[i]!);
    for (let i = r.newFrom; i < r.newTo; i++) {
      out.push(d[i]!);
      mid.push(d[i]!);
    }
    taken = to;
    midTaken = r.to;
  }
  for (let i = taken; i < b.length; i++) out.push(b[i]!);
  for (let i = midTaken; i < c.length; i++) mid.push(c[i]!);
  return { base: out.join(''), mid: mid.join('') };
}

/** Which runs of the other change are not placed in base (`conflicts` with the own run they meet), by index. */
function unplaced(own: Run[], other: Run[]): Set<number> {
  const out = new Set<number>();
  let k = 0;
  for (const [n, r] of other.entries()) {
    while (k < own.length && own[k]!.newTo <= r.from && !conflicts(own[k]!, r)) k++;
    if (k < own.length && conflicts(own[k]!, r)) out.add(n);
  }
  return out;
}

/**
 * The runs left out, with every run that is the other half of a move with one of them: one that puts back a line a
 * run left out took away (a person cut the agent's line and pasted it elsewhere), or takes away a line one put
 * there (a line moved to beside the agent's). Folded alone, that half would hide the moved line from review (its
 * place in the base taken by the paste), or lose it at the agent's reject (its old place gone from the base). By
 * text, so a repeated line (`}`, a blank) may leave out a run that was no move: charged, as before any was folded.
 */
function withMoves(left: Set<number>, other: Run[], c: string[], d: string[]): Set<number> {
  const out = new Set(left);
  for (let grew = out.size > 0; grew; ) {
    grew = false;
    const takenAway = new Set<string>();
    const put = new Set<string>();
    for (const n of out) {
      const r = other[n]!;
      for (let i = r.from; i < r.to; i++) takenAway.add(c[i]!);
      for (let i = r.newFrom; i < r.newTo; i++) put.add(d[i]!);
    }
    for (const [n, r] of other.entries()) {
      if (out.has(n)) continue;
      if (c.slice(r.from, r.to).some((l) => put.has(l)) || d.slice(r.newFrom, r.newTo).some((l) => takenAway.has(l))) {
        out.add(n);
        grew = true;
      }
    }
  }
  return out;
}

/**
 * Whether another run (in `current`'s lines) is not placed in base: it overlaps an own run, spans the point where
 * the own run deleted lines, or inserts within or right beside an own run's lines. Such an insertion is most
 * likely more of the same writer's (a command appending after its own lines, written between a take and a read):
 * folded into the base it would be nobody's, so it stays charged, visible. A changed line beside the own run's
 * is placed.
 */
function conflicts(own: Run, other: Run): boolean {
  const ownEmpty = own.newFrom === own.newTo;
  const otherEmpty = other.from === other.to;
  if (otherEmpty) return own.newFrom <= other.from && other.from <= own.newTo;
  if (ownEmpty) return other.from < own.newFrom && own.newFrom < other.to;
  return other.from < own.newTo && own.newFrom < other.to;
}

/** The changed runs from `a` to `b`, in order; undefined past the diff budget (a rewrite: no merge). */
function runs(a: string[], b: string[]): Run[] | undefined {
  const size = a.length + b.length + 1;
  const maxEditLength = Math.max(MIN_EDIT_LENGTH, Math.floor(DIFF_BUDGET / size));
  const parts = diffArrays(a, b, { maxEditLength });
  if (!parts) return undefined;
  const out: Run[] = [];
  let i = 0;
  let j = 0;
  let open: Run | undefined;
  for (const p of parts) {
    const n = p.count ?? p.value.length;
    if (!p.added && !p.removed) {
      if (open) out.push(open);
      open = undefined;
      i += n;
      j += n;
      continue;
    }
    open ??= { from: i, to: i, newFrom: j, newTo: j };
    if (p.removed) open.to = i += n;
    else open.newTo = j += n;
  }
  if (open) out.push(open);
  return out;
}
