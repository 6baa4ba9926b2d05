/**
 * The follower's stall (issue 16, the flaky host_lost check of the hosts e2e): a host follows the shared log
 * with an ordered JetStream consumer. When the cluster node that consumer lives on is SIGKILLed, the consumer
 * is gone but the client's iterator neither ends nor errs: the follower sees no fact again (measured here:
 * none for 40 s and more), so that host never learns what the others append. Shown with the watchdog off; with
 * it on (`follow()`'s FOLLOW_STALL_MS), a new consumer takes over from the next sequence and nothing is missed.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, describe, expect, it } from 'vitest';
import { EVENTS_STREAM } from '../../../schemas/index.ts';
import { JetStreamLog } from '../../../infra/transport/jetstream-log.ts';
import { newChildFact } from '../../support/agent-facts.ts';
import { newestConsumerNode, startTestCluster, type TestCluster } from '../../support/nats-cluster.ts';

/** How long the follower without a watchdog is watched for a fact after the kill (it never comes). */
const STALL_WINDOW_MS = 8_000;

describe("a follower whose consumer's node is SIGKILLed", () => {
  const clusters: TestCluster[] = [];
  const connections: NatsConnection[] = [];
  afterAll(async () => {
    for (const nc of connections) await nc.close().catch(() => undefined);
    for (const cluster of clusters) await cluster.dispose();
  });

  /**
   * A 3-node cluster, a log on a connection to n1 only (it survives), one fact followed, and the follower's
   * consumer placed on another node (followed again until it is): that node is then SIGKILLed and three more
   * facts appended. Returns what the follower saw from then on.
   */
  async function killConsumerNode(followStallMs: number) {
    const cluster = await startTestCluster(3);
    clusters.push(cluster);
    const nc = await connect({ servers: cluster.nodes[0]!.url });
    connections.push(nc);
    const log = await JetStreamLog.open(nc, { followStallMs });
    const jsm = await jetstreamManager(nc);
    await log.append({ stream: 'events', subject: 'skein.evt.main.agent.a0', fact: newChildFact() });
    const seen: number[] = [];
    let following: { stop(): void } | undefined;
    let victim = -1;
    for (let attempt = 0; attempt < 30 && victim <= 0; attempt++) {
      following?.stop();
      seen.length = 0;
      following = log.follow(1, async (f) => void seen.push(f.seq));
      await expect.poll(() => seen.length, { timeout: 10_000 }).toBe(1);
      victim = await newestConsumerNode(cluster, jsm, EVENTS_STREAM);
    }
    expect(victim, 'the consumer never landed off n1 in 30 tries').toBeGreaterThan(0);
    await cluster.kill(victim);
    const killedAt = performance.now();
    // R3 with two nodes left: appends go on once the stream has a leader again.
    for (let i = 1; i <= 3; i++) {
      const deadline = performance.now() + 30_000;
      for (;;) {
        try {
          await log.append({ stream: 'events', subject: `skein.evt.main.agent.a${i}`, fact: newChildFact() });
          break;
        } catch (err) {
          if (performance.now() > deadline) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
    return { seen, killedAt, stop: () => following!.stop() };
  }

  it('without the watchdog, follows nothing more: the consumer is gone and its iterator waits on', async () => {
    const { seen, stop } = await killConsumerNode(0);
    await new Promise((r) => setTimeout(r, STALL_WINDOW_MS));
    expect(seen).toEqual([1]);
    stop();
  }, 120_000);

  it('with the watchdog, a new consumer follows every fact appended after the kill, in order, once', async () => {
    const { seen, killedAt, stop } = await killConsumerNode(3_000);
    // ~4 s here; a new consumer cannot be made until the stream has a leader again, and each try that meets
    // the failover waits out the JetStream API's timeout (5 s), more than once on a loaded machine.
    await expect.poll(() => seen.length, { timeout: 60_000, interval: 50 }).toBe(4);
    console.log(`follower recovered ${(performance.now() - killedAt).toFixed(0)} ms after the node was SIGKILLed`);
    await new Promise((r) => setTimeout(r, 500));
    expect(seen).toEqual([1, 2, 3, 4]);
    stop();
  }, 120_000);
});
