/**
 * JetStream publishes with acks matched on one inbox (infra/transport/jetstream-acks.ts), against a real
 * nats-server: each append gets its own ack among many in flight, and every failure is the error
 * `js.publish` gives for it (refusal, no stream, no ack in time, connection closed).
 */
import { jetstreamManager, JetStreamApiError } from '@nats-io/jetstream';
import { jserrors } from '@nats-io/jetstream/internal';
import { ClosedConnectionError, connect, TimeoutError, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JetStreamAcks } from '../../../infra/transport/jetstream-acks.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('JetStreamAcks', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let acks: JetStreamAcks;

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'ACKS', subjects: ['acks.>'], storage: 'file' as never });
    acks = new JetStreamAcks(nc);
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.dispose();
  });

  it('gives each of many appends in flight its own ack, and a repeated msg-id the first sequence', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `m-${i}`);
    const results = await Promise.all(
      ids.map((id, i) => acks.publish(`acks.s${i % 5}`, bytes(id), { msgID: id, timeoutMs: 5_000 })),
    );
    expect(results.map((r) => r.seq).sort((a, b) => a - b)).toEqual(ids.map((_, i) => i + 1));
    const jsm = await jetstreamManager(nc);
    for (const [i, r] of results.entries()) {
      const stored = await jsm.streams.getMessage('ACKS', { seq: r.seq });
      expect([stored?.string(), r.stream, r.duplicate]).toEqual([ids[i], 'ACKS', false]);
    }
    const again = await acks.publish('acks.s3', bytes('m-3'), { msgID: 'm-3', timeoutMs: 5_000 });
    expect(again).toEqual({ stream: 'ACKS', seq: results[3]!.seq, duplicate: true });
  });

  it('refuses an append whose expected last subject sequence is wrong with the server error (10071)', async () => {
    const first = await acks.publish('acks.one', bytes('a'), { msgID: 'one-1', timeoutMs: 5_000 });
    const ok = await acks.publish('acks.one', bytes('b'), {
      msgID: 'one-2',
      timeoutMs: 5_000,
      expectLastSubjectSequence: first.seq,
    });
    expect(ok.seq).toBeGreaterThan(first.seq);
    const refused = await acks
      .publish('acks.one', bytes('c'), { msgID: 'one-3', timeoutMs: 5_000, expectLastSubjectSequence: first.seq })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(JetStreamApiError);
    expect((refused as JetStreamApiError).code).toBe(10071);
  });

  it('fails an append no stream takes as js.publish does (JetStream not enabled)', async () => {
    const err = await acks.publish('nostream.x', bytes('x'), { msgID: 'n-1', timeoutMs: 5_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(jserrors.JetStreamNotEnabled);
  });

  it('times out an append nobody acks, ignores its late answer; a closed connection fails those left', async () => {
    const other = await connect({ servers: nats.url });
    let held: Array<{ respond(data: Uint8Array): boolean }> = [];
    other.subscribe('silent.>', { callback: (_e, m) => void held.push(m) });
    await other.flush();
    const timedOut = await acks.publish('silent.a', bytes('x'), { msgID: 's-1', timeoutMs: 150 }).catch((e) => e);
    expect(timedOut).toBeInstanceOf(TimeoutError);
    // The late ack finds no waiter; the next append still gets its own.
    for (const m of held) m.respond(bytes(JSON.stringify({ stream: 'ACKS', seq: 999 })));
    held = [];
    const next = await acks.publish('acks.after', bytes('y'), { msgID: 'after-1', timeoutMs: 5_000 });
    expect(next.seq).not.toBe(999);

    const own = await connect({ servers: nats.url });
    const mine = new JetStreamAcks(own);
    const pending = mine.publish('silent.b', bytes('z'), { msgID: 's-2', timeoutMs: 60_000 }).catch((e) => e);
    await own.flush();
    await own.close();
    expect(await pending).toBeInstanceOf(ClosedConnectionError);
    await other.close();
  });
});
