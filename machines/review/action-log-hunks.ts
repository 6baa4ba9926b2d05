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
import { boundedStructuredPatch } from './bounded-diff.ts';
import { align, placeHunk } from './hunk-place.ts';
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
 * where a line diff of `source` to `text` puts its lines (`placeHunk`, hunk-place.ts), never at another identical
 * copy of its context further on, which jsdiff's nearest-match search would take in repetitive text (a
 * `}`/`return x;` block, or the empty "line" after a final newline). Hunks that do not fit there are skipped and
 * returned in `failed`.
 */
export function applyHunks(text: string, hunks: Hunk[], direction: 'forward' | 'reverse', source: string): ApplyResult {
  const start = (h: Hunk) => (direction === 'forward' ? h.oldStart : h.newStart);
  const ordered = [...hunks].sort((a, b) => start(b) - start(a));
  const alignment = align(source, text);
  let lines = alignment.text;
  let below = Number.POSITIVE_INFINITY;
  const applied: Hunk[] = [];
  const failed: Hunk[] = [];
  for (const h of ordered) {
    const placed = placeHunk(lines, h, direction, alignment, below);
    if (placed === undefined) failed.push(h);
    else {
      lines = placed.lines;
      below = placed.at;
      applied.push(h);
    }
  }
  applied.reverse();
  failed.reverse();
  return { text: lines.join(''), applied, failed };
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
