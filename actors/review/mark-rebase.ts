/**
 * @module
 * What a running command's mark starts from at a path once an edit or a review wrote there (`WorkspaceTracker.wrote`,
 * locks held): an edit took the commands' changes there first (`takeSoFar`), so every mark starts from what it
 * wrote. A review takes nothing: it carries its change (the disk it read → what it wrote) to what each mark started
 * from (`carryChange`), so lines a command wrote before stay its own, and lines on disk before the command (a
 * person's edit between commands) stay out of its change (else the command's lines taken out of what the review
 * wrote: `markStart`); where neither applies, the mark starts from what the log holds (`model`: visible, never
 * hidden).
 */
import { markStart } from '../../machines/review/action-log-hunks.ts';
import type { RootWatch } from './root-watch.ts';
import type { FileState, WorkspaceSnapshotter } from './workspace-snapshot.ts';

/** A review's write: the disk it read, and what the log holds after it. */
export type ReviewWrite = { from: string | null; model: string | null };

export async function rebaseMarks(
  rw: RootWatch,
  rel: string,
  content: string | Buffer | null,
  review: ReviewWrite | undefined,
  snapshotter: WorkspaceSnapshotter,
): Promise<void> {
  const disk = rw.state.get(rel);
  const stateOf = async (text: string | Buffer | null) =>
    text === null ? undefined : await snapshotter.writtenState(text, disk);
  if (!review) rw.rebase(rel, await stateOf(content));
  else {
    const to = content === null ? null : content.toString();
    for (const mark of rw.marks) {
      // A mark without the path saw no change there: it starts from the disk's state, which holds the write.
      if (!mark.before.has(rel)) continue;
      const base = await textOf(mark.before.get(rel), snapshotter);
      const carried = base === undefined ? undefined : markStart(base, review.from, to);
      mark.before.set(rel, await stateOf(carried === undefined ? review.model : carried));
      mark.witnesses.delete(rel);
    }
  }
  // What each mark sees at the path from now on is not the write (`ReviewRecorder.editedSince`).
  const at = performance.now();
  for (const mark of rw.marks) (mark.rebasedAt ??= new Map()).set(rel, at);
}

/** A state's content: null when absent, undefined when kept by hash only or not in the store. */
async function textOf(
  state: FileState | undefined,
  snapshotter: WorkspaceSnapshotter,
): Promise<string | null | undefined> {
  if (!state) return null;
  return state.hash === null ? undefined : snapshotter.textOf(state.hash);
}
