/**
 * @module
 * Turns facts an actor emits into durable log entries: stamps the envelope and
 * builds the subject (`stamp.ts`), appends with one writer per aggregate
 * (expected-last-subject-sequence; the next fact of a subject may go before the
 * previous one's ack, `send-order.ts`), retries a failed append with the same
 * msg-id, folds the stored fact into the live state, and reports a final
 * failure as an error plus a `host.append.failed` health fact. Nothing is
 * dropped silently.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ErrorCode,
  RuntimeError,
  eventsByType,
  reasonOf,
  toErrorInfo,
  type Fact,
  type StoredFact,
  type UnstampedFact,
} from '../../schemas/index.ts';
import type { Fold } from '../../machines/kernel/projection.ts';
import { foldStored } from '../../machines/kernel/fold-stored.ts';
import {
  AppendConflictError,
  type AppendRequest,
  type AppendResult,
  type EventLog,
  type LogStream,
} from '../transport/event-log.ts';
import { AppendFailedError } from './append-failed.ts';
import { PARSE_CHECKED_DEFAULT } from './checked.ts';
import { carriedFacts, carriedSubjects, subjectOf } from '../../schemas/carried.ts';

export { carriedFacts, foldStored, subjectOf };
import { InDoubtSubjects } from './in-doubt.ts';
import { InFlight } from './in-flight.ts';
import { KeyedLock } from './keyed-lock.ts';
import { SendOrder } from './send-order.ts';
import { stampFact, storedOf, type StampOptions } from './stamp.ts';

export type { StampOptions };
export { AppendFailedError };
import type { Logger } from './log.ts';

export type FactWriterOptions = {
  log: EventLog;
  fold: Fold;
  logger: Logger;
  hostId: string;
  retries: number;
  retryDelayMs: number;
  /** Throws a retryable `unavailable` error while the log cannot be reached (broker down): fail fast. */
  assertAvailable?: (() => void) | undefined;
  /**
   * Parse `checkedFact`s too, and refuse one whose parse differs from it. Default: on under vitest (or with
   * SKEIN_PARSE_CHECKED_FACTS=1), so every test checks the typed hot paths against their schemas at run time.
   */
  parseChecked?: boolean | undefined;
  /** Called once per fact stored in (or read from) the events stream, before its listeners; carried ones not. */
  onRecorded?: ((stored: StoredFact) => void) | undefined;
};

type EarlyOutcome = { result: AppendResult } | { error: unknown };

export class FactWriter {
  readonly #o: FactWriterOptions;
  readonly #lastBySubject = new Map<string, number>();
  readonly #lock = new KeyedLock();
  readonly #listeners = new Set<(fact: StoredFact, foreign: boolean) => void>();
  /** Subjects whose last append ended in doubt: re-read from the log before the next append there. */
  readonly #inDoubt: InDoubtSubjects;
  readonly #foreignDuplicates = new WeakSet<StoredFact>();
  readonly #order = new SendOrder();
  /** Events-stream writes sent to the log and not settled yet (`settled`). */
  readonly #inFlight = new InFlight();
  /** Events-stream writes not settled yet, by fact id: whether sent, and their promise once made. */
  readonly #writes = new Map<string, { sent: boolean; written?: Promise<StoredFact> }>();
  /** Writes asked for with `hold`, in order. */
  #held: Array<() => void> = [];
  #facts = 0;
  #lastSeq = 0;
  readonly #parseChecked: boolean;

