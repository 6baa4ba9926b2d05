/**
 * @module
 * Wires the action log into the host: review.* handlers (scoped to the
 * sender and its descendants), restore from the log at start-up, and the
 * `record` function other domains call when an agent changes a file.
 */
import { join } from 'node:path';
import { ErrorCode, RuntimeError, type AgentId, type UnstampedFact } from '../../schemas/index.ts';
import { ACTION_LOG_FACT_TYPES } from '../../machines/review/action-log.ts';
import { ActionLogService, type RecordChangeInput } from '../../actors/review/action-log.ts';
import { BlobStore } from '../../actors/review/blob-store.ts';
import type { AgentService } from '../../actors/agent/agent.ts';
import type { CommandHandler, Host } from '../kernel/host.ts';
import type { Logger } from '../kernel/log.ts';
import { pageOfFiles } from './review-pages.ts';

export type ReviewWiring = {
  service: ActionLogService;
  handlers: Record<string, CommandHandler>;
  /** Records a change by `agentId` in its log and every ancestor's. */
  record(input: Omit<RecordChangeInput, 'ancestors'>, opts?: { lockHeld?: boolean }): Promise<void>;
  /** Feeds facts read at start-up (before the host serves commands). */
  restoring(on: boolean): void;
  /**
   * Whether `content` at `path` is what an edit or write recorded at or after
   * `since` (ms epoch) left there: a shell snapshot running at the same time
   * must not claim that change for its command.
   */
  editedSince(path: string, content: string | null, since: number): boolean;
  /** Notes a change a shell command's snapshot recorded, so overlapping commands do not record it again. */
  claim(path: string, content: string | null): void;
};

export function wireReview(deps: {
  host: () => Host;
  agents: AgentService;
  dataDir: string;
  logger: Logger;
}): ReviewWiring {
  const emit = async (fact: UnstampedFact) => {
    await deps.host().emit(fact, { agentId: fact.agentId ?? ('main' as AgentId) });
  };
  const service = new ActionLogService({
    emit,
    blobs: new BlobStore(join(deps.dataDir, 'blobs')),
    log: deps.logger.child({ actor: 'action-log' }),
  });
  const types = new Set<string>(ACTION_LOG_FACT_TYPES);
  let restoringNow = false;
  /** path → what the last edit/write left there, and when. */
  const recentEdits = new Map<string, { content: string | null; at: number }>();
  const scope = (sender: string, target: string) => {
    if (!deps.agents.view(target)) throw new RuntimeError(ErrorCode.NotFound, `agent '${target}' does not exist`);
    if (!deps.agents.isSelfOrAncestor(sender, target)) {
      throw new RuntimeError(
        ErrorCode.PermissionDenied,
        `agent '${sender}' may review only its own and its descendants' changes, not '${target}'s`,
      );
    }
  };
  return {
    service,
    restoring(on) {
      if (on) {
        restoringNow = true;
        deps.host().writer.onFact((fact) => {
          if (restoringNow && types.has(fact.type)) service.restore([fact]);
        });
      } else {
        restoringNow = false;
      }
    },
    async record(input, opts) {
      if (input.source.kind !== 'shell') recentEdits.set(input.path, { content: input.after, at: Date.now() });
      await service.recordChange({ ...input, ancestors: deps.agents.ancestors(input.agentId) }, opts);
    },
    claim(path, content) {
      recentEdits.set(path, { content, at: Date.now() });
    },
    editedSince(path, content, since) {
      const recent = recentEdits.get(path);
      return recent !== undefined && recent.at >= since && recent.content === content;
    },
    handlers: {
      'review.list': async (ctx) => {
        const data = ctx.command.data as { agentId?: string; includeDescendants?: boolean; cursor?: string };
        const target = data.agentId ?? ctx.command.agentId;
        scope(ctx.command.agentId, target);
        const list = await service.list(target, data);
        // Paged so that every reply fits one message (NATS drops a bigger one).
        return { ...list, ...pageOfFiles(list.files, data.cursor, ctx.host.options.maxPayloadBytes) };
      },
      'review.accept': async (ctx) => ({ ...(await service.accept(ctx.command.agentId, ctx.command.data)) }),
      'review.reject': async (ctx) => ({ ...(await service.reject(ctx.command.agentId, ctx.command.data)) }),
      'review.undo-reject': async (ctx) => ({ ...(await service.undoReject(ctx.command.agentId)) }),
    },
  };
}
