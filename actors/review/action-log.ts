/**
 * @module
 * `ActionLogService`: the effect side of action logs. It records changes
 * (from the edit kernel, whole-file writes and shell side effects) into the
 * originator's log and every ancestor's, and runs review commands: it takes
 * the per-path locks, loads texts from the blob store, asks the pure planner
 * (`machines/action-log-plan.ts`) what to do, stores new blobs, applies the
 * writes atomically (`action-log-files.ts`), emits the facts and folds them
 * into its own view of every log (the same fold the aggregate uses).
 *
 * Handlers (lead wiring): `review.list` → `list(cmd.data.agentId ?? cmd.agentId, cmd.data)`
 * (check that a given agentId is the caller or one of its descendants);
 * `review.accept` → `accept(cmd.agentId, cmd.data)`; `review.reject` →
 * `reject(cmd.agentId, cmd.data)`; `review.undo-reject` → `undoReject(cmd.agentId)`.
 * One service per host; its `emit` appends a fact under `fact.agentId` (the
 * log's owner, which differs from the caller for ancestors' and descendants'
 * logs). Edits: take `service.lock.withLock([path], …)` around
 * read→match→write and call `recordChange(…, { lockHeld: true })` inside.
 * Shell: see `workspace-snapshot.ts`.
 */
import { isAbsolute } from 'node:path';
import { newId } from '../../schemas/ids.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { READ_SETTLE_MS, type StoredFact, type UnstampedFact } from '../../schemas/message.ts';
import type { ActionLogContext, ActionLogFact } from '../../machines/review/action-log.ts';
import { planAccept } from '../../machines/review/action-log-accept.ts';
import {
  planNeedsTexts,
  planRecord,
  type AcceptReply,
  type LogView,
  type Plan,
  type RejectReply,
  type Selection,
  type UndoReply,
  withSeenPaths,
} from '../../machines/review/action-log-plan.ts';
import { planReject } from '../../machines/review/action-log-reject.ts';
import { planUndoReject } from '../../machines/review/action-log-undo.ts';
import type { Logger } from 'pino';
import { type BlobStore, contentHash } from './blob-store.ts';
import { PathLock, readDisk, settledWithin } from './action-log-files.ts';
import { type ListOptions, type ListReply, listChanges, type ReviewDiffer } from './review-listing.ts';
import { ReviewDiffCache } from './review-diff-cache.ts';
import { ActionLogBook, loadHashes, loadTexts } from './action-log-book.ts';
import { finishJournal, type JournalDeps, type ReviewJournal } from './review-journal.ts';
import { appendFacts, type CommitDeps, leftAloneIn, writePlan, writeUndo } from './review-commit.ts';
import { finishLate, LateReviews } from './review-late.ts';
import { type ActionLogServiceDeps, flushFirst, type RecordChangeInput } from './action-log-deps.ts';

export type { ActionLogServiceDeps, EmitOptions, RecordChangeInput } from './action-log-deps.ts';

export class ActionLogService {
  readonly lock: PathLock;
  readonly blobs: BlobStore;
  #emit: ActionLogServiceDeps['emit'];
  #log: Logger | undefined;
  #roots: ActionLogServiceDeps['roots'];
  #reviewDiff: ReviewDiffer | undefined;
  #maxReadBytes: number | undefined;
  #journal: ReviewJournal | undefined;
  #storeError: (dir: string, err: unknown) => unknown;
  #waiting: ActionLogServiceDeps['waiting'];
  #wrote: ActionLogServiceDeps['wrote'];
  /** Big diffs between listings: the pages of a diff sent in parts each list the log again. */
  readonly #diffCache = new ReviewDiffCache();
  /** Every log as folded here, and the agent tree their records taught. */
  readonly #book = new ActionLogBook();
  /** Accepts, rejects and undos writing the disk and their facts: a listing waits for them (`list`). */
  readonly #committing = new Set<Promise<unknown>>();
  /** Reviews whose first append failed: finished if the log turns out to hold their fact (`storedLate`). */
  readonly #late = new LateReviews();

  constructor(deps: ActionLogServiceDeps) {
    this.#emit = deps.emit;
    this.blobs = deps.blobs;
    this.lock = deps.lock ?? new PathLock();
    this.#log = deps.log;
    this.#roots = deps.roots;
    this.#reviewDiff = deps.reviewDiff;
    this.#maxReadBytes = deps.maxReadBytes;
    this.#journal = deps.journal;
    this.#storeError = deps.storeError ?? ((_dir, err) => err);
    this.#waiting = deps.waiting;
    this.#wrote = deps.wrote;
  }

