/**
 * @module
 * Credentials end with the agent: when `agent.completed`, `agent.failed` or
 * `agent.cancelled` is appended, every credential of that agent is revoked
 * on the broker, which closes its connections. Install after the host has
 * restored state: facts replayed at start were revoked when they happened
 * (the account JWT in the resolver keeps the list).
 */
import type { Logger } from 'pino';
import type { StoredFact } from '../../../schemas/index.ts';
import type { Host } from '../../kernel/host.ts';
import type { AuthBroker } from './broker.ts';

const FINISHED = new Set(['agent.completed', 'agent.failed', 'agent.cancelled']);

export function revokeOnFinish(host: Host, broker: Pick<AuthBroker, 'revoke'>, logger: Logger): void {
  host.writer.onFact((fact: StoredFact) => {
    if (!FINISHED.has(fact.type)) return;
    const agentId = (fact.data as { agentId: string }).agentId;
    broker
      .revoke(agentId)
      .catch((err) =>
        logger.error({ err, agentId }, 'could not revoke the credentials of a finished agent; restart skein to retry'),
      );
  });
}
