/**
 * A read's stall, the same hole as the follower's (follow-stall.integration.test.ts): a read of the whole log
 * (a start's replay, `skein replay`) runs an ordered JetStream consumer. When the cluster node it lives on is
 * SIGKILLed mid-read, its iterator neither ends nor errs, so the read, and the start waiting on it, hangs.
 * Shown with the stall guard off; with it on, a new consumer reads on from the last fact delivered, and every
 * fact comes once, in order.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { EVENTS_STREAM, type Fact, type StoredFact } from '../../../schemas/index.ts';
import { JetStreamLog } from '../../../infra/transport/jetstream-log.ts';
import { startTestCluster, type TestCluster } from '../../support/nats-cluster.ts';

/** More than a consumer's batch (1,024): the read must pull from the server after the kill. */
const FACTS = 3_000;

let n = 0;
function spawned(): Fact {
  n++;
  return {
    id: `r-${process.pid}-${n}-${Math.random().toString(36).slice(2)}`,
    type: 'agent.spawned',
    at: new Date().toISOString(),
    agentId: 'main' as Fact['agentId'],
    data: {
      agentId: `a${n}`,
      parentId: 'main',
      label: `l${n}`,
      workspace: '/w',
      depth: 1,
      task: null,
      hasPolicy: false,
      worker: null,
    },
  };
}

describe("a read whose consumer's node is SIGKILLed mid-read", () => {
  const clusters: TestCluster[] = [];
  const connections: NatsConnection[] = [];
  afterAll(async () => {
    for (const nc of connections) await nc.close().catch(() => undefined);
    for (const cluster of clusters) await cluster.dispose();
  });

  /**
   * A 3-node cluster, FACTS facts, a log on a connection to n1 only (it survives), and a read that took its
   * first fact from a consumer on another node (read again until it is): that node is SIGKILLed, and the
   * read goes on in the background. Returns the sequences it delivers and whether it ended.
   */
  async function killMidRead(stallMs: number) {
    const cluster = await startTestCluster(3);
    clusters.push(cluster);
    const nc = await connect({ servers: cluster.nodes[0]!.url });
    connections.push(nc);
    const log = await JetStreamLog.open(nc, { followStallMs: stallMs });
    const jsm = await jetstreamManager(nc);
    for (let i = 0; i < FACTS; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, k) =>
          log.append({ stream: 'events', subject: `skein.evt.main.agent.a${i + k}`, fact: spawned() }),
        ),
      );
    }
    let reader: AsyncIterator<StoredFact> | undefined;
    let victim = -1;
    for (let attempt = 0; attempt < 30 && victim <= 0; attempt++) {
      await reader?.return?.();
      reader = log.read()[Symbol.asyncIterator]();
      const first = await reader.next();
      expect(first.value?.seq).toBe(1);
      const consumers: Array<{ created: string; leader: string }> = [];
      for await (const c of jsm.consumers.list(EVENTS_STREAM)) {
        consumers.push({ created: c.created, leader: c.cluster?.leader ?? '' });
      }
      const leaders = consumers.sort((x, y) => Date.parse(y.created) - Date.parse(x.created)).map((c) => c.leader);
      victim = cluster.nodes.findIndex((node) => node.name === leaders[0]);
    }
    expect(victim, 'the consumer never landed off n1 in 30 tries').toBeGreaterThan(0);
    await cluster.kill(victim);
    const killedAt = performance.now();
    const seen = [1];
    const state: { ended: boolean; error?: Error } = { ended: false };
    void (async () => {
      for (let r = await reader!.next(); !r.done; r = await reader!.next()) seen.push(r.value.seq);
    })().then(
      () => (state.ended = true),
      (err: Error) => ((state.error = err), (state.ended = true)),
    );
    return { seen, state, killedAt };
  }

  it('without the guard, hangs: the read ends not, short of the log', async () => {
    const { seen, state } = await killMidRead(0);
    await new Promise((r) => setTimeout(r, 8_000));
    expect(state).toEqual({ ended: false });
    expect(seen.length).toBeLessThan(FACTS);
  }, 120_000);

  it('with the guard, reads every fact once, in order, through a new consumer', async () => {
    const { seen, state, killedAt } = await killMidRead(2_000);
    await expect.poll(() => state.ended, { timeout: 40_000, interval: 50 }).toBe(true);
    console.log(`read ended ${(performance.now() - killedAt).toFixed(0)} ms after its node was SIGKILLed`);
    expect(state.error).toBeUndefined();
    expect(seen).toEqual(Array.from({ length: FACTS }, (_, i) => i + 1));
  }, 120_000);
});
