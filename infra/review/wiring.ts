/**
 * @module
 * The review domain (action log): review.* handlers (scoped to the sender
 * and its descendants), the action log restored from the log's facts at
 * start-up (a reaction), and the `record` function the edit and terminal
 * domains are given to record an agent's change to a file.
 */
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { ErrorCode, RuntimeError, type AgentId, type StoredFact, type UnstampedFact } from '../../schemas/index.ts';
import type { ActionLogRecord } from '../../schemas/edit.ts';
import { ACTION_LOG_FACT_TYPES, actionLogAggregateDef } from '../../machines/review/action-log.ts';
import { ActionLogService, type EmitOptions, type RecordChangeInput } from '../../actors/review/action-log.ts';
import { ReviewJournal } from '../../actors/review/review-journal.ts';
import { pathsOf } from '../../actors/review/review-commit.ts';
import { BlobStore } from '../../actors/review/blob-store.ts';
import { DiffThread } from '../../actors/edit/diff-thread.ts';
import type { AgentDirectory } from '../../actors/agent/agent-directory.ts';
import { defineDomain } from '../kernel/domain.ts';
import { diskError } from '../transport/disk-errors.ts';
import { remoteAll, remoteEach, remoteFiles, type RemoteReview, splitSelection } from './remote-review.ts';

/**
 * The sequences of the action-log facts read back at start (a journal entry whose fact is among them happened)
 * and of the last one naming each path (a file whose review moved on since is not written again).
 */
function reviewReadBack() {
  const seqs = new Map<string, number>();
  const touched = new Map<string, number>();
  // The highest sequence: a fact in doubt found stored after all is heard after later ones, and must not hide them.
  const touch = (fact: StoredFact) => {
    for (const path of pathsOf(fact)) touched.set(path, Math.max(fact.seq, touched.get(path) ?? 0));
  };
  return {
    see(fact: StoredFact) {
      // Every action-log fact's: a review's other-log facts (`<id>/<n>`) are looked up too.
      seqs.set(fact.id, fact.seq);
      touch(fact);
    },
    /** Only the paths (while serving: a review in doubt found stored checks them, `storedLate`). */
    touch,
    seqOf: (id: string) => seqs.get(id),
    touchedAt: (path: string) => touched.get(path),
    /** After start: the fact ids go; the paths stay, kept current by `touch`. */
    clear() {
      seqs.clear();
    },
  };
}

/** An accept or reject of everything (no paths, no hunk ids): the only kind sent on to other hosts. */
function isAll(selection: { paths?: unknown; hunkIds?: unknown; seen?: unknown }): boolean {
  return selection.paths === undefined && selection.hunkIds === undefined && selection.seen === undefined;
}
import type { Host } from '../kernel/host.ts';
import { pageOfFiles } from './review-pages.ts';
import { UnrecordedChanges } from './unrecorded.ts';
import { PathLock } from '../../actors/review/action-log-files.ts';

export type ReviewWiring = ReturnType<typeof wireReview>;

/** What the edit and terminal domains use of the review domain. */
export type ReviewRecorder = {
  service: ActionLogService;
  /** Records a change by `agentId` in its log and every ancestor's. */
  record(input: Omit<RecordChangeInput, 'ancestors'>, opts?: { lockHeld?: boolean }): Promise<void>;
  /**
   * Like `record` under the path lock, but appends nothing: returns the records for the caller to carry in its
   * own outcome fact (`edit.applied`), and `stored` folds them once that fact is stored.
   */
  plan(input: PlannedChange): Promise<ActionLogRecord[]>;
  stored(records: readonly ActionLogRecord[]): void;
  /**
   * Whether `content` at `path` is what an edit or write recorded at or after
   * `since` (ms epoch) left there: a shell snapshot running at the same time
   * must not claim that change for its command. `rebasedAt` (`performance.now()`): when the command's watched
   * mark last started again from a write at `path` (`WorkspaceTracker.wrote`); a writer's write (an edit's, a
   * review's) made before then is out of what the mark sees, which is the command's own even where the disk
   * ends as that writer left it (a command's line written before a reject, which wrote the file with it).
   */
  editedSince(path: string, content: string | null, since: number, except?: object, rebasedAt?: number): boolean;
  /**
   * Notes a change a shell command's snapshot recorded, so overlapping commands do not record it again; `by`: the
   * command, whose own later look at the path (`editedSince` with `except`) does not count it.
   */
  claim(path: string, content: string | null, by?: object): void;
  /** Changes on disk whose records the log refused: recorded again until it takes them. */
  unrecorded: UnrecordedChanges;
};