  /**
   * At start: finishes the review writes a killed host left half done (`review-journal.ts`); `seqOf` and
   * `touchedAt` say what the log read back holds (a fact id's sequence, the last sequence touching a path).
   */
  finishInterrupted(log: Pick<JournalDeps, 'seqOf' | 'touchedAt'>, logger: Logger): Promise<number> {
    const deps = this.#commitDeps();
    if (!deps.journal) return Promise.resolve(0);
    return finishJournal({ ...deps, journal: deps.journal, ...log, append: (f) => appendFacts(deps, f), logger });
  }

  /**
   * A fact the log holds, heard while serving: a review whose append failed in doubt, found stored after all, is
   * folded and finished under its paths' locks as a start would (`LateReviews.heard`, `finishLate`); a listing
   * waits for that.
   */
  storedLate(fact: StoredFact, touchedAt: (path: string) => number | undefined, logger: Logger): void {
    const late = this.#late.heard(fact, touchedAt, logger);
    if (!late) return;
    this.#book.fold(fact as unknown as ActionLogFact & { agentId?: string });
    const finish = () => finishLate(this.#commitDeps(), late, fact.seq, touchedAt, logger);
    const failed = (err: unknown) =>
      logger.error({ err, factId: fact.id }, 'a review in doubt could not be finished; it is tried at the next start');
    this.#track(this.lock.withLock(late.paths, finish).catch(failed));
  }

  /** Resolves when the review writes under way (and late finishes) are done. */
  async settled(): Promise<void> {
    while (this.#committing.size > 0) await Promise.allSettled([...this.#committing]);
  }

  /** Rebuilds the logs and the agent tree from stored facts (replay / restart). */
  restore(facts: Iterable<ActionLogFact & { agentId?: string }>): void {
    for (const f of facts) this.#book.fold(f);
  }

  /** A copy of one log's folded state (empty when the agent has no changes). */
  state(agentId: string): ActionLogContext {
    return this.#book.state(agentId);
  }

  /**
   * Records one change under the originator's log and each ancestor's.
   * Takes the path lock unless `opts.lockHeld` (the caller holds it, e.g. the edit wiring).
   * Returns null when before and after are equal (nothing to record).
   */
  async recordChange(
    input: RecordChangeInput,
    opts: { lockHeld?: boolean } = {},
  ): Promise<{ changeId: string } | null> {
    if (!isAbsolute(input.path)) {
      throw new RuntimeError(
        ErrorCode.InvalidMessage,
        `Path '${input.path}' is not absolute; record changes with absolute paths.`,
      );
    }
    const run = async () => {
      const beforeHash = input.before === null ? null : await this.blobs.put(input.before);
      const resultHash = input.after === null ? null : await this.blobs.put(input.after);
      return this.#record(input, beforeHash, resultHash);
    };
    return opts.lockHeld ? run() : this.lock.withLock([input.path], run);
  }

  /**
   * Like recordChange, for a caller that already stored both contents in the blob store (e.g. the edit
   * kernel reporting `{ path, baseHash, resultHash }`); a hash missing from the store is a BlobMissingError.
   */
  async recordChangeByHash(
    input: Omit<RecordChangeInput, 'before' | 'after'> & { beforeHash: string | null; resultHash: string | null },
    opts: { lockHeld?: boolean } = {},
  ): Promise<{ changeId: string } | null> {
    if (!isAbsolute(input.path)) {
      throw new RuntimeError(
        ErrorCode.InvalidMessage,
        `Path '${input.path}' is not absolute; record changes with absolute paths.`,
      );
    }
    const run = () => this.#record(input, input.beforeHash, input.resultHash);
    return opts.lockHeld ? run() : this.lock.withLock([input.path], run);
  }

  /**
   * Plans the records of a change whose contents are in the blob store, without appending them: the caller
   * carries `facts` in its own outcome fact (edit.applied: one append, so the log never holds the outcome
   * without its records), then calls `folded(facts)` once that is stored. Under the path lock, like
   * recordChangeByHash with `lockHeld`. Null when nothing changed.
   */
  async planChangeByHash(
    input: Omit<RecordChangeInput, 'before' | 'after'> & { beforeHash: string | null; resultHash: string | null },
  ): Promise<{ changeId: string; facts: UnstampedFact[] } | null> {
    const plan = await this.#plan(input, input.beforeHash, input.resultHash);
    if (!plan) return null;
    for (const content of Object.values(plan.plan.blobs)) await this.blobs.put(content);
    return { changeId: plan.changeId, facts: plan.plan.facts };
  }

  /** Folds records planned by planChangeByHash once the fact carrying them is stored. */
  folded(facts: readonly UnstampedFact[]): void {
    for (const fact of facts) this.#book.fold(fact as ActionLogFact & { agentId?: string });
  }

  async #record(
    input: Omit<RecordChangeInput, 'before' | 'after'>,
    beforeHash: string | null,
    resultHash: string | null,
  ): Promise<{ changeId: string } | null> {
    const planned = await this.#plan(input, beforeHash, resultHash);
    if (!planned) return null;
    // Not remembered in doubt: a record that fails is recorded again by its caller (`infra/review/unrecorded.ts`).
    await writePlan({ ...this.#commitDeps(), doubted: undefined }, planned.plan);
    this.#log?.debug(
      { agentId: input.agentId, path: input.path, changeId: planned.changeId, kind: input.source.kind },
      'change recorded',
    );
    return { changeId: planned.changeId };
  }

  async #plan(
    input: Omit<RecordChangeInput, 'before' | 'after'>,
    beforeHash: string | null,
    resultHash: string | null,
  ): Promise<{ changeId: string; plan: Plan<null> } | null> {
    if (beforeHash === resultHash) return null;
    this.#book.learnLineage(input.agentId, input.ancestors);
    const lineage = [input.agentId, ...input.ancestors];
    const logs = lineage.map((id) => this.#book.view(id));
    const others = this.#book.holding(input.path, lineage).map((id) => this.#book.view(id));
    // Contents only when the plan reads them (an outside edit to fold, other logs): most changes need none, and
    // the change's own two are then only checked to be in the store (BlobMissingError), not read.
    const texts: Record<string, string> = {};
    const needed = planNeedsTexts({ path: input.path, beforeHash }, logs, others);
    if (needed) Object.assign(texts, await loadTexts(this.blobs, [...logs, ...others], [input.path]));
    const what = {
      before: `content before the change of '${input.path}'`,
      after: `content after the change of '${input.path}'`,
    };
    for (const [hash, of] of [
      [beforeHash, what.before],
      [resultHash, what.after],
    ] as const) {
      if (hash === null) continue;
      if (needed) texts[hash] = await this.blobs.require(hash, of);
      else await this.blobs.size(hash, of);
    }
    const changeId = input.changeId ?? newId('chg');
    const plan = planRecord(
      {
        changeId,
        agentId: input.agentId,
        lineage: [...input.ancestors],
        path: input.path,
        beforeHash,
        resultHash,
        source: input.source,
        beforeMode: input.beforeMode,
      },
      logs,
      { texts, hash: contentHash },
      others,
    );
    return { changeId, plan };
  }

  /** review.list (`review-listing.ts`: big diffs left out unless asked for, or computed off the loop). */
  async list(agentId: string, opts: ListOptions = {}): Promise<ListReply> {
    // A reject changes the disk before its facts are folded: a listing asked for by someone who saw the disk
    // change (the operator's page) would still show the rejected file, and an accept of what it shows fail.
    // Waited for at most as long as a read waits for the host's appends.
    if (this.#committing.size > 0) await settledWithin([...this.#committing], READ_SETTLE_MS);
    const load = (view: LogView, paths: readonly string[]) => loadTexts(this.blobs, [view], paths);
    const deps = { blobs: this.blobs, reviewDiff: this.#reviewDiff, cache: this.#diffCache, load };
    return listChanges(deps, this.#book.view(agentId), opts);
  }

  /** review.accept (`commandId`: the command's, so that a retry of it after a restart is not run again). */
  async accept(agentId: string, sel: Selection = {}, commandId?: string): Promise<AcceptReply> {
    return this.#withSelection(agentId, sel, async (view, paths) => {
      const descendants = this.#book.descendants(agentId).map((id) => this.#book.view(id));
      const texts = await loadTexts(this.blobs, [view, ...descendants], paths);
      const plan = planAccept(view, descendants, sel, { texts, hash: contentHash });
      await this.#commit(plan, commandId);
      return plan.reply;
    });
  }

  /** review.reject */
  async reject(agentId: string, sel: Selection = {}, commandId?: string): Promise<RejectReply> {
    return this.#withSelection(agentId, sel, async (view, paths) => {
      const ancestors = this.#book.ancestors(agentId).map((id) => this.#book.view(id));
      const descendants = this.#book.descendants(agentId).map((id) => this.#book.view(id));
      const texts = await loadTexts(this.blobs, [view, ...ancestors, ...descendants], paths);
      // Only what this log holds is read (and only that can be rejected): a path it never recorded, perhaps one
      // another host's workspace holds, is the planner's not_found, not a refusal of the read.
      const recorded = paths.filter((p) => Object.hasOwn(view.files, p));
      const modes: Record<string, number> = {};
      const disk = await readDisk(recorded, this.#roots?.(), this.#maxReadBytes, modes);
      const plan = planReject(view, { ancestors, descendants }, sel, disk, { texts, hash: contentHash, modes });
      leftAloneIn(plan.reply, plan.reply.restored, await this.#commit(plan, commandId));
      this.#log?.info(
        { agentId, restored: plan.reply.restored.length, conflicts: plan.reply.conflicts.length },
        'changes rejected',
      );
      return plan.reply;
    });
  }

  /** review.undo-reject */
  async undoReject(agentId: string, commandId?: string): Promise<UndoReply> {
    const last = this.#book.view(agentId).lastReject;
    const paths = last ? last.files.map((f) => f.path) : [];
    return this.lock.withLock(paths, async () => {
      await flushFirst(() => this.#waiting?.flush(paths), 'undone');
      const view = this.#book.view(agentId);
      const ids = Object.keys(view.lastReject?.entries ?? {}).filter((id) => id !== agentId);
      const related = ids.map((id) => this.#book.view(id));
      const hashes = new Map<string, string>();
      for (const f of view.lastReject?.files ?? []) {
        if (f.beforeHash) hashes.set(f.beforeHash, `content before the reject of '${f.path}'`);
        if (f.afterHash) hashes.set(f.afterHash, `content after the reject of '${f.path}'`);
        // What the log held before the reject: running commands start again from it (`FileWrite.model`); and what
        // each log holds now (a change recorded since the reject: the undo re-applies onto it).
        const prev = view.lastReject?.entries[agentId]?.[f.path]?.currentHash;
        if (prev && !hashes.has(prev)) hashes.set(prev, `content the log held before the reject of '${f.path}'`);
        for (const v of [view, ...related]) {
          const now = v.files[f.path]?.currentHash;
          if (now && !hashes.has(now)) hashes.set(now, `content the log of '${v.agentId}' holds for '${f.path}'`);
        }
      }
      const texts = await loadHashes(this.blobs, hashes);
      const disk = await readDisk(paths, this.#roots?.(), this.#maxReadBytes);
      const descendants = new Set(this.#book.descendants(agentId));
      const plan = planUndoReject(view, related, disk, { texts, hash: contentHash }, descendants);
      const deps = this.#commitDeps();
      await this.#track(writeUndo(deps, plan, plan.reply.reapplied, deps.entryOf, commandId));
      return plan.reply;
    });
  }

  // --- internals -----------------------------------------------------------

  #withSelection<T>(agentId: string, sel: Selection, fn: (view: LogView, paths: string[]) => Promise<T>): Promise<T> {
    return this.#select(agentId, withSeenPaths(sel), fn);
  }

  async #select<T>(agentId: string, sel: Selection, fn: (view: LogView, paths: string[]) => Promise<T>): Promise<T> {
    // A review of everything records first what its log would hold; one of named paths, those (under its locks).
    if (sel.paths === undefined) await flushFirst(() => this.#waiting?.flushAll(agentId));
    const all = Object.keys(this.#book.view(agentId).files);
    const paths = sel.paths ?? all;
    // Related logs may track the same paths: one lock set covers them all.
    return this.lock.withLock(paths, async () => {
      await flushFirst(() => this.#waiting?.flush(paths));
      const view = this.#book.view(agentId);
      if (sel.paths === undefined) {
        // Only what was locked: a path recorded while we waited is left for the next review.
        const locked = new Set(paths);
        view.files = Object.fromEntries(Object.entries(view.files).filter(([p]) => locked.has(p)));
      }
      return fn(view, sel.paths ?? Object.keys(view.files));
    });
  }

  /** `#write` of an accept, reject or undo: a listing waits for it (`list`); a change's record is not waited for. */
  #commit<T>(plan: Plan<T>, commandId?: string): Promise<string[]> {
    return this.#track(writePlan(this.#commitDeps(), plan, commandId));
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#committing.add(work);
    const done = () => void this.#committing.delete(work);
    work.then(done, done);
    return work;
  }

  #commitDeps(): CommitDeps {
    return {
      blobs: this.blobs,
      emit: this.#emit,
      fold: (fact) => this.#book.fold(fact as ActionLogFact & { agentId?: string }),
      journal: this.#journal,
      storeError: this.#storeError,
      roots: this.#roots?.(),
      maxReadBytes: this.#maxReadBytes,
      doubted: (late) => this.#late.add(late),
      wrote: this.#wrote,
      entryOf: (id, path) => this.#book.view(id).files[path] ?? null,
    };
  }
}

export { PathLock } from './action-log-files.ts';
export {
  type ListOptions,
  type ListReply,
  REVIEW_DIFF_CUTOFF_BYTES,
  REVIEW_OFF_THREAD_BYTES,
  type ReviewDiffer,
} from './review-listing.ts';
