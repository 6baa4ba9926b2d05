/**
 * @module
 * One socket write per turn of the event loop for a NATS connection, not one per microtask checkpoint.
 *
 * nats.js queues what it sends (`ProtocolHandler.sendCommand`) and writes the queue out at the next microtask.
 * A host under load runs many promise chains in one turn (a socket read holding the acks of several facts, each
 * resuming a command that appends its next fact or sends its reply): each chain that resumes after the write was
 * scheduled starts a new one. A socket write costs ~50-70 µs of the writer's CPU here and wakes nats-server for
 * each (`npm run bench -- machine`). Scheduled with `setImmediate` instead, the write goes out once the turn's
 * I/O callbacks and microtasks are done: one write for all of them, in the order they were queued. A lone
 * command is not delayed by it (the check phase follows the callback that published, and the loop does not
 * sleep while an immediate is pending); a queue past nats.js's 32 KiB threshold is written at once, as before.
 *
 * Measured here (alternated, 8 agents × 100 execs at once): the host's main-thread CPU per exec 0.93-0.99 →
 * 0.78-0.81 ms, exec p50 9.1-9.2 → 7.8-8.0 ms; one agent alone unchanged (1.11-1.18 against 1.14 ms).
 *
 * This replaces one method of nats.js's connection (`@nats-io/nats-core` 3.3.1, pinned): if a version lays it
 * out otherwise, nothing is replaced and `onceAturn` says so; `turn-flush.test.ts` fails on such a version.
 */
import type { NatsConnection } from '@nats-io/transport-node';

type Outbound = { size(): number; fill(buf: Uint8Array, ...more: Uint8Array[]): void };
type Protocol = {
  outbound: Outbound;
  pendingLimit: number;
  flushPending(): void;
  sendCommand(cmd: string | Uint8Array, ...payloads: Uint8Array[]): void;
};

const encoder = new TextEncoder();

/** Makes `nc` write what it queued once per event-loop turn; false (and nothing changed) on an unknown layout. */
export function onceAturn(nc: NatsConnection): boolean {
  const protocol = (nc as unknown as { protocol?: Partial<Protocol> }).protocol;
  if (!isProtocol(protocol)) return false;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    protocol.flushPending();
  };
  protocol.sendCommand = (cmd, ...payloads) => {
    protocol.outbound.fill(typeof cmd === 'string' ? encoder.encode(cmd) : cmd, ...payloads);
    if (protocol.outbound.size() >= protocol.pendingLimit) {
      protocol.flushPending();
    } else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return true;
}

function isProtocol(p: Partial<Protocol> | undefined): p is Protocol {
  return (
    typeof p?.sendCommand === 'function' &&
    typeof p.flushPending === 'function' &&
    typeof p.pendingLimit === 'number' &&
    typeof p.outbound?.fill === 'function' &&
    typeof p.outbound.size === 'function'
  );
}
