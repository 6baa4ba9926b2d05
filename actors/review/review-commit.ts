/**
 * @module
 * How a review plan reaches the disk and the log (`ActionLogService`'s accept, reject, undo-reject and
 * recorded changes): blobs first; then, for a plan that writes files, the journal entry (`review-journal.ts`) and
 * the writes staged (what a full disk refuses); the first fact (the review's own) appended, carrying the command's
 * id (a retry is never run twice); only then the files put in place; then the other logs' facts; then the entry
 * dropped. A failed append discards the staged files and keeps the entry for the next start, which decides by the
 * log. The writes came first until 6 December: a reject refused by a full disk restored the files while the log
 * kept the change the disk no longer had.
 */
import { randomUUID } from 'node:crypto';
import type { FileWrite, Plan } from '../../machines/review/action-log-plan.ts';
import type { UnstampedFact } from '../../schemas/message.ts';
import type { FileUpdate, LogEntry } from '../../schemas/review.ts';
import { stageWrites } from './action-log-files.ts';
import type { BlobStore } from './blob-store.ts';
import { beginEntry, type GiveBack, givenBack, restId, type ReviewJournal } from './review-journal.ts';

export type CommitDeps = {
  blobs: BlobStore;
  emit: (fact: UnstampedFact, options?: { id?: string; causationId?: string }) => Promise<void>;
  /** Folds an appended fact into the service's logs. */
  fold: (fact: UnstampedFact) => void;
  journal: ReviewJournal | undefined;
  /** What a failed write to a store in the data dir (`dir`) says. */
  storeError: (dir: string, err: unknown) => unknown;
  roots: readonly string[] | undefined;
  maxReadBytes: number | undefined;
  /**
   * Told, before the failure is thrown, of a review whose first append failed: stored after all (a timeout), it
   * is finished by `finishLate` when the fact writer finds it in the log.
   */
  doubted?: ((late: LateReview) => void) | undefined;
  /**
   * Told of each file a review wrote (or deleted), its locks still held: a command's snapshot then does not take
   * it for its own, and commands still running are seen changing it from there on.
   */
  wrote?: ((write: FileWrite) => void | Promise<void>) | undefined;
  /** What a log holds for a path now: a journal's finish gives back an undo's entries only over its own. */
  entryOf: (logId: string, path: string) => LogEntry | null;
};

/** A review whose first fact's append failed, perhaps stored after all: what finishing it takes. */
export type LateReview = {
  factId: string;
  rest: ReadonlyArray<{ fact: UnstampedFact; id: string }>;
  /** The files it writes and the paths its facts name: their locks are held while it is finished. */
  paths: string[];
  journaled: boolean;
};

/**
 * Writes one plan: see the module doc. Returns the paths of files it was to create that it left alone: one was
 * made there while it ran (the disk keeps that one; the log, which says the plan's, is stale there).
 */
