/**
 * @module
 * What `ActionLogService` is given (`ActionLogServiceDeps`) and takes (`RecordChangeInput`), and how a review
 * records first the changes the log refused earlier (`flushFirst`).
 */
import type { Logger } from 'pino';
import { ErrorCode, RuntimeError, reasonOf } from '../../schemas/errors.ts';
import type { UnstampedFact } from '../../schemas/message.ts';
import type { FileWrite } from '../../machines/review/action-log-plan.ts';
import type { ChangeSource } from '../../schemas/review.ts';
import type { PathLock } from './action-log-files.ts';
import type { BlobStore } from './blob-store.ts';
import type { ReviewJournal } from './review-journal.ts';
import type { ReviewDiffer } from './review-listing.ts';

export type RecordChangeInput = {
  /** The agent that made the change. */
  agentId: string;
  /** Its ancestors, nearest first (parent, grandparent, …, root). */
  ancestors: readonly string[];
  /** Absolute path. */
  path: string;
  /** Content before the change (null: the file did not exist). */
  before: string | null;
  /** Content after the change (null: the file was deleted). */
  after: string | null;
  source: ChangeSource;
  changeId?: string;
  /** The file's permission bits before the change (a deletion's entry keeps them for a reject). */
  beforeMode?: number | undefined;
};

/** How a fact is appended: `id` its fact id, `causationId` the review command that caused it (never run twice). */
export type EmitOptions = { id?: string; causationId?: string };

export type ActionLogServiceDeps = {
  emit: (fact: UnstampedFact, options?: EmitOptions) => Promise<void>;
  /** Review writes in flight, finished at the next start if a kill cuts them short (none in tests of plans). */
  journal?: ReviewJournal;
  /** What a failed write to a store in the data dir (`dir`) says (a full disk: `unavailable`, naming it). */
  storeError?: (dir: string, err: unknown) => unknown;
  blobs: BlobStore;
  /** Shared with the edit wiring; a new one when missing. */
  lock?: PathLock;
  log?: Logger;
  /** The workspace roots review writes are confined to (all of them when missing: tests of plans alone). */
  roots?: () => readonly string[];
  /** Where big review diffs are computed (on this thread when missing). */
  reviewDiff?: ReviewDiffer;
  /** The largest file a reject or undo reads from disk (`domains.edit.maxFileBytes`; its default when missing). */
  maxReadBytes?: number;
  /**
   * Changes on disk still waiting to be recorded (`infra/review/unrecorded.ts`): a review by `agentId` records
   * first those its log would hold (its own and its descendants', each path under its lock), then again those of
   * its paths under its own locks, so it never decides without them; either throws to refuse the review.
   */
  waiting?: { flushAll(agentId: string): Promise<void>; flush(paths: readonly string[]): Promise<void> };
  /** Told of each file a review wrote (`CommitDeps.wrote`). */
  wrote?: (write: FileWrite) => void | Promise<void>;
};

/** Records the changes a review must see first; refuses the review, saying nothing was done, when it cannot. */
export async function flushFirst(flush: () => Promise<void> | undefined, what = 'accepted or rejected'): Promise<void> {
  try {
    await flush();
  } catch (err) {
    throw new RuntimeError(
      ErrorCode.Unavailable,
      `Nothing was ${what}: ${reasonOf(err)}, and this review would decide without them. Try again ` +
        'once the event log can be written.',
      { retryable: true, cause: err },
    );
  }
}
