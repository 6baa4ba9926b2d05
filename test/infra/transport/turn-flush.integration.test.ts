/**
 * One socket write per event-loop turn (infra/transport/turn-flush.ts), against a real nats-server: what many
 * promise chains publish in one turn leaves in one write, in order, every message delivered; a queue past the
 * 32 KiB threshold is written at once; flush, request and reply still work. Also the guard: the nats.js version
 * installed has the layout the patch expects (an upgrade that changes it fails here, not silently in production).
 */
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsBus } from '../../../infra/transport/nats-bus.ts';
import { onceAturn } from '../../../infra/transport/turn-flush.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';

const text = (b: Uint8Array) => new TextDecoder().decode(b);
type Transport = { send(frame: Uint8Array): void };

/** Counts the socket writes of `nc` (its transport's `send`). */
function countWrites(nc: NatsConnection): { writes: number[] } {
  const transport = (nc as unknown as { protocol: { transport: Transport } }).protocol.transport;
  const seen = { writes: [] as number[] };
  const send = transport.send.bind(transport);
  transport.send = (frame) => {
    seen.writes.push(frame.byteLength);
    send(frame);
  };
  return seen;
}

/** `n` publishes, each from its own promise chain resuming after `i % 7` microtask hops, all in one turn. */
async function publishFromChains(nc: NatsConnection, subject: string, n: number): Promise<void> {
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      for (let hop = 0; hop < i % 7; hop++) await Promise.resolve();
      nc.publish(subject, `m${i}`);
    }),
  );
}

describe('one socket write per event-loop turn', () => {
  let nats: TestNats;
  let sub: NatsConnection;
  beforeAll(async () => {
    nats = await startTestNats();
    sub = await connect({ servers: nats.url });
  });
  afterAll(async () => {
    await sub?.close();
    await nats?.dispose();
  });

  /** The subject's messages as received, once `expected` have come. */
  async function receive(subject: string, expected: number, during: () => Promise<void>): Promise<string[]> {
    const got: string[] = [];
    let done!: () => void;
    const all = new Promise<void>((r) => {
      done = r;
    });
    const s = sub.subscribe(subject, {
      callback: (_e, m: Msg) => {
        got.push(text(m.data));
        if (got.length === expected) done();
      },
    });
    await sub.flush();
    await during();
    await all;
    s.unsubscribe();
    return got;
  }

  it('writes what 50 chains publish in one turn once, in order, where nats.js alone writes it in pieces', async () => {
    const plain = await connect({ servers: nats.url });
    const patched = await connect({ servers: nats.url });
    try {
      expect(onceAturn(patched)).toBe(true);
      const before = countWrites(plain);
      const after = countWrites(patched);
      const expected = Array.from({ length: 50 }, (_, i) => `m${i}`);
      // The chains resume in microtask order: m0 first, then those with more hops (the order of the queue).
      const order = [...expected].sort((a, b) => (Number(a.slice(1)) % 7) - (Number(b.slice(1)) % 7));
      expect(await receive('t.plain', 50, () => publishFromChains(plain, 't.plain', 50))).toEqual(order);
      expect(await receive('t.patched', 50, () => publishFromChains(patched, 't.patched', 50))).toEqual(order);
      expect(before.writes.length).toBeGreaterThan(1);
      expect(after.writes).toHaveLength(1);
    } finally {
      await plain.close();
      await patched.close();
    }
  });

  it('writes a queue past 32 KiB at once, and still flushes, requests and replies', async () => {
    const nc = await connect({ servers: nats.url });
    const server = await connect({ servers: nats.url });
    try {
      onceAturn(nc);
      onceAturn(server);
      const seen = countWrites(nc);
      const big = 'x'.repeat(20 * 1024);
      nc.publish('t.big', big);
      expect(seen.writes).toHaveLength(0); // under the threshold: waits for the turn's end
      nc.publish('t.big', big);
      expect(seen.writes).toHaveLength(1); // past it: written within the call, as nats.js does
      await nc.flush();
      server.subscribe('t.echo', { callback: (_e, m) => void m.respond(m.data) });
      await server.flush();
      const reply = await nc.request('t.echo', 'ping', { timeout: 5_000 });
      expect(text(reply.data)).toBe('ping');
    } finally {
      await nc.close();
      await server.close();
    }
  });

  it('is what NatsBus.connect gives every connection', async () => {
    const bus = await NatsBus.connect(nats.url, 'turn-flush-test');
    try {
      const protocol = (bus.nc as unknown as { protocol: object }).protocol;
      expect(Object.hasOwn(protocol, 'sendCommand')).toBe(true);
    } finally {
      await bus.close();
    }
  });
});
