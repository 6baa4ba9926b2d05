/**
 * @module
 * Rebuilds state from a log: folds facts through the aggregate machines with
 * xstate's pure `transition()` (no action runs) and computes the state
 * digest, which must equal the live runtime's.
 */
import type { StoredFact } from '../../schemas/index.ts';
import { Fold, type AggregateDef } from '../../machines/kernel/projection.ts';
import { digestOf } from './digest.ts';
import type { EventLog } from '../transport/event-log.ts';
import { foldStored } from '../../machines/kernel/fold-stored.ts';

export type ReplayResult = { fold: Fold; digest: string; facts: number; lastSeq: number };

/** Facts to replay: an iterable, or a log's `scan` (faster: no async hop per fact). */
export type FactSource = AsyncIterable<StoredFact> | ((visit: (fact: StoredFact) => void) => Promise<void>);

export async function replay(
  facts: FactSource,
  aggregates: readonly AggregateDef[],
  options: { untilSeq?: number; onFact?: (fact: StoredFact) => void } = {},
): Promise<ReplayResult> {
  const fold = new Fold(aggregates);
  let count = 0;
  let lastSeq = 0;
  const visit = (fact: StoredFact) => {
    if (options.untilSeq !== undefined && fact.seq > options.untilSeq) return;
    foldStored(fold, fact);
    count++;
    lastSeq = fact.seq;
    options.onFact?.(fact);
  };
  if (typeof facts === 'function') await facts(visit);
  else for await (const fact of facts) visit(fact);
  return { fold, digest: digestOf(fold), facts: count, lastSeq };
}

/** Replays a whole event log (up to `untilSeq`). */
export function replayLog(
  log: EventLog,
  aggregates: readonly AggregateDef[],
  options: { untilSeq?: number; onFact?: (fact: StoredFact) => void } = {},
): Promise<ReplayResult> {
  const range = options.untilSeq === undefined ? {} : { untilSeq: options.untilSeq };
  return replay((visit) => log.scan(range, visit), aggregates, options);
}
