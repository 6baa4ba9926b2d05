/**
 * @module
 * Hunks of an action-log entry: a bounded jsdiff `structuredPatch` (3 lines
 * of context, `bounded-diff.ts`) from base to current, each with a stable id, and applying chosen
 * hunks forward (accept: move the base) or in reverse (reject: undo the
 * agent's change) with their context, one hunk at a time from the bottom up,
 * so a hunk whose context no longer matches is reported instead of applied.
 * Pure: jsdiff only (the ids' hash is `hunkHash`, schemas/review-values.ts).
 */
import { applyPatch, formatPatch, reversePatch } from 'diff';
import type { StructuredPatch, StructuredPatchHunk } from 'diff';
import { type Hunk, hunkHash } from '../../schemas/review.ts';
import { boundedStructuredPatch } from './bounded-diff.ts';
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
 * Applies `hunks` to `text` one at a time, bottom-up, with exact context
 * (fuzz 0). `forward`: base→current direction (positions are old lines);
 * `reverse`: current→base (positions are new lines). Hunks that do not fit
 * are skipped and returned in `failed`.
 */
export function applyHunks(text: string, hunks: Hunk[], direction: 'forward' | 'reverse'): ApplyResult {
  const start = (h: Hunk) => (direction === 'forward' ? h.oldStart : h.newStart);
  const ordered = [...hunks].sort((a, b) => start(b) - start(a));
  let out = text;
  const applied: Hunk[] = [];
  const failed: Hunk[] = [];
  for (const h of ordered) {
    const single: StructuredPatch = {
      oldFileName: 'a',
      newFileName: 'b',
      oldHeader: undefined,
      newHeader: undefined,
      hunks: [toJsdiff(h)],
    };
    const patch = direction === 'forward' ? single : reversePatch(single);
    const next = applyPatch(out, patch, { fuzzFactor: 0, autoConvertLineEndings: false });
    if (next === false) failed.push(h);
    else {
      out = next;
      applied.push(h);
    }
  }
  applied.reverse();
  failed.reverse();
  return { text: out, applied, failed };
}

function toJsdiff(h: Hunk): StructuredPatchHunk {
  return {
    oldStart: h.oldStart,
    oldLines: h.oldLines,
    newStart: h.newStart,
    newLines: h.newLines,
    lines: [...h.lines],
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
  const r = applyHunks(base, computeHunks('', from, to), 'forward');
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
