/**
 * @module
 * `skein agents [--tree]` and `skein cancel <agentId>`.
 */
import type { AgentNode } from '../../schemas/index.ts';
import { action } from './output.ts';
import { callAndPrint, type RemoteOptions } from './remote.ts';

export async function agents(opts: RemoteOptions & { tree?: boolean }): Promise<void> {
  await action(() =>
    callAndPrint(opts, 'agent.tree', {}, (reply) => {
      const nodes = reply['agents'] as AgentNode[];
      const base = nodes[0]?.depth ?? 0;
      return nodes
        .map((n) =>
          opts.tree
            ? `${'  '.repeat(n.depth - base)}${n.agentId} "${n.label}" [${n.status}]${n.host ? ` @${n.host}` : ''}`
            : `${n.agentId}\t${n.status}\t${n.parentId ?? '-'}\t${n.label}${n.host ? `\t@${n.host}` : ''}`,
        )
        .join('\n');
    }),
  );
}

export async function cancel(agentId: string, opts: RemoteOptions & { reason?: string }): Promise<void> {
  await action(() =>
    callAndPrint(
      opts,
      'agent.cancel',
      { agentId, ...(opts.reason ? { reason: opts.reason } : {}) },
      (reply) =>
        `cancelled (bottom-up): ${(reply['cancelled'] as string[]).join(', ') || 'nothing (already finished)'}`,
    ),
  );
}
