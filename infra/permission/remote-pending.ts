/**
 * @module
 * Named hosts: a request waits on the host where its agent lives, so an ancestor served by another host
 * lists it through that host. `permission.pending` for a subtree adds, with plain `permission.pending`
 * commands on their subjects (which only their hosts answer), the requests of the subtree's agents whose
 * parent is on another host. A host that does not answer leaves its requests out and is named in the log.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { subjectFor } from '../../schemas/index.ts';
import type { Bus } from '../transport/bus.ts';
import { decodeReply, encode } from '../transport/codec.ts';

/** How long listing another host's requests may take, in ms. */
const REMOTE_TIMEOUT_MS = 10_000;

export async function remotePending<T extends { requestId: string }>(
  deps: { bus: Bus; logger: Logger },
  tops: readonly string[],
  local: T[],
): Promise<T[]> {
  const seen = new Set(local.map((r) => r.requestId));
  const out = [...local];
  for (const top of tops) {
    const subject = subjectFor({ kind: 'cmd', agentId: top, type: 'permission.pending' });
    try {
      const bytes = await deps.bus.request(subject, encode({ id: `c-${randomUUID()}`, data: {} }), {
        timeoutMs: REMOTE_TIMEOUT_MS,
      });
      const reply = decodeReply(subject, bytes);
      if (!reply.ok) throw new Error(reply.error.message);
      for (const r of (reply['requests'] as T[] | undefined) ?? []) {
        if (seen.has(r.requestId)) continue;
        seen.add(r.requestId);
        out.push(r);
      }
    } catch (err) {
      deps.logger.warn({ agentId: top, err: (err as Error).message }, "another host's pending requests not listed");
    }
  }
  return out;
}