  constructor(options: FactWriterOptions) {
    this.#o = options;
    this.#parseChecked = options.parseChecked ?? PARSE_CHECKED_DEFAULT;
    this.#inDoubt = new InDoubtSubjects({
      log: options.log,
      lock: this.#lock,
      last: this.#lastBySubject,
      apply: (stored) => this.#apply(stored),
      assertAvailable: options.assertAvailable,
      logger: options.logger,
    });
  }

  /** Folds a fact read from the log at start-up (no append). */
  restore(stored: StoredFact): void {
    this.#apply(stored);
    this.#keepLast(stored);
  }

  /**
   * Notes the subject's last sequence, for the next append there (never moving it back). Not for an aggregate
   * the fold keeps nothing of (complete at birth: a rule's decision of one tool call), which gets no more
   * appends: one entry per tool call, kept for the host's life.
   */
  #keepLast(stored: StoredFact): void {
    const aggregate = eventsByType.get(stored.type)?.aggregate;
    if (aggregate !== undefined && this.#o.fold.knows(aggregate) && this.#o.fold.get(stored.subject) === undefined) {
      this.#lastBySubject.delete(stored.subject);
      return;
    }
    this.#lastBySubject.set(stored.subject, Math.max(stored.seq, this.#lastBySubject.get(stored.subject) ?? 0));
  }

  get facts(): number {
    return this.#facts;
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }

  /**
   * Folds a fact another host appended, seen by following the log (named hosts). Under the subject's lock,
   * so an append of this writer in flight there is folded first and never twice.
   */
  observe(stored: StoredFact): Promise<void> {
    return this.#lock.run(stored.subject, async () => {
      if (stored.seq <= (this.#lastBySubject.get(stored.subject) ?? 0)) return;
      this.#lastBySubject.set(stored.subject, stored.seq);
      this.#apply(stored, 'events', true);
    });
  }

  /**
   * Called with every fact once it is durable (after the fold); `foreign` when another host appended it
   * (`observe`).
   */
  onFact(listener: (fact: StoredFact, foreign: boolean) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * `write`, held back until the next `write` (made first, in the same turn) or `release()`: a fact that must
   * precede what a command does next in the log without delaying it (a rule's grant, appended after the tool
   * started, in the same socket write as the tool's first fact).
   */
  hold(unstamped: UnstampedFact, options: StampOptions): Promise<StoredFact> {
    return new Promise((resolve, reject) => {
      this.#held.push(() => this.write(unstamped, options).then(resolve, reject));
    });
  }

  /** Appends what is held (`hold`), in order. */
  release(): void {
    const held = this.#held;
    if (held.length === 0) return;
    this.#held = [];
    for (const write of held) write();
  }

  /** Stamps, appends (durably) and folds one fact. Rejects with AppendFailedError after the retries. */
  async write(unstamped: UnstampedFact, options: StampOptions): Promise<StoredFact> {
    if (this.#held.length > 0) this.release();
    const { fact, subject, stream } = stampFact(unstamped, options, this.#parseChecked);
    if (stream === 'output') return this.#appendWithRetry(stream, subject, fact, undefined, options.textJsonSafe);
    const entry: { sent: boolean; written?: Promise<StoredFact> } = { sent: false };
    this.#writes.set(fact.id, entry);
    // One writer per aggregate: appends to a subject are serialized and carry the last sequence seen; one
    // asked for while the one before it is still in flight may be sent at once (#sendEarly).
    const early = this.#sendEarly(subject, fact);
    const written = this.#lock.run(subject, async () => {
      if (early) {
        const stored = await this.#settleEarly(early, subject, fact);
        if (stored) return stored;
      }
      // The aggregates its carried facts fold into (an action log, for an edit's records) are re-read too when in
      // doubt: a late fact there is folded before the records, in the log's order, as a replay folds them. Not
      // under their locks: a shell record carries into its own subject (whose lock this is), and two carriers
      // may carry into each other's. Without the lock, an append there may run meanwhile: every path that folds
      // skips a fact at or below the subject's last sequence (folded by the re-read), and a re-read clears the
      // doubt only if no append marked it again meanwhile (`InDoubtSubjects`).
      for (const carried of new Set(carriedSubjects(fact))) {
        if (carried !== subject && this.#inDoubt.has(carried)) await this.#resyncOrRefuse(carried);
      }
      if (this.#inDoubt.has(subject)) await this.#resyncOrRefuse(subject);
      const expected = this.#lastBySubject.get(subject) ?? 0;
      // Sent early and not settled there: it may be stored, so a duplicate of it is this writer's own.
      const stored = await this.#appendWithRetry(stream, subject, fact, expected, undefined, early !== undefined);
      if (this.#foreignDuplicates.delete(stored)) {
        this.#inDoubt.mark(subject);
        return stored;
      }
      // A duplicate (a fact id stored earlier) reports its old sequence: never move backwards.
      this.#keepLast(stored);
      return stored;
    });
    this.#order.asked(subject, fact.id, written);
    entry.written = written;
    if (entry.sent) this.#inFlight.add(written);
    const settled = () => {
      if (this.#writes.get(fact.id) === entry) this.#writes.delete(fact.id);
    };
    written.then(settled, settled);
    return written;
  }

  /** Re-reads `subject` when in doubt; refuses the append when the log cannot say. */
  async #resyncOrRefuse(subject: string): Promise<void> {
    if (!this.#inDoubt.has(subject)) return;
    await this.#inDoubt.resync(subject).catch((err: unknown) => {
      throw new RuntimeError(
        ErrorCode.Unavailable,
        `could not re-read '${subject}' from the event log after an append in doubt ` +
          `(${String((err as Error)?.message ?? err)}); nothing was appended — retry shortly`,
        {
          retryable: true,
          cause: err,
          reason: `could not re-read '${subject}' from the event log after an append in doubt (${reasonOf(err)})`,
        },
      );
    });
  }

  /**
   * Once the events-stream writes sent so far are settled (folded or failed), or after `maxMs`: only a fact
   * sent can have been seen on the bus, so writes still queued behind their subject's lock are not waited for.
   */
  settled(maxMs: number): Promise<void> {
    return this.#inFlight.settled(maxMs);
  }

  /**
   * Sends a fact of `subject` at once, while the fact before it there is still in flight, instead of after
   * that one's ack (`SendOrder` says when): a command's finish then goes out as soon as its end is seen, not
   * an ack after its start. `#settleEarly` takes the outcome once the facts before it are settled, in order.
   */
  #sendEarly(subject: string, fact: Fact): Promise<EarlyOutcome> | undefined {
    const last = this.#order.expectable(subject);
    if (last === undefined || this.#inDoubt.has(subject)) return undefined;
    if (carriedSubjects(fact).some((c) => this.#inDoubt.has(c))) return undefined;
    try {
      this.#o.assertAvailable?.();
    } catch {
      return undefined;
    }
    const sent = this.#send({ stream: 'events', subject, fact, expectedLastMsgId: last });
    return sent.then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
  }

  /**
   * The outcome of an early send, once every fact asked for before it on the subject has settled: stored
   * (and the subject not in doubt), it is folded as an append with the subject's sequence would have been.
   * Otherwise `undefined`: the caller appends it the usual way, with the same msg-id (a refused send stored
   * nothing; one in doubt comes back as a duplicate of itself).
   */
  async #settleEarly(early: Promise<EarlyOutcome>, subject: string, fact: Fact): Promise<StoredFact | undefined> {
    const outcome = await early;
    if (!('result' in outcome) || outcome.result.duplicate || this.#inDoubt.has(subject)) return undefined;
    const stored = storedOf(fact, outcome.result, subject);
    // A re-read of the subject (a carrier's, which takes no lock here) may have folded it already.
    if (stored.seq <= (this.#lastBySubject.get(subject) ?? 0)) return stored;
    this.#lastBySubject.set(subject, stored.seq);
    this.#apply(stored, 'events');
    return stored;
  }

  /** One append to the log, its order noted (`SendOrder`). */
  #send(request: AppendRequest): Promise<AppendResult> {
    const entry = request.stream === 'events' ? this.#writes.get(request.fact.id) : undefined;
    if (entry && !entry.sent) {
      entry.sent = true;
      if (entry.written) this.#inFlight.add(entry.written);
    }
    const appended = this.#o.log.append(request);
    return request.stream === 'events' ? this.#order.sent(request.subject, request.fact.id, appended) : appended;
  }

  async #appendWithRetry(
    stream: LogStream,
    subject: string,
    fact: Fact,
    expected: number | undefined,
    textJsonSafe?: boolean,
    sentBefore = false,
  ): Promise<StoredFact> {
    const { retries, retryDelayMs, logger } = this.#o;
    let lastError: unknown;
    let attempts = 0;
    for (let attempt = 1; attempt <= retries + 1; attempt++) {
      try {
        this.#o.assertAvailable?.();
      } catch (err) {
        // The broker is down: waiting out the retries would only delay the same answer.
        lastError = err;
        break;
      }
      attempts = attempt;
      try {
        const result = await this.#send({
          stream,
          subject,
          fact,
          expectedLastSubjectSeq: expected,
          ...(textJsonSafe ? { textJsonSafe } : {}),
        });
        const stored = storedOf(fact, result, subject);
        // Folded already: a re-read of the subject found it (an early send in doubt, #settleEarly).
        // Or a re-read that takes no lock of the subject (a carrier's) found it before this answer was handled.
        const folded = stream === 'events' && result.seq <= (this.#lastBySubject.get(subject) ?? 0);
        // A duplicate of an earlier attempt of this writer's (one that timed out, or an early send) is ours.
        if (!folded && (!result.duplicate || attempt > 1 || sentBefore)) {
          // Its sequence first, as every other path that folds does: a re-read then running skips it.
          if (stream === 'events')
            this.#lastBySubject.set(subject, Math.max(result.seq, this.#lastBySubject.get(subject) ?? 0));
          this.#apply(stored, stream);
        }
        // A duplicate of a fact this writer never folded (another host appended that id first, with its own
        // data): its sequence is not ours to claim; the follower (or a re-read) folds what is stored.
        else if (stream === 'events' && !folded && !sentBefore && attempt === 1) this.#foreignDuplicates.add(stored);
        return stored;
      } catch (err) {
        lastError = err;
        if (err instanceof AppendConflictError) break;
        if (isUnavailable(err)) break;
        logger.warn({ err, subject, event: fact.type, attempt }, 'append failed; retrying with the same msg-id');
        await sleep(retryDelayMs * attempt);
      }
    }
    // Whatever the failure, the log may hold more on this subject than this writer knows (a timed-out
    // append stored later, another writer): the next append re-reads the subject first.
    if (stream === 'events') this.#inDoubt.mark(subject);
    logger.error({ err: lastError, subject, event: fact.type, attempts }, 'fact not appended');
    await this.#reportHealth(fact, subject, attempts, lastError);
    if (lastError instanceof AppendConflictError || isUnavailable(lastError)) throw lastError;
    throw new AppendFailedError(fact.type, subject, attempts, lastError);
  }

  async #reportHealth(fact: Fact, subject: string, attempts: number, error: unknown): Promise<void> {
    if (fact.type === 'host.append.failed') return;
    // With the log unreachable the health fact cannot be stored either; the log line above says it.
    if (isUnavailable(error)) return;
    try {
      await this.write(
        {
          type: 'host.append.failed',
          data: {
            hostId: this.#o.hostId,
            factId: fact.id,
            factType: fact.type,
            subject,
            attempts,
            error: toErrorInfo(error),
          },
        },
        { agentId: fact.agentId, causationId: fact.causationId },
      );
    } catch (err) {
      this.#o.logger.error({ err }, 'health fact not appended either');
    }
  }

  #apply(stored: StoredFact, stream: LogStream = 'events', foreign = false): void {
    if (stream === 'events') {
      this.#facts += 1;
      this.#lastSeq = Math.max(this.#lastSeq, stored.seq);
      this.#o.onRecorded?.(stored);
    }
    // The facts it carries (edit.applied's action-log records) follow it, folded and heard as if stored alone.
    const carried = stream === 'events' ? foldStored(this.#o.fold, stored) : [];
    for (const fact of [stored, ...carried]) {
      for (const listener of this.#listeners) {
        try {
          listener(fact, foreign);
        } catch (err) {
          this.#o.logger.error({ err, event: fact.type }, 'fact listener failed');
        }
      }
    }
  }
}

function isUnavailable(err: unknown): boolean {
  return err instanceof RuntimeError && err.code === ErrorCode.Unavailable;
}
