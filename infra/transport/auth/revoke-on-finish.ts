/**
 * @module
 * Credentials end with the agent: when `agent.completed`, `agent.failed` or
 * `agent.cancelled` is appended, every credential of that agent is revoked
 * on the broker, which closes its connections. Install after the host has
 * restored state: facts replayed at start were revoked when they happened
 * (the account JWT in the resolver keeps the list), except when the host died
 * between the fact and the push; those agents are revoked at install.
 */
import type { Logger } from 'pino';
import { isFinished } from '../../../machines/agent/agent.ts';
import type { StoredFact } from '../../../schemas/index.ts';
import type { Host } from '../../kernel/host.ts';
import type { AuthBroker } from './broker.ts';

/** The facts that end an agent, and with it its credentials. */
export const FINISHED_FACTS: ReadonlySet<string> = new Set(['agent.completed', 'agent.failed', 'agent.cancelled']);

export async function revokeOnFinish(
  host: Host,
  broker: Pick<AuthBroker, 'revoke' | 'authority'>,
  logger: Logger,
): Promise<void> {
  const revoke = (agentId: string) =>
    broker
      .revoke(agentId)
      .catch((err) =>
        logger.error({ err, agentId }, 'could not revoke the credentials of a finished agent; restart skein to retry'),
      );
  host.writer.onFact((fact: StoredFact) => {
    if (FINISHED_FACTS.has(fact.type)) void revoke((fact.data as { agentId: string }).agentId);
  });
  for (const agentId of broker.authority.agentsWithCreds()) {
    const subject = host.agentSubject(agentId);
    const status = subject ? host.state(subject)?.value : undefined;
    if (typeof status === 'string' && isFinished(status)) await revoke(agentId);
  }
}
