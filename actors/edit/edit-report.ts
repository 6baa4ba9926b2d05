/**
 * @module
 * What an applied edit looks like to people and models: the unified diff
 * (bounded jsdiff, 3 lines of context), added/removed line counts, and the tool
 * messages in zed's words (`Edited {path} successfully`, or the error
 * followed by the diff of what was applied before it, or `No edits were made.`).
 */
import type { EditOutcome } from '../../machines/edit/edit-apply.ts';
import { boundedStructuredPatch } from '../../machines/review/bounded-diff.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';

export type DiffReport = { diff: string; linesAdded: number; linesRemoved: number };

export function unifiedDiff(displayPath: string, before: string, after: string): DiffReport {
  // Bounded cost: a rewritten big file is one coarse hunk, not a quadratic diff blocking the host.
  const patch = boundedStructuredPatch(`a/${displayPath}`, `b/${displayPath}`, before, after, 3);
  let linesAdded = 0;
  let linesRemoved = 0;
  const body: string[] = [`--- a/${displayPath}`, `+++ b/${displayPath}`];
  for (const h of patch.hunks) {
    body.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`);
    for (const l of h.lines) {
      if (l.startsWith('+')) linesAdded++;
      else if (l.startsWith('-')) linesRemoved++;
      body.push(l);
    }
  }
  return { diff: patch.hunks.length === 0 ? '' : `${body.join('\n')}\n`, linesAdded, linesRemoved };
}

/** Diffs in replies and facts stay under this many characters (a whole-file rewrite can be megabytes). */
export const MAX_DIFF_CHARS = 256 * 1024;

/** `unifiedDiff`, cut at MAX_DIFF_CHARS on a line boundary with a note saying how much was left out. */
export function cappedDiff(displayPath: string, before: string, after: string): DiffReport {
  const report = unifiedDiff(displayPath, before, after);
  if (report.diff.length <= MAX_DIFF_CHARS) return report;
  const cut = report.diff.lastIndexOf('\n', MAX_DIFF_CHARS) + 1;
  return {
    ...report,
    diff:
      `${report.diff.slice(0, cut)}… diff truncated: ` +
      `${report.diff.length - cut} more characters; read the file for the rest.\n`,
  };
}

/** Success text; fuzzy matches are named, so a tolerated drift is never reported as exact. */
export function successMessage(displayPath: string, outcomes: readonly EditOutcome[]): string {
  const fuzzy = outcomes.filter((o) => o.matchKind === 'fuzzy');
  if (fuzzy.length === 0) return `Edited ${displayPath} successfully`;
  const parts = fuzzy.map(
    (o) =>
      `edit ${o.index} at lines ${o.startLine}-${o.endLine} (line similarity ` +
      `${o.similarity.toFixed(2)} after normalizing whitespace and quotes)`,
  );
  return `Edited ${displayPath} successfully. Matched fuzzily, not byte for byte: ${parts.join('; ')}.`;
}

/** Failure text: the error, then the diff of the edits applied before it (they were kept and saved). */
export function failureMessage(error: string, displayPath: string, diff: string): string {
  if (diff === '') return `${error}\nNo edits were made.`;
  return `${error}\nEdited ${displayPath}:\n\n\`\`\`diff\n${diff}\`\`\``;
}

/** Why a streamed edit a person must approve is not written yet (`EditService.seal` / `finish`). */
export const approvalErrors = {
  asking: (editId: string) =>
    new RuntimeError(
      ErrorCode.InvalidState,
      `Edit ${JSON.stringify(editId)} is waiting for a person's answer (an earlier edit.finish asked); ` +
        'its reply says whether it was written.',
    ),
  notApproved: (editId: string) =>
    new RuntimeError(
      ErrorCode.InvalidState,
      `Edit ${JSON.stringify(editId)} must be shown to a person and approved before it is written.`,
    ),
};
