/**
 * @module
 * Stamping a fact an actor emits: its type looked up in the catalogue, its data checked against the schema,
 * the envelope filled in (id, time, agent, cause), and the subject and stream it is appended to; and the
 * stored form of an appended one.
 */
import { randomUUID } from 'node:crypto';
import {
  ErrorCode,
  RuntimeError,
  eventsByType,
  type AgentId,
  type EventDef,
  noteRecordedBytes,
  type Fact,
  type StoredFact,
  type UnstampedFact,
} from '../../schemas/index.ts';
import { subjectOf } from '../../schemas/carried.ts';
import type { AppendResult, LogStream } from '../transport/event-log.ts';
import { parseUnlessChecked } from './checked.ts';

export type StampOptions = {
  /** The agent whose subjects carry the fact. */
  agentId: AgentId;
  causationId?: string | undefined;
  /** Fact id; deterministic ids (`<commandId>:<n>`) make a retried command dedupe in the log. */
  id?: string | undefined;
  /** The output fact's `data.data` needs no JSON escaping (AppendRequest.textJsonSafe). */
  textJsonSafe?: boolean | undefined;
};

export type Stamped = { def: EventDef; fact: Fact; subject: string; stream: LogStream };

/**
 * Stamps one fact; throws an `internal` error naming the type or the invalid data. `parseChecked`: parse a
 * `checkedFact`'s data too (`parseUnlessChecked`).
 */
export function stampFact(unstamped: UnstampedFact, options: StampOptions, parseChecked: boolean): Stamped {
  const def = eventsByType.get(unstamped.type);
  if (!def)
    throw new RuntimeError(
      ErrorCode.Internal,
      `fact type '${unstamped.type}' is not in the catalogue (schemas/catalog.ts)`,
    );
  const parsed = parseUnlessChecked(def.data, unstamped.data, parseChecked);
  if (!parsed.success) {
    throw new RuntimeError(ErrorCode.Internal, `fact '${unstamped.type}' has invalid data: ${parsed.message}`);
  }
  const agentId = unstamped.agentId ?? options.agentId;
  const fact: Fact = {
    id: options.id ?? `f-${randomUUID()}`,
    type: unstamped.type,
    at: new Date().toISOString(),
    agentId,
    ...(options.causationId ? { causationId: options.causationId } : {}),
    data: parsed.data,
  };
  const stream: LogStream = def.stream === 'output' ? 'output' : 'events';
  return { def, fact, subject: subjectOf(def, agentId, parsed.data), stream };
}

/** The stored form of an appended fact, with the bytes its log reported (`noteRecordedBytes`). */
export function storedOf(fact: Fact, result: AppendResult, subject: string): StoredFact {
  const stored: StoredFact = { ...fact, seq: result.seq, subject };
  if (result.bytes !== undefined) noteRecordedBytes(stored, result.bytes);
  return stored;
}
