/**
 * @module
 * Rebuilds state from a log: folds facts through the aggregate machines with
 * xstate's pure `transition()` (no action runs) and computes the state
 * digest, which must equal the live runtime's.
 */
import { eventsByType, type StoredFact } from '../schemas/index.ts';
import { Fold, type AggregateDef } from '../machines/projection.ts';
import { digestOf } from './host.ts';

export type ReplayResult = { fold: Fold; digest: string; facts: number; lastSeq: number };

export async function replay(
  facts: AsyncIterable<StoredFact>,
  aggregates: readonly AggregateDef[],
  options: { untilSeq?: number; onFact?: (fact: StoredFact) => void } = {},
): Promise<ReplayResult> {
  const fold = new Fold(aggregates);
  let count = 0;
  let lastSeq = 0;
  for await (const fact of facts) {
    if (options.untilSeq !== undefined && fact.seq > options.untilSeq) break;
    const def = eventsByType.get(fact.type);
    if (def && def.stream !== 'output') fold.apply(fact.subject, def.aggregate, fact);
    count++;
    lastSeq = fact.seq;
    options.onFact?.(fact);
  }
  return { fold, digest: digestOf(fold), facts: count, lastSeq };
}
