/**
 * @module
 * Reviews whose first append failed, perhaps stored after all (an append that timed out): remembered by fact id
 * (`writePlan` tells of each), and finished while serving once the fact writer's re-read finds the fact in the
 * log, as the next start would finish them from the journal (`review-journal.ts`). Until 6 December the disk and
 * review.list kept the change the log said was rejected, until that start.
 */
import type { Logger } from 'pino';
import type { StoredFact } from '../../schemas/message.ts';
import { appendFacts, type CommitDeps, type LateReview, pathsOf } from './review-commit.ts';
import { finishStored } from './review-journal.ts';

/** Reviews in doubt remembered (one whose append failed for good stays until the bound pushes it out). */
const MAX_LATE = 1_000;

export class LateReviews {
  readonly #byId = new Map<string, LateReview>();

  add(late: LateReview): void {
    if (this.#byId.size >= MAX_LATE) this.#byId.delete(this.#byId.keys().next().value!);
    this.#byId.set(late.factId, late);
  }

  /**
   * The review in doubt whose fact this is, to fold and finish now (forgotten here); undefined for any other fact,
   * and for one heard after a later fact on one of its paths (a record riding in an edit's fact, folded first):
   * folded now it would hide that change, so it is left to the next start, which folds the log in order.
   */
  heard(fact: StoredFact, touchedAt: (path: string) => number | undefined, logger: Logger): LateReview | undefined {
    const late = this.#byId.get(fact.id);
    if (!late) return undefined;
    this.#byId.delete(fact.id);
    if (!late.paths.some((p) => (touchedAt(p) ?? 0) > fact.seq)) return late;
    logger.warn({ factId: fact.id }, 'a review in doubt was stored, behind later changes: finished at the next start');
    return undefined;
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
        entryOf: deps.entryOf,
      },
      late.factId,
      seq,
    );
  }
  // No files (an accept): the other logs' facts, unless one of their paths moved on since.
  const moved = late.rest.some((r) => pathsOf(r.fact).some((path) => (touchedAt(path) ?? 0) > seq));
  if (moved) logger.warn({ factId: late.factId }, 'a review in doubt: other logs moved on since; not updated');
  else await appendFacts(deps, late.rest);
  return 0;
}
