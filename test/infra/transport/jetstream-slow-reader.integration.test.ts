/**
 * A slow reader of the log is not a stalled consumer: the read's stall guard (jetstream-log.ts) counts only
 * the time the read waits for the consumer, not the time its caller keeps a fact. Before, a reader that paused
 * longer than the stall time (an export to a slow pipe) had its consumer replaced at pauses, and after 20 such
 * rounds the read ended short of the log without a word (23,808 facts of 30,000 here); now it would throw.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JetStreamLog } from '../../../infra/transport/jetstream-log.ts';
import { newChildFact } from '../../support/agent-facts.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';

const FACTS = 30_000;
/** Short, for a short test, but not so short that a loaded machine's slow batch looks like a stall. */
const STALL_MS = 400;
/** More pauses than a read has rounds (20), each longer than the stall time, spread over the read. */
const PAUSES = 25;

describe('a JetStream read with a slow reader', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connect({ servers: nats.url });
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.dispose();
  });

  it('reads every fact once, in order, with no consumer per pause of a reader past the stall time', async () => {
    const log = await JetStreamLog.open(nc, { followStallMs: STALL_MS });
    for (let i = 0; i < FACTS; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, k) =>
          log.append({ stream: 'events', subject: `skein.evt.main.agent.a${i + k}`, fact: newChildFact() }),
        ),
      );
    }
    let creates = 0;
    const watch = nc.subscribe('$JS.API.CONSUMER.CREATE.>', { callback: () => void creates++ });
    await nc.flush();
    const seen: number[] = [];
    for await (const fact of log.read()) {
      seen.push(fact.seq);
      if (seen.length % (FACTS / PAUSES) === 0) await new Promise((r) => setTimeout(r, STALL_MS * 2));
    }
    watch.unsubscribe();
    expect(seen).toEqual(Array.from({ length: FACTS }, (_, i) => i + 1));
    // One consumer, or a few when nats.js's ordered consumer renews its own or a batch is slow on a loaded
    // machine: never one per pause.
    expect(creates).toBeLessThanOrEqual(5);
  }, 120_000);
});
