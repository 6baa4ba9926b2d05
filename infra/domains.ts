/**
 * @module
 * Every domain's aggregate machines, in one list: the live host and replay
 * fold with the same set, so their digests can be compared.
 */
import { agentAggregateDef } from '../machines/agent.ts';
import type { AggregateDef } from '../machines/projection.ts';

export const AGGREGATES: readonly AggregateDef[] = [agentAggregateDef];
