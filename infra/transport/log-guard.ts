/**
 * @module
 * Wires the log seal (`log-seal.ts`) into a running host: every appended
 * fact moves the seal, and a deleted or altered audit stream makes the host
 * refuse commands (`unavailable`), log why, and append `host.log.lost` where
 * the stream still takes it. The host keeps running: its terminals stay up.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { EVENTS_STREAM, type AgentId } from '../../schemas/index.ts';
import type { Host } from '../kernel/host.ts';
import { keepSeal, type SealKeeper } from './log-seal.ts';

export async function guardLog(options: {
  host: Host;
  nc: NatsConnection;
  dataDir: string;
  hostId: string;
  rootAgentId: string;
  logger: Logger;
}): Promise<SealKeeper> {
  const { host, logger } = options;
  const keeper = await keepSeal(options.nc, options.dataDir, (change) => {
    const reason =
      `the audit log stream ${EVENTS_STREAM} was ${change.startsWith('deleted') ? '' : 'altered: '}${change}; ` +
      'commands are refused until an operator restores the stream from a backup and restarts skein';
    logger.error({ stream: EVENTS_STREAM, change }, reason);
    host.markUnavailable(reason);
    host
      .emit(
        { type: 'host.log.lost', data: { hostId: options.hostId, stream: EVENTS_STREAM, change } },
        { agentId: options.rootAgentId as AgentId },
      )
      .catch((err: unknown) => logger.error({ err }, 'host.log.lost could not be appended either'));
  });
  host.writer.onFact((fact) => {
    if (fact.subject.startsWith('skein.evt.')) keeper.note(fact.seq);
  });
  return keeper;
}