/** A change an edit wrote, as bytes (the recorder stores them in the blob store). */
export type PlannedChange = Omit<RecordChangeInput, 'ancestors' | 'before' | 'after'> & {
  before: Buffer | null;
  after: Buffer;
  /** The sha256 of `before` and `after` when the caller has them (not hashed again). */
  beforeHash?: string | null | undefined;
  afterHash?: string | undefined;
};

export function wireReview(deps: {
  host: Host;
  directory: AgentDirectory;
  dataDir: string;
  /** Whose subjects carry a fact that names no agent. */
  rootAgentId: AgentId;
  logger: Logger;
  /** Where review writes and deletions are confined when the root agent is not known yet. */
  workspace?: string;
  /** The largest file a reject or undo reads from disk (`domains.edit.maxFileBytes`). */
  maxFileBytes?: number;
  /** Named hosts: how a subtree's agents placed on other hosts are reviewed through their hosts. */
  remote?: RemoteReview | undefined;
}) {
  const emit = async (fact: UnstampedFact, options: EmitOptions = {}) => {
    await deps.host.emit(fact, { agentId: fact.agentId ?? deps.rootAgentId, ...options });
  };
  // Big diffs review.list shows are computed on their own thread, started on first use.
  const diffs = new DiffThread(deps.logger);
  // Changes whose records the log refused: recorded under the review's path locks, before any later record or
  // review of their paths.
  const lock = new PathLock();
  const unrecorded = new UnrecordedChanges({ logger: deps.logger, withLock: (paths, fn) => lock.withLock(paths, fn) });
  const service = new ActionLogService({
    lock,
    // A command running meanwhile does not take a review's restore for its own change, and sees the review's change
    // made to what it started from (`UnrecordedChanges.written`, `mark-rebase.ts`): what it wrote before stays its.
    wrote: (w) => {
      recentEdits.set(w.path, { content: w.content, at: Date.now(), writtenAt: performance.now() });
      const model = w.model === undefined ? w.content : w.model;
      return unrecorded.written(w.path, w.content, { from: w.from === undefined ? w.content : w.from, model });
    },
    // A review waits only for the changes its log would hold: its agent's and its descendants'.
    waiting: {
      // Not what commands still running changed so far (`shellRecords.collect`): an accept would accept it unseen,
      // and a review with `seen` would find the file changed at every try while a command writes it.
      flush: (paths) => unrecorded.flush(paths, { running: false }),
      flushAll: (reviewer) => unrecorded.flushAll((owner) => deps.directory.isSelfOrAncestor(reviewer, owner)),
    },
    emit,
    reviewDiff: diffs.review,
    blobs: new BlobStore(join(deps.dataDir, 'blobs')),
    journal: new ReviewJournal(join(deps.dataDir, 'review-journal')),
    storeError: (dir, err) => diskError(dir, err, 'the review store in'),
    log: deps.logger.child({ actor: 'action-log' }),
    ...(deps.maxFileBytes === undefined ? {} : { maxReadBytes: deps.maxFileBytes }),
    // Every agent works inside the root's workspace: review writes and deletions are confined to it.
    // A named host that does not serve the root confines them to its own workspace, where its agents live.
    roots: () => {
      const root = deps.directory.view(deps.rootAgentId);
      const ws =
        root && deps.host.owns(deps.rootAgentId) ? root.workspace : deps.workspace && realpathSync(deps.workspace);
      return ws ? [ws] : [];
    },
  });
  const types: readonly string[] = ACTION_LOG_FACT_TYPES;
  /** What the log read back at start says of review writes (a journal entry's fact, a path touched since). */
  const readBack = reviewReadBack();
  const lateLogger = deps.logger.child({ actor: 'review-journal' });
  /** path → what the last edit/write left there (as written: an edit's bytes are not decoded again), and when. */
  const recentEdits = new Map<
    string,
    { content: string | Buffer | null; at: number; by?: object | undefined; writtenAt?: number }
  >();
  const sameContent = (kept: string | Buffer | null, content: string | null) => {
    if (kept === null || content === null || typeof kept === 'string') return kept === content;
    return kept.length === Buffer.byteLength(content) && kept.equals(Buffer.from(content));
  };
  const scope = (sender: string, target: string) => {
    if (!deps.directory.view(target)) throw new RuntimeError(ErrorCode.NotFound, `agent '${target}' does not exist`);
    if (!deps.directory.isSelfOrAncestor(sender, target)) {
      throw new RuntimeError(
        ErrorCode.PermissionDenied,
        `agent '${sender}' may review only its own and its descendants' changes, not '${target}'s`,
      );
    }
  };
  const recorder: ReviewRecorder = {
    service,
    unrecorded,
    async record(input, opts) {
      if (input.source.kind !== 'shell') {
        recentEdits.set(input.path, { content: input.after, at: Date.now(), writtenAt: performance.now() });
      }
      await service.recordChange({ ...input, ancestors: deps.directory.localAncestors(input.agentId) }, opts);
    },
    async plan(input) {
      recentEdits.set(input.path, { content: input.after, at: Date.now(), writtenAt: performance.now() });
      // A full data disk is `unavailable` naming it, as for the log (the records ride in edit.applied's append).
      const put = (content: string | Uint8Array, hash: string | undefined) =>
        service.blobs.put(content, hash).catch((err: unknown) => {
          throw diskError(service.blobs.dir, err, 'the review blob store in');
        });
      const beforeHash = input.before === null ? null : await put(input.before, input.beforeHash ?? undefined);
      const resultHash = await put(input.after, input.afterHash);
      const planned = await service.planChangeByHash({
        agentId: input.agentId,
        ancestors: deps.directory.localAncestors(input.agentId),
        path: input.path,
        beforeHash,
        resultHash,
        source: input.source,
      });
      return (planned?.facts ?? []).map((f) => ({ type: f.type, data: f.data }) as ActionLogRecord);
    },
    stored(records) {
      service.folded(records);
    },
    claim(path, content, by) {
      recentEdits.set(path, { content, at: Date.now(), by });
    },
    editedSince(path, content, since, except, rebasedAt) {
      const recent = recentEdits.get(path);
      return (
        recent !== undefined &&
        recent.at >= since &&
        !(recent.writtenAt !== undefined && rebasedAt !== undefined && recent.writtenAt <= rebasedAt) &&
        (except === undefined || recent.by !== except) &&
        sameContent(recent.content, content)
      );
    },
  };
  /** The files this host's review of `agentId`'s subtree lists (to split a selection with other hosts). */
  const localFiles = async (agentId: string) => (await service.list(agentId, {})).files;
  const domain = defineDomain({
    name: 'review',
    aggregates: [actionLogAggregateDef],
    commands: {
      'review.list': async (ctx) => {
        const data = ctx.command.data;
        const target = data.agentId ?? ctx.command.agentId;
        scope(ctx.command.agentId, target);
        const list = await service.list(target, data);
        // Named hosts: the changes of the subtree's agents placed elsewhere, from their hosts.
        const files =
          deps.remote && data.includeDescendants !== false
            ? [...list.files, ...(await remoteFiles(deps.remote, target))].sort((x, y) => x.path.localeCompare(y.path))
            : list.files;
        // Changes of the subtree whose records the log refused (on the first page): not in any log yet.
        const of = (owner: string) =>
          owner === target || (data.includeDescendants !== false && deps.directory.isSelfOrAncestor(target, owner));
        const waiting =
          data.cursor === undefined
            ? unrecorded.waiting(of).filter((w) => !data.paths || data.paths.includes(w.path))
            : [];
        // Paged so that every reply fits one message (NATS drops a bigger one).
        return {
          ...list,
          ...pageOfFiles(files, data.cursor, deps.host.options.maxPayloadBytes),
          ...(waiting.length > 0 ? { waiting: within(waiting, 8 * 1024) } : {}),
        };
      },
      'review.accept': async (ctx) => {
        const { agentId } = ctx.command;
        if (!deps.remote) return service.accept(agentId, ctx.command.data, ctx.command.id);
        let local: Awaited<ReturnType<typeof service.accept>>;
        let remote: Array<Record<string, unknown>>;
        if (isAll(ctx.command.data)) {
          local = await service.accept(agentId, ctx.command.data, ctx.command.id);
          remote = await remoteAll(deps.remote, agentId, 'review.accept');
        } else {
          const split = await splitSelection(deps.remote, agentId, ctx.command.data, await localFiles(agentId));
          local = split.local ? await service.accept(agentId, split.local, ctx.command.id) : { accepted: [] };
          remote = await remoteEach(deps.remote, split.tops, 'review.accept');
        }
        return { accepted: [...local.accepted, ...remote.flatMap((r) => r['accepted'] as typeof local.accepted)] };
      },
      'review.reject': async (ctx) => {
        const { agentId } = ctx.command;
        if (!deps.remote) return service.reject(agentId, ctx.command.data, ctx.command.id);
        let local: Awaited<ReturnType<typeof service.reject>>;
        let remote: Array<Record<string, unknown>>;
        if (isAll(ctx.command.data)) {
          local = await service.reject(agentId, ctx.command.data, ctx.command.id);
          remote = await remoteAll(deps.remote, agentId, 'review.reject');
        } else {
          const split = await splitSelection(deps.remote, agentId, ctx.command.data, await localFiles(agentId));
          local = split.local
            ? await service.reject(agentId, split.local, ctx.command.id)
            : { restored: [], deleted: [], kept: [], conflicts: [], undoAvailable: false };
          remote = await remoteEach(deps.remote, split.tops, 'review.reject');
        }
        const from = <T>(key: string) => remote.flatMap((r) => r[key] as T[]);
        return {
          ...local,
          restored: [...local.restored, ...from<string>('restored')],
          deleted: [...local.deleted, ...from<string>('deleted')],
          kept: [...local.kept, ...from<(typeof local.kept)[number]>('kept')],
          conflicts: [...local.conflicts, ...from<(typeof local.conflicts)[number]>('conflicts')],
        };
      },
      'review.undo-reject': (ctx) => service.undoReject(ctx.command.agentId, ctx.command.id),
    },
    // The action log is rebuilt from the facts read back at start; live ones it folds as it writes them.
    // Only this host's agents' logs: another named host's files are not here to review or restore.
    reactions: [
      { on: types, when: 'restore', run: (fact) => void (deps.host.owns(fact.agentId) && service.restore([fact])) },
      { on: types, when: 'restore', run: (fact) => readBack.see(fact) },
      // While serving: the paths each fact touches (`touchedAt`), and a review whose append failed in doubt but
      // was stored after all, finished now rather than at the next start.
      {
        on: types,
        when: 'live',
        run: (fact) => {
          readBack.touch(fact);
          service.storedLate(fact, readBack.touchedAt, lateLogger);
        },
      },
    ],
    // A reject or undo-reject a kill cut short between its fact and its files is finished (`review-journal.ts`).
    restore: async () => {
      await service.finishInterrupted(readBack, deps.logger.child({ actor: 'review-journal' }));
      readBack.clear();
    },
    // A review in doubt being finished (`storedLate`) writes its files before the log closes.
    drain: async () => {
      await service.settled();
    },
    // The queue's last try after the terminal domain's stop (stopped before this one), which records what the
    // commands it ended changed: closed in the drain, the queue dropped those the log refused then.
    stop: async () => {
      await unrecorded.close();
      await diffs.close();
    },
  });
  return { ...recorder, domain };
}

/** The first entries whose JSON fits `bytes` (at least one): beside a page, inside its envelope's margin. */
function within<T>(entries: readonly T[], bytes: number): T[] {
  const out: T[] = [];
  let used = 0;
  for (const e of entries) {
    used += Buffer.byteLength(JSON.stringify(e)) + 1;
    if (out.length > 0 && used > bytes) break;
    out.push(e);
  }
  return out;
}
