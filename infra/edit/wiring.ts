/**
 * @module
 * The edit domain: file.* and edit.* handlers confined
 * to the agent's workspace, each write taken under the action log's path
 * lock (so accept/reject never interleave with an edit of the same file) and
 * recorded in the agent's action log (and its ancestors') with the content
 * before and after. Streaming edits of a cancelled agent are cancelled.
 */
import { ErrorCode, RuntimeError, reasonOf, type AgentId } from '../../schemas/index.ts';
import { editAggregateDef, fileAggregateDef } from '../../machines/edit/edit-aggregate.ts';
import { EditService, type EditCallContext } from '../../actors/edit/edit-service.ts';
import type { ActionLogRecorder } from '../../actors/edit/edit-commit.ts';
import type { AgentDirectory } from '../../actors/agent/agent-directory.ts';
import { defineDomain, type Answerer, type HandlerContext } from '../kernel/domain.ts';
import type { ToolCall } from '../../schemas/tool.ts';
import type { Host } from '../kernel/host.ts';
import type { ReviewRecorder } from '../review/wiring.ts';
import type { Logger } from 'pino';
import { DiffThread } from '../../actors/edit/diff-thread.ts';
import { AppliedEdits, reconcileEdits } from './reconcile.ts';
import { retriedEdit } from './retried.ts';
import { diskError } from '../transport/disk-errors.ts';

export type EditWiring = ReturnType<typeof wireEdit>;

/** The edit commands that write a file: recorded in the action log under the path lock. */
type WritingCommand = 'file.edit' | 'file.write' | 'edit.finish';

