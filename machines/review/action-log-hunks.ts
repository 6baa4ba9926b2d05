/**
 * @module
 * Hunks of an action-log entry: a bounded jsdiff `structuredPatch` (3 lines
 * of context, `bounded-diff.ts`) from base to current, each with a stable id, and applying chosen
 * hunks forward (accept: move the base) or in reverse (reject: undo the
 * agent's change) with their context, one hunk at a time from the bottom up,
 * so a hunk whose context no longer matches is reported instead of applied.
 * Pure: jsdiff only (the ids' hash is `hunkHash`, schemas/review-values.ts).
 */
import { formatPatch } from 'diff';
import type { StructuredPatchHunk } from 'diff';
import { type Hunk, hunkHash } from '../../schemas/review.ts';
import { boundedStructuredPatch, splitLines } from './bounded-diff.ts';
import { rebaseOutside } from './line-rebase.ts';

export const DIFF_CONTEXT_LINES = 3;

export type ApplyResult = { text: string; applied: Hunk[]; failed: Hunk[] };

/** The hunks from `base` to `current` (null = absent file, diffed as empty), with stable ids. */
export function computeHunks(path: string, base: string | null, current: string | null): Hunk[] {
  return reviewDiff(path, base, current).hunks;
}

/** Hunks and the unified diff (see `unifiedDiff`) from one diff computation. */
export function reviewDiff(path: string, base: string | null, current: string | null): { hunks: Hunk[]; diff: string } {
  // Bounded: a rewritten big file gets one coarse hunk instead of a quadratic diff on the event loop.
  const patch = boundedStructuredPatch(
    base === null ? '/dev/null' : `a${path}`,
    current === null ? '/dev/null' : `b${path}`,
    base ?? '',
    current ?? '',
    DIFF_CONTEXT_LINES,
  );
  const diff =
    patch.hunks.length === 0
      ? ''
      : formatPatch(patch, { includeIndex: false, includeUnderline: false, includeFileHeaders: true });
  return { hunks: withIds(path, patch.hunks), diff };
}

function withIds(path: string, jsHunks: StructuredPatchHunk[]): Hunk[] {
  const seen = new Map<string, number>();
  return jsHunks.map((h) => {
    const raw = `h${hunkHash(`${path}\n${h.lines.join('\n')}`)}`;
    const n = seen.get(raw) ?? 0;
    seen.set(raw, n + 1);
    return {
      id: n === 0 ? raw : `${raw}-${n}`,
      oldStart: h.oldStart,
      oldLines: h.oldLines,
      newStart: h.newStart,
      newLines: h.newLines,
      lines: [...h.lines],
    };
  });
}

/** Unified diff from base to current, `a/`/`b/` headers (`/dev/null` for an absent side). */
export function unifiedDiff(path: string, base: string | null, current: string | null): string {
  return reviewDiff(path, base, current).diff;
}

/**
 * Applies `hunks` to `text` one at a time, bottom-up, with exact context (fuzz 0). `forward`: base→current
 * direction (positions are old lines); `reverse`: current→base (positions are new lines). `source` is the text
 * the hunks' from-side was taken from (the old side forward, the new side in reverse): each hunk is placed only
 * where a line diff of `source` to `text` puts its lines (`placeHunk`), never at another identical copy of its
 * context further on, which jsdiff's nearest-match search would take in repetitive text (a `}`/`return x;` block,
 * or the empty "line" after a final newline). Hunks that do not fit there are skipped and returned in `failed`.
 */
export function applyHunks(text: string, hunks: Hunk[], direction: 'forward' | 'reverse', source: string): ApplyResult {
  const start = (h: Hunk) => (direction === 'forward' ? h.oldStart : h.newStart);
  const ordered = [...hunks].sort((a, b) => start(b) - start(a));
  const where = lineMap(source, text);
  let lines = splitLines(text);
  const applied: Hunk[] = [];
  const failed: Hunk[] = [];
  for (const h of ordered) {
    const next = placeHunk(lines, h, direction, where);
    if (next === undefined) failed.push(h);
    else {
      lines = next;
      applied.push(h);
    }
  }
  applied.reverse();
  failed.reverse();
  return { text: lines.join(''), applied, failed };
}

/**
 * `lines` with hunk `h` applied where `where` (source line → line of `lines`, 1-based) places it: anchored on the
 * first of the from-side lines it changes that is still there, else on the context line nearest its change
 * (repetitive context aligns ambiguously, a changed line seldom). Undefined when no line of it is still there, or
 * when its from-side lines (with their newlines) are not all there.
 */
