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

/** `log`, passing everything through except what `over` replaces (an append whose answer is lost, a slow read). */
export function overLog(log: EventLog, over: Partial<Pick<EventLog, 'append' | 'read'>>): EventLog {
  return {
    kind: log.kind,
    append: over.append ?? ((request) => log.append(request)),
    read: over.read ?? ((options) => log.read(options)),
    scan: (options, visit) => log.scan(options, visit),
    lastSeq: (subject) => log.lastSeq(subject),
    close: () => log.close(),
  };
}

/** An `edit.applied` of `/w/a.txt` carrying `records` into action logs (a fact stored on its own subject). */
export function editAppliedCarrying(editId: string, records: unknown[]) {
  return {
    type: 'edit.applied',
    data: {
      editId,
      path: '/w/a.txt',
      mode: 'write',
      baseHash: null,
      resultHash: 'a'.repeat(64),
      created: true,
      diff: '',
      linesAdded: 0,
      linesRemoved: 0,
      edits: [],
      partial: false,
      lineEnding: 'lf',
      bom: false,
      records,
    },
  };
}
