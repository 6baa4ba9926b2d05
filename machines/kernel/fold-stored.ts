/**
 * @module
 * The one fold of a stored fact, the live writer's and replay's: into its aggregate, then each fact it
 * carries (edit.applied's action-log records) into theirs, as if stored alone.
 */
import { eventsByType, type StoredFact } from '../../schemas/index.ts';
import { carriedFacts } from '../../schemas/carried.ts';
import type { Fold } from './projection.ts';

/** What a fact that carries none returns (most facts: no array per fact on replay). Never written to. */
const NONE: StoredFact[] = [];

/** Folds a stored fact of the events stream and the facts it carries; returns the carried facts. */
export function foldStored(fold: Fold, stored: StoredFact): StoredFact[] {
  const def = eventsByType.get(stored.type);
  if (!def || def.stream === 'output') return [];
  fold.apply(stored.subject, def.aggregate, stored);
  if (!def.carries) return NONE;
  const carried = carriedFacts(stored);
  for (const fact of carried) fold.apply(fact.subject, eventsByType.get(fact.type)!.aggregate, fact);
  return carried;
}
