/**
 * @module
 * Wires the edit kernel into the host: file.* and edit.* handlers confined
 * to the agent's workspace, each write taken under the action log's path
 * lock (so accept/reject never interleave with an edit of the same file) and
 * recorded in the agent's action log (and its ancestors') with the content
 * before and after. Streaming edits of a cancelled agent are cancelled.
 */
import { readFile } from 'node:fs/promises';
import { ErrorCode, RuntimeError, type AgentId } from '../../schemas/index.ts';
import { EditService } from '../../actors/edit/edit-service.ts';
import { editHandlers, type EditHandlerContext } from '../../actors/edit/edit-handlers.ts';
import type { AgentService } from '../../actors/agent/agent.ts';
import type { CommandHandler, HandlerContext, Host } from '../kernel/host.ts';
import type { ReviewWiring } from '../review/wiring.ts';
import type { Logger } from 'pino';
import { UnrecordedChanges } from './unrecorded.ts';

export type EditWiring = {
  service: EditService;
  handlers: Record<string, CommandHandler>;
  cancelAgent(agentId: string): Promise<void>;
};

export function wireEdit(deps: {
  host: () => Host;
  agents: AgentService;
  review: ReviewWiring;
  logger: Logger;
  maxFileBytes?: number;
}): EditWiring {
  const service = new EditService({
    workspaceRoots: (agentId) => {
      const view = deps.agents.view(agentId);
      return view ? [view.workspace] : [];
    },
    ...(deps.maxFileBytes ? { maxFileBytes: deps.maxFileBytes } : {}),
  });
  const raw = editHandlers(service);
  /** Streaming sessions: editId → agent, the path as given and as resolved at begin (lock, cancel, re-check). */
  const open = new Map<string, { agentId: string; path: string; given: string }>();
  const toEdit = (ctx: HandlerContext): EditHandlerContext => ({
    command: ctx.command,
    emit: async (f) => void (await ctx.emit(f)),
    log: ctx.logger,
  });

  const unrecorded = new UnrecordedChanges({ logger: deps.logger });
  /** Runs a writing handler under the path lock and records what changed on disk. */
  const recorded =
    (run: (ctx: HandlerContext) => Promise<unknown>, pathOf: (ctx: HandlerContext) => Promise<string | undefined>) =>
    async (ctx: HandlerContext) => {
      const path = await pathOf(ctx);
      if (!path) return (await run(ctx)) as Record<string, unknown>;
      return deps.review.service.lock.withLock([path], async () => {
        const before = await readText(path);
        let reply: Record<string, unknown> | undefined;
        let failure: unknown;
        try {
          reply = (await run(ctx)) as Record<string, unknown>;
        } catch (err) {
          failure = err; // edits before a failing one are written: record them too
        }
        const after = await readText(path);
        if (before !== after) {
          const editId = String(
            reply?.['editId'] ?? (ctx.command.data as { editId?: string }).editId ?? ctx.command.id,
          );
          const kind: 'write' | 'edit' =
            ctx.command.type === 'file.write' || reply?.['mode'] === 'write' ? 'write' : 'edit';
          const input = {
            agentId: ctx.command.agentId,
            path,
            before,
            after,
            source: { kind, editId: editId as never },
          };
          try {
            await deps.review.record(input, { lockHeld: true });
          } catch (err) {
            // The file changed but its record is not in the log: kept and retried, so it reaches review.
            unrecorded.add(
              {
                path,
                record: () =>
                  deps.review.service.lock.withLock([path], () => deps.review.record(input, { lockHeld: true })),
              },
              err,
            );
            failure ??= err;
          }
        }
        if (failure !== undefined) throw failure;
        return reply!;
      });
    };
  /** A streaming edit's session, only for the agent that began it. */
  const sessionOf = (ctx: HandlerContext) => {
    const editId = String((ctx.command.data as { editId: string }).editId);
    const session = open.get(editId);
    if (session && session.agentId !== ctx.command.agentId) {
      throw new RuntimeError(
        ErrorCode.NotFound,
        `edit '${editId}' is not one of agent '${ctx.command.agentId}''s ` +
          `streaming edits; use the editId edit.begin returned to you`,
      );
    }
    return { editId, session };
  };
  const resolved = async (ctx: HandlerContext) => {
    try {
      return await service.resolvePath(ctx.command.agentId, String((ctx.command.data as { path: string }).path));
    } catch {
      return undefined; // the handler itself reports the bad path
    }
  };

  return {
    service,
    handlers: {
      'file.read': (ctx) => raw['file.read']!(toEdit(ctx)) as Promise<Record<string, unknown>>,
      'file.edit': recorded((ctx) => raw['file.edit']!(toEdit(ctx)), resolved),
      'file.write': recorded((ctx) => raw['file.write']!(toEdit(ctx)), resolved),
      'edit.begin': async (ctx) => {
        const reply = (await raw['edit.begin']!(toEdit(ctx))) as { editId: string };
        const path = await resolved(ctx);
        if (path)
          open.set(reply.editId, {
            agentId: ctx.command.agentId,
            path,
            given: String((ctx.command.data as { path: string }).path),
          });
        return reply;
      },
      'edit.input': async (ctx) => {
        sessionOf(ctx);
        return raw['edit.input']!(toEdit(ctx)) as Promise<Record<string, unknown>>;
      },
      'edit.finish': recorded(
        async (ctx) => {
          const { editId, session } = sessionOf(ctx);
          if (session) {
            // A streamed edit is written long after edit.begin checked its path: a directory on the way may
            // have become a symlink (out of the workspace, into .git/) since. Resolve again; refuse a change.
            const now = await service.resolvePath(ctx.command.agentId, session.given).catch(() => undefined);
            if (now !== session.path) {
              throw new RuntimeError(
                ErrorCode.PermissionDenied,
                `'${session.given}' no longer resolves to ${session.path} (a directory on ` +
                  `the way changed since edit.begin); nothing was written. Begin the edit again.`,
              );
            }
          }
          const reply = await raw['edit.finish']!(toEdit(ctx));
          open.delete(editId);
          return reply;
        },
        async (ctx) => sessionOf(ctx).session?.path,
      ),
      'edit.cancel': async (ctx) => {
        const { editId } = sessionOf(ctx);
        const reply = (await raw['edit.cancel']!(toEdit(ctx))) as Record<string, unknown>;
        open.delete(editId);
        return reply;
      },
    },
    async cancelAgent(agentId) {
      for (const [editId, session] of open) {
        if (session.agentId !== agentId) continue;
        open.delete(editId);
        await service
          .cancel(
            { agentId, emit: async (fact) => void (await deps.host().emit(fact, { agentId: agentId as AgentId })) },
            { editId },
          )
          .catch(() => undefined);
      }
    },
  };
}

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

export type { AgentId };
