/**
 * @module
 * A line diff whose cost is bounded: jsdiff's Myers diff costs O((N+M)·D), which
 * is quadratic when a file is rewritten (D ≈ N+M): 108 s for 12k lines, on the
 * event loop. Here Myers runs only within an edit budget that keeps the work near
 * `BUDGET` steps; past it the patch falls back to one coarse hunk (common prefix
 * and suffix lines kept, the middle replaced), which is linear and still exact
 * (applying it gives the new text). Deterministic, so hunk ids stay stable. Pure.
 */
import { structuredPatch, type StructuredPatch, type StructuredPatchHunk } from 'diff';

/** Work budget in Myers steps (≈ (N+M)·D): tens of milliseconds at most. */
export const DIFF_BUDGET = 4_000_000;
/** Below this many edits, Myers always runs (small files are always diffed finely). */
export const MIN_EDIT_LENGTH = 64;
const NO_NEWLINE = '\\ No newline at end of file';

export function boundedStructuredPatch(
  oldName: string,
  newName: string,
  oldText: string,
  newText: string,
  context: number,
): StructuredPatch {
  const oldLines = splitLines(oldText);
  const newLines = splitLines(newText);
  const size = oldLines.length + newLines.length + 1;
  const maxEditLength = Math.max(MIN_EDIT_LENGTH, Math.floor(DIFF_BUDGET / size));
  if (maxEditLength < size) {
    const fine = structuredPatch(oldName, newName, oldText, newText, undefined, undefined, {
      context,
      maxEditLength,
    });
    if (fine) return fine;
  } else {
    return structuredPatch(oldName, newName, oldText, newText, undefined, undefined, { context });
  }
  return coarsePatch(oldName, newName, oldLines, newLines, context);
}

/** The linear fallback, exported for tests: one hunk replacing everything between common prefix and suffix. */
export function coarseStructuredPatch(
  oldName: string,
  newName: string,
  oldText: string,
  newText: string,
  context: number,
): StructuredPatch {
  return coarsePatch(oldName, newName, splitLines(oldText), splitLines(newText), context);
}

function coarsePatch(
  oldName: string,
  newName: string,
  oldLines: string[],
  newLines: string[],
  context: number,
): StructuredPatch {
  return {
    oldFileName: oldName,
    newFileName: newName,
    oldHeader: undefined,
    newHeader: undefined,
    hunks: coarseHunks(oldLines, newLines, context),
  };
}

/** Lines with their newline kept, as jsdiff compares them. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines: string[] = [];
  let start = 0;
  for (;;) {
    const end = text.indexOf('\n', start);
    if (end === -1) {
      if (start < text.length) lines.push(text.slice(start));
      return lines;
    }
    lines.push(text.slice(start, end + 1));
    start = end + 1;
  }
}

/** One hunk: the common prefix and suffix lines are context, everything between is replaced. */
function coarseHunks(oldLines: string[], newLines: string[], context: number): StructuredPatchHunk[] {
  let prefix = 0;
  const shorter = Math.min(oldLines.length, newLines.length);
  while (prefix < shorter && oldLines[prefix] === newLines[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < shorter - prefix &&
    oldLines[oldLines.length - 1 - suffix] === newLines[newLines.length - 1 - suffix]
  ) {
    suffix++;
  }
  const oldEnd = oldLines.length - suffix;
  const newEnd = newLines.length - suffix;
  if (prefix === oldEnd && prefix === newEnd) return [];
  const before = Math.max(0, prefix - context);
  const after = Math.min(suffix, context);
  const lines: string[] = [];
  const push = (mark: string, line: string, isLastOf: boolean) => {
    lines.push(mark + (line.endsWith('\n') ? line.slice(0, -1) : line));
    if (isLastOf && !line.endsWith('\n')) lines.push(NO_NEWLINE);
  };
  for (let i = before; i < prefix; i++) push(' ', oldLines[i]!, false);
  for (let i = prefix; i < oldEnd; i++) push('-', oldLines[i]!, i === oldLines.length - 1);
  for (let i = prefix; i < newEnd; i++) push('+', newLines[i]!, i === newLines.length - 1);
  for (let i = oldEnd; i < oldEnd + after; i++) push(' ', oldLines[i]!, i === oldLines.length - 1);
  const oldCount = prefix - before + (oldEnd - prefix) + after;
  const newCount = prefix - before + (newEnd - prefix) + after;
  return [
    {
      // jsdiff's structured convention: 1-based even for an empty side (formatPatch prints it as 0).
      oldStart: before + 1,
      oldLines: oldCount,
      newStart: before + 1,
      newLines: newCount,
      lines,
    },
  ];
}