function placeHunk(
  lines: string[],
  h: Hunk,
  direction: 'forward' | 'reverse',
  where: (line: number) => number | undefined,
): string[] | undefined {
  const { from, to, changed, firstChange } = sides(h, direction);
  const first = direction === 'forward' ? h.oldStart : h.newStart;
  const distance = (k: number) => (k < firstChange ? firstChange - 1 - k : k - firstChange);
  const isChanged = new Set(changed);
  const context = from.map((_, k) => k).filter((k) => !isChanged.has(k));
  context.sort((x, y) => distance(x) - distance(y) || x - y);
  let at: number | undefined;
  if (from.length === 0) at = where(first);
  for (const k of [...changed, ...context]) {
    const mapped = where(first + k);
    if (mapped === undefined) continue;
    at = mapped - k;
    break;
  }
  if (at === undefined || at < 1 || at - 1 + from.length > lines.length) return undefined;
  for (let k = 0; k < from.length; k++) if (lines[at - 1 + k] !== from[k]) return undefined;
  // A line left without its newline ends the file: not where lines follow (it would run into the next one).
  if (to.length > 0 && !to[to.length - 1]!.endsWith('\n') && at - 1 + from.length < lines.length) return undefined;
  return [...lines.slice(0, at - 1), ...to, ...lines.slice(at - 1 + from.length)];
}

/**
 * A hunk's lines on the side it applies to (`from`) and the side it leaves (`to`), each with its newline unless
 * jsdiff's "\\ No newline at end of file" follows it; `changed`: the indices in `from` of the lines it takes out;
 * `firstChange`: how many `from` lines come before its first change.
 */
function sides(h: Hunk, direction: 'forward' | 'reverse') {
  const out = { from: [] as string[], to: [] as string[], changed: [] as number[], firstChange: -1 };
  const fromMark = direction === 'forward' ? '-' : '+';
  h.lines.forEach((l, i) => {
    const mark = l[0];
    if (mark === '\\') return;
    const line = l.slice(1) + (h.lines[i + 1]?.startsWith('\\') ? '' : '\n');
    if (mark !== ' ' && out.firstChange < 0) out.firstChange = out.from.length;
    if (mark === ' ' || mark === fromMark) {
      if (mark === fromMark) out.changed.push(out.from.length);
      out.from.push(line);
    }
    if (mark !== fromMark) out.to.push(line);
  });
  if (out.firstChange < 0) out.firstChange = out.from.length;
  return out;
}

/**
 * Where each 1-based line of `source` is in `text` (undefined: changed there), from a bounded line diff with no
 * context; for line `source.length + 1`, the position past its last line.
 */
function lineMap(source: string, text: string): (line: number) => number | undefined {
  if (source === text) return (i) => i;
  const changes = boundedStructuredPatch('a', 'b', source, text, 0).hunks;
  return (i) => {
    let delta = 0;
    for (const c of changes) {
      if (c.oldLines > 0 && i >= c.oldStart && i < c.oldStart + c.oldLines) return undefined;
      if (c.oldStart + c.oldLines > i) break;
      delta += c.newLines - c.oldLines;
    }
    return i + delta;
  };
}

/**
 * `base` with the change `from` → `to` made to it (a review's write, carried to what a running command started
 * from): `to` when `base` is `from`; the hunks of `from` → `to` applied with their context, else by line position
 * when they leave alone every line changed since `base` (`rebaseOutside`: the command's line right beside the
 * review's fails the context); undefined when neither fits, or when a file is created or deleted that `base`
 * does not match.
 */
export function carryChange(base: string | null, from: string | null, to: string | null): string | null | undefined {
  if (base === from) return to;
  if (base === null || from === null || to === null) return undefined;
  const r = applyHunks(base, computeHunks('', from, to), 'forward', from);
  return r.failed.length === 0 ? r.text : rebaseOutside(base, from, to);
}

/**
 * What a mark that started from `base` starts from after a review changed `from` (the disk it read) to `to`: the
 * review's change carried to `base`, else `to` with what changed since `base` (the command's lines so far) taken
 * out (a review re-inserting a line right beside the command's own, which the carry does not place); undefined
 * when neither fits.
 */
export function markStart(base: string | null, from: string | null, to: string | null): string | null | undefined {
  const carried = carryChange(base, from, to);
  if (carried !== undefined || to === null || from === null) return carried;
  return carryChange(to, from, base);
}
