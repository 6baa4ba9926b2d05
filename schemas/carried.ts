/**
 * @module
 * Facts stored inside another (`EventDef.carries`: `edit.applied` and `action-log.shell.recorded` carry
 * action-log records), each as it would be stored alone on its own aggregate's subject. The host's fold and
 * reactions, replay and the SDK's `on(type)` all see them this way.
 */
import { eventsByType } from './catalog.ts';
import type { AgentId } from './ids.ts';
import type { EventDef, StoredFact } from './message.ts';
import { subjectFor } from './subjects.ts';

/** The subject a fact of `def` with `data` is stored on, under `agentId`'s subjects. */
export function subjectOf(def: EventDef, agentId: string, data: unknown): string {
  const aggregateId = def.aggregateId(data);
  return def.stream === 'output'
    ? subjectFor({ kind: 'out', agentId, terminalId: aggregateId })
    : subjectFor({ kind: 'evt', agentId, aggregate: def.aggregate, aggregateId });
}

/**
 * The facts `stored` carries, each as it would be stored on its own aggregate's subject: same sequence, time
 * and causation, id `<carrier id>/<n>`. Empty for a fact that carries none.
 */
export function carriedFacts(stored: StoredFact): StoredFact[] {
  const carries = eventsByType.get(stored.type)?.carries;
  if (!carries) return [];
  return carries(stored.data).flatMap((c, n) => {
    const def = eventsByType.get(c.type);
    if (!def || def.stream === 'output') return [];
    return [
      {
        id: `${stored.id}/${n}`,
        type: c.type,
        at: stored.at,
        agentId: c.agentId as AgentId,
        ...(stored.causationId ? { causationId: stored.causationId } : {}),
        data: c.data,
        seq: stored.seq,
        subject: subjectOf(def, c.agentId, c.data),
      },
    ];
  });
}

/** The subjects the facts `fact` carries are stored on (none for a fact that carries none). */
export function carriedSubjects(fact: { type: string; data: unknown }): string[] {
  const carries = eventsByType.get(fact.type)?.carries;
  if (!carries) return [];
  return carries(fact.data).flatMap((c) => {
    const def = eventsByType.get(c.type);
    return def && def.stream !== 'output' ? [subjectOf(def, c.agentId, c.data)] : [];
  });
}
