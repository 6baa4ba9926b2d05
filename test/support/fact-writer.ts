/**
 * @module
 * A FactWriter over a given log, folding agent facts, for the writer's tests: quiet logs, host `h1`.
 */
import { agentAggregateDef } from '../../machines/agent/agent.ts';
import { Fold } from '../../machines/kernel/projection.ts';
import { FactWriter } from '../../infra/kernel/fact-writer.ts';
import type { EventLog } from '../../infra/transport/event-log.ts';
import { memoryLogger } from './log-sink.ts';

export function agentWriter(log: EventLog, options: { retries?: number; retryDelayMs?: number } = {}) {
  const fold = new Fold([agentAggregateDef]);
  const w = new FactWriter({
    log,
    fold,
    logger: memoryLogger('silent').logger,
    hostId: 'h1',
    retries: options.retries ?? 2,
    retryDelayMs: options.retryDelayMs ?? 1,
  });
  return { w, fold };
}