export async function writePlan<T>(
  deps: CommitDeps,
  plan: Plan<T>,
  commandId?: string,
  /** An undo's: the entries to give back for a file it leaves alone (`GiveBack`), journaled with it. */
  giveBack: readonly GiveBack[] = [],
): Promise<string[]> {
  const stored = (dir: string) => (err: unknown) => {
    throw deps.storeError(dir, err);
  };
  for (const content of Object.values(plan.blobs)) await deps.blobs.put(content).catch(stored(deps.blobs.dir));
  const { roots } = deps;
  const [first, ...rest] = plan.facts;
  const id = `f-${randomUUID()}`;
  // The entry before the staging: a kill in between leaves temp files the next start finds by it.
  const journal = first && plan.writes.length > 0 ? deps.journal : undefined;
  const journaled = { blobs: deps.blobs, roots, max: deps.maxReadBytes, stored };
  const entry = journal ? await beginEntry(journal, id, plan.writes, rest, giveBack, journaled) : undefined;
  const staged = await (plan.writes.length > 0 ? stageWrites(plan.writes, roots) : undefined)?.catch(
    async (err: unknown) => {
      await journal?.close(id);
      throw err;
    },
  );
  if (first) {
    try {
      await deps.emit(first, { id, ...(commandId ? { causationId: commandId } : {}) });
    } catch (err) {
      // Not stored, or stored after all (an append that timed out): the disk stays as it was, and the entry
      // stays, finished if its fact turns up in the log (`finishLate` while serving, else the next start).
      deps.doubted?.({
        factId: id,
        rest: rest.map((fact, n) => ({ fact, id: restId(id, n) })),
        paths: [...new Set([...plan.writes.map((w) => w.path), ...plan.facts.flatMap(pathsOf)])],
        journaled: journal !== undefined,
      });
      await staged?.discard();
      if (entry) await journal!.open({ ...entry, discarded: true }).catch(() => undefined);
      throw err;
    }
    deps.fold(first);
  }
  const leftAlone = (await staged?.commit()) ?? [];
  // Which files it left alone, for a start that finishes it after a kill (else it could not tell one made there
  // from its own, edited since). Not stored: a kill before its entries are given back leaves them listed.
  if (entry && leftAlone.length > 0) await journal!.open({ ...entry, leftAlone }).catch(() => undefined);
  for (const w of plan.writes) if (!leftAlone.includes(w.path)) await deps.wrote?.(w);
  await appendFacts(
    deps,
    rest.map((fact, n) => ({ fact, id: restId(id, n) })),
  );
  await appendFacts(deps, givenBack(id, rest.length, giveBack, leftAlone));
  await journal?.close(id);
  return leftAlone;
}

/**
 * writePlan for an undo, which may create files: a file it left alone (one made at the path while it committed)
 * is a conflict in its reply, out of `done`, and each log whose entry the undo set for that path gets back the
 * entry it had (`entryOf`, read before; journaled, so a start that finishes the undo gives them back too).
 */
export async function writeUndo<R extends Parameters<typeof leftAloneIn>[0]>(
  deps: CommitDeps,
  plan: Plan<R>,
  done: string[],
  entryOf: (logId: string, path: string) => LogEntry | null,
  commandId?: string,
): Promise<void> {
  const created = new Set(plan.writes.filter((w) => w.from === null && w.content !== null).map((w) => w.path));
  const by = plan.facts[0]?.agentId ?? '';
  const giveBack: GiveBack[] = [];
  for (const f of plan.facts) {
    for (const u of (f.data as { files?: FileUpdate[] }).files ?? []) {
      if (!created.has(u.path)) continue;
      giveBack.push({ agentId: f.agentId!, by, path: u.path, entry: entryOf(f.agentId!, u.path), set: u.entry });
    }
  }
  leftAloneIn(plan.reply, done, await writePlan(deps, plan, commandId, giveBack));
}

/** A reply's paths a commit left alone (writePlan), moved from what it did (`done`) to its conflicts. */
export function leftAloneIn<R extends { conflicts: Array<{ path: string; hunkIds: string[]; reason: string }> }>(
  reply: R,
  done: string[],
  leftAlone: readonly string[],
): R {
  for (const path of leftAlone) {
    const i = done.indexOf(path);
    if (i >= 0) done.splice(i, 1);
    reply.conflicts.push({
      path,
      hunkIds: [],
      reason: `'${path}' was created on disk while this ran, so that file was kept and this one not written`,
    });
  }
  return reply;
}

/** Appends and folds facts one by one (the other logs' of a review; those a journal entry held). */
export async function appendFacts(
  deps: Pick<CommitDeps, 'emit' | 'fold'>,
  facts: ReadonlyArray<{ fact: UnstampedFact; id: string }>,
): Promise<void> {
  for (const { fact, id } of facts) {
    await deps.emit(fact, { id });
    deps.fold(fact);
  }
}

/** The paths a review fact names: a record's own, or a review's files. */
export function pathsOf(fact: { data: unknown }): string[] {
  const d = fact.data as { path?: unknown; files?: Array<{ path?: unknown }> };
  const files = Array.isArray(d.files) ? d.files.map((f) => f?.path) : [];
  return [d.path, ...files].filter((p): p is string => typeof p === 'string');
}