export function wireEdit(deps: {
  host: Host;
  directory: AgentDirectory;
  review: ReviewRecorder;
  logger: Logger;
  maxFileBytes?: number;
  maxOpenPerAgent?: number;
  maxOpenPerHost?: number;
  /**
   * Asks a person about a streamed edit whose `edit.begin` the gate let through unasked (`ctx.askDeferred`),
   * shown its content; resolves with who answered, throws when denied.
   */
  askDeferred?: (ctx: HandlerContext, call: ToolCall, signal?: AbortSignal) => Promise<Answerer | undefined>;
}) {
  // Big diffs run on a worker thread so the host keeps answering while an 8 MB file is written.
  const diffThread = new DiffThread(deps.logger);
  const service = new EditService({
    diff: diffThread.diff,
    inspect: diffThread.inspect,
    workspaceRoots: (agentId) => {
      const view = deps.directory.view(agentId);
      return view ? [view.workspace] : [];
    },
    ...(deps.maxFileBytes ? { maxFileBytes: deps.maxFileBytes } : {}),
    ...(deps.maxOpenPerAgent ? { maxOpenPerAgent: deps.maxOpenPerAgent } : {}),
    ...(deps.maxOpenPerHost ? { maxOpenPerHost: deps.maxOpenPerHost } : {}),
    finished: (agentId) => deps.directory.finishedStatus(agentId),
    // Both sides are in the blob store before the write, so a start after a crash mid-write can put the change in
    // review; a full data disk is `unavailable` naming it, as for the log.
    storeBlob: async (hash, bytes) => {
      const { blobs } = deps.review.service;
      await blobs.put(bytes, hash).catch((err: unknown) => {
        throw diskError(blobs.dir, err, 'the review blob store in');
      });
    },
    storedBase: (hash) => deps.review.service.blobs.pathOf(hash),
  });
  /** Streaming sessions: editId → agent, the path as given and as resolved at begin (lock, cancel, re-check). */
  const open = new Map<string, { agentId: string; path: string; given: string }>();
  /** The asks edit.finish is waiting on, by edit: edit.cancel withdraws its edit's. */
  const asks = new Map<string, AbortController>();
  const call = (ctx: HandlerContext): EditCallContext => ({
    agentId: ctx.command.agentId,
    emit: async (f) => void (await ctx.emit(f)),
    log: ctx.logger,
    // A person answered the ask, or will at edit.finish (the session keeps it to the end).
    ...(ctx.answeredBy || ctx.askDeferred ? { shownOnly: true } : {}),
    judgedAtFinish: true,
    // edit.begin's ask was left for edit.finish: its session writes nothing until a person approves.
    ...(ctx.resolvedPath !== undefined ? { expectedPath: ctx.resolvedPath } : {}),
  });

  /** Applied edits read back at start, to find those the action log never recorded. */
  const applied = new AppliedEdits();
  /** Runs a writing handler under the path lock and records what changed on disk. */
  const recorded = async <R extends object>(
    ctx: HandlerContext,
    type: WritingCommand,
    path: string | undefined,
    editId: string,
    run: (actionLog?: ActionLogRecorder) => Promise<R>,
  ): Promise<R> => {
    if (!path) return run();
    // Earlier changes of a file not recorded yet go first (a command's, also one still running, and those the log
    // refused); while the log refuses them, this write is refused before it writes anything (it would start from a
    // change the log does not know, and hide it in the log's base).
    // `closing`: at the commit (after the edit's read), where a streamed edit's session is closed by then.
    const recordEarlier = (p: string, closing = false) =>
      deps.review.unrecorded.flush([p]).catch((err: unknown) => {
        const again =
          closing && type === 'edit.finish'
            ? 'this edit session is closed: once the event log can be written, begin a new one with edit.begin'
            : 'try again once the event log can be written';
        throw new RuntimeError(
          ErrorCode.Unavailable,
          `${p} was not written: ${reasonOf(err)}, and this write would start from them. Nothing changed; ${again}.`,
          { retryable: true, cause: err, details: { written: false } },
        );
      });
    return deps.review.service.lock.withLock([path], async () => {
      await recordEarlier(path);
      const before = await service.readRecorded(ctx.command.agentId, path);
      let reply: R | undefined;
      let failure: unknown;
      /** Whether edit.applied was stored with the change's records: then it is recorded, in that same append. */
      let carried = false;
      /** What the edit's plan says it writes (when carried, the file is not read again). */
      let planned: Buffer | undefined;
      const actionLog: ActionLogRecorder = {
        // Taken again, right after the edit read the file: a running command's change made since the first take
        // (which may have waited on a slow log) is then its own, not an outside edit folded into the base.
        read: async (p) => {
          if (p === path) await recordEarlier(path, true); // under its lock
        },
        plan: (change) => {
          planned = change.path === path ? change.after : undefined;
          return deps.review.plan({
            agentId: ctx.command.agentId,
            path: change.path,
            before: change.before,
            beforeHash: change.beforeHash,
            after: change.after,
            afterHash: change.afterHash,
            source: {
              kind: type === 'file.write' || change.mode === 'write' ? 'write' : 'edit',
              editId: change.editId,
            },
          });
        },
        stored: (records) => {
          carried = true;
          deps.review.stored(records);
        },
      };
      try {
        reply = await run(actionLog);
      } catch (err) {
        failure = err; // edits before a failing one are written: record them too
      }
      // Carried: the change is recorded with edit.applied (no need to read the file again and compare 10 MB here).
      // Not carried (edit.applied was not stored, or never got that far): recorded on its own, retried until stored.
      const after = carried ? null : await service.readRecorded(ctx.command.agentId, path);
      const same = before === null || after === null ? before === after : before.equals(after);
      if (!carried && !same) {
        const mode = reply && 'mode' in reply ? reply.mode : undefined;
        const kind: 'write' | 'edit' = type === 'file.write' || mode === 'write' ? 'write' : 'edit';
        // The edit's own id when it got that far (its reply, or the failure of one that wrote and could not record:
        // the next start looks for the change under it); else the streaming edit's, else the command's.
        const failed = failure instanceof RuntimeError ? failure.details?.['editId'] : undefined;
        const id = String(reply && 'editId' in reply ? reply.editId : (failed ?? editId));
        const text = (b: Buffer | null) => (b === null ? null : b.toString('utf8'));
        const input = {
          agentId: ctx.command.agentId,
          path,
          before: text(before),
          after: text(after),
          source: { kind, editId: id as never },
        };
        try {
          await deps.review.record(input, { lockHeld: true });
        } catch (err) {
          // The file changed but its record is not in the log: kept and retried, so it reaches review.
          deps.review.unrecorded.add(
            {
              path,
              agentId: ctx.command.agentId,
              record: () => deps.review.record(input, { lockHeld: true }),
            },
            err,
          );
          failure ??= err;
        }
      }
      // Commands still running that changed the file before (collected by the flush above) start again from what
      // is there now. Not after a failure that was carried: the disk may not hold what was planned.
      const written = carried ? (failure === undefined ? planned : undefined) : same ? undefined : after;
      if (written) await deps.review.unrecorded.written(path, written);
      if (failure !== undefined) throw failure;
      return reply!;
    });
  };
  /**
   * Seals a streamed edit and judges what it would write, as a tool call of its own: the rules as they are now
   * (a policy tightened after edit.begin holds), asking a person when they say so (edit.begin's ask was deferred
   * to here). Another edit.finish meanwhile is refused by `seal`; allowed, `finish` may write it; denied, it is
   * cancelled, nothing written.
   */
  const askWithContent = async (
    ctx: HandlerContext,
    editId: string,
    ask: { mode: 'edit' | 'write'; given: string },
  ) => {
    const detail = await service.seal(call(ctx), { editId });
    if (detail === undefined) return; // nothing would be written: finish reports why
    // edit.cancel (or the agent's end) while the person is asked withdraws the ask: its answer would find no edit.
    const asking = new AbortController();
    asks.set(editId, asking);
    try {
      if (!deps.askDeferred) throw new RuntimeError(ErrorCode.Internal, 'no permission domain to ask a person');
      const tool = ask.mode === 'write' ? 'write_file' : 'edit_file';
      const answeredBy = await deps.askDeferred(ctx, { tool, input: ask.given, detail }, asking.signal);
      service.approve(ctx.command.agentId, editId, answeredBy !== undefined);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      // Already gone when edit.cancel withdrew the ask: the error to report is the ask's.
      await service
        .cancel(call(ctx), { editId }, `The edit was not approved; nothing was written (${why}).`)
        .catch(() => undefined);
      open.delete(editId);
      throw err;
    } finally {
      asks.delete(editId);
    }
  };
  /** A streaming edit's session, only for the agent that began it. */
  const sessionOf = (agentId: string, editId: string) => {
    const session = open.get(editId);
    if (session && session.agentId !== agentId) {
      throw new RuntimeError(
        ErrorCode.NotFound,
        `edit '${editId}' is not one of agent '${agentId}''s ` +
          `streaming edits; use the editId edit.begin returned to you`,
      );
    }
    return session;
  };
  const resolved = async (agentId: string, path: string, createParents: boolean | 'plan' = false) => {
    try {
      return await service.resolvePath(agentId, path, createParents);
    } catch {
      return undefined; // the handler itself reports the bad path
    }
  };

  const domain = defineDomain({
    name: 'edit',
    aggregates: [editAggregateDef, fileAggregateDef],
    stop: () => diffThread.close(),
    retried: (command, facts) => retriedEdit(command, facts, (agentId, abs) => service.displayPath(agentId, abs)),
    // Sessions the previous host left open are closed with what the disk holds (a change found goes to review).
    reactions: [
      {
        on: ['edit.writing', 'edit.failed', 'edit.applied', 'action-log.change.recorded'],
        when: 'restore',
        run: (fact) => applied.see(fact),
      },
    ],
    restore: async () => {
      const logger = deps.logger.child({ actor: 'edit-reconcile' });
      await reconcileEdits({ ...deps, logger, maxFileBytes: service.maxFileBytes, applied });
    },
    commands: {
      'file.read': (ctx) => service.read(call(ctx), ctx.command.data),
      'file.edit': async (ctx) => {
        const path = await resolved(ctx.command.agentId, ctx.command.data.path);
        return recorded(ctx, 'file.edit', path, ctx.command.id, (actionLog) =>
          service.edit({ ...call(ctx), actionLog }, ctx.command.data),
        );
      },
      'file.write': async (ctx) => {
        // Parents created here already, so the path is known and the write is recorded in the action log.
        const path = await resolved(ctx.command.agentId, ctx.command.data.path, true);
        return recorded(ctx, 'file.write', path, ctx.command.id, (actionLog) =>
          service.write({ ...call(ctx), actionLog }, ctx.command.data, ctx.contentBytes),
        );
      },
      'edit.begin': async (ctx) => {
        const reply = await service.begin(call(ctx), ctx.command.data);
        const given = ctx.command.data.path;
        // A write's missing parents are made when it is written, after its ask at edit.finish: not yet here.
        const path = await resolved(ctx.command.agentId, given, 'plan');
        // Not when the edit was cancelled meanwhile (its agent finished): nothing would delete the entry.
        const live = service.openEditIds(ctx.command.agentId).includes(reply.editId);
        if (live && !path) {
          // Not known here, the edit could not be locked, recorded or checked at finish: it does not go on.
          await service.cancel(call(ctx), reply, 'The path changed while the edit began; nothing was written.');
          throw new RuntimeError(
            ErrorCode.Conflict,
            `${JSON.stringify(given)} changed while the edit began (a directory on the way was renamed); ` +
              'begin the edit again.',
            { retryable: true },
          );
        }
        if (path && live) open.set(reply.editId, { agentId: ctx.command.agentId, path, given });
        return reply;
      },
      'edit.input': async (ctx) => {
        sessionOf(ctx.command.agentId, ctx.command.data.editId);
        return service.input(call(ctx), ctx.command.data);
      },
      'edit.finish': async (ctx) => {
        const { editId } = ctx.command.data;
        const session = sessionOf(ctx.command.agentId, editId);
        const ask = service.approvalNeeded(ctx.command.agentId, editId);
        if (ask) await askWithContent(ctx, editId, ask);
        return recorded(ctx, 'edit.finish', session?.path, editId, async (actionLog) => {
          if (session) {
            // A streamed edit is written long after edit.begin checked its path: a directory on the way may
            // have become a symlink (out of the workspace, into .git/) since. Resolve again; refuse a change.
            const now = await service.resolvePath(ctx.command.agentId, session.given, 'plan').catch(() => undefined);
            if (now !== session.path) {
              throw new RuntimeError(
                ErrorCode.PermissionDenied,
                `'${session.given}' no longer resolves to ${session.path} (a directory on ` +
                  `the way changed since edit.begin); nothing was written. Begin the edit again.`,
              );
            }
          }
          const reply = await service.finish({ ...call(ctx), actionLog }, ctx.command.data);
          open.delete(editId);
          return reply;
        });
      },
      'edit.cancel': async (ctx) => {
        const { editId } = ctx.command.data;
        sessionOf(ctx.command.agentId, editId);
        const reply = await service.cancel(call(ctx), ctx.command.data);
        open.delete(editId);
        asks.get(editId)?.abort(`edit '${editId}' was cancelled by edit.cancel while the person was asked`);
        return reply;
      },
    },
  });

  return {
    service,
    domain,
    /** Cancels the streaming edits of a cancelled agent. */
    async cancelAgent(agentId: string): Promise<void> {
      // The service's sessions, not `open`: a begin still resolving its path is stored there already.
      for (const editId of service.openEditIds(agentId)) {
        open.delete(editId);
        await service
          .cancel(
            { agentId, emit: async (fact) => void (await deps.host.emit(fact, { agentId: agentId as AgentId })) },
            { editId },
          )
          .catch(() => undefined);
      }
    },
  };
}
