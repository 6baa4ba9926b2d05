/**
 * @module
 * Reviews whose first append failed, perhaps stored after all (an append that timed out): remembered by fact id
 * (`writePlan` tells of each), and finished while serving once the fact writer's re-read finds the fact in the
 * log, as the next start would finish them from the journal (`review-journal.ts`). Until 6 December the disk and
 * review.list kept the change the log said was rejected, until that start.
 */
import type { Logger } from 'pino';
import { appendFacts, type CommitDeps, type LateReview } from './review-commit.ts';
import { finishStored } from './review-journal.ts';

/** Reviews in doubt remembered (one whose append failed for good stays until the bound pushes it out). */
const MAX_LATE = 1_000;

export class LateReviews {
  readonly #byId = new Map<string, LateReview>();

  add(late: LateReview): void {
    if (this.#byId.size >= MAX_LATE) this.#byId.delete(this.#byId.keys().next().value!);
    this.#byId.set(late.factId, late);
  }

  /** The review in doubt whose fact is `factId`, forgotten here; undefined for any other fact. */
  take(factId: string): LateReview | undefined {
    const late = this.#byId.get(factId);
    this.#byId.delete(factId);
    return late;
  }
}

/**
 * Finishes a review whose first fact the log was found to hold after its append failed in doubt: its files as a
 * start would (`finishStored`: only a file that still holds what it held before the review, and whose review no
 * later fact touched), then the other logs' facts, then the entry goes. The caller folded the fact already (in the
 * log's order) and holds the paths' locks. Returns the files written.
 */
export async function finishLate(
  deps: CommitDeps,
  late: LateReview,
  seq: number,
  touchedAt: (path: string) => number | undefined,
  logger: Logger,
): Promise<number> {
  if (late.journaled && deps.journal) {
    return finishStored(
      {
        journal: deps.journal,
        touchedAt,
        append: (facts) => appendFacts(deps, facts),
        blobs: deps.blobs,
        roots: deps.roots,
        maxReadBytes: deps.maxReadBytes,
        logger,
      },
      late.factId,
      seq,
    );
  }
  // No files (an accept, a change's record): the other logs' facts, unless one of their paths moved on since.
  const moved = late.rest.some((r) => pathsOf(r.fact).some((path) => (touchedAt(path) ?? 0) > seq));
  if (moved) logger.warn({ factId: late.factId }, 'a review in doubt: other logs moved on since; not updated');
  else await appendFacts(deps, late.rest);
  return 0;
}

/** The paths a review fact names: a record's own, or a review's files. */
function pathsOf(fact: { data: unknown }): string[] {
  const d = fact.data as { path?: unknown; files?: Array<{ path?: unknown }> };
  const files = Array.isArray(d.files) ? d.files.map((f) => f?.path) : [];
  return [d.path, ...files].filter((p): p is string => typeof p === 'string');
}
