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
import { EVENTS_STREAM, type StoredFact } from '../../../schemas/index.ts';
import { JetStreamLog } from '../../../infra/transport/jetstream-log.ts';
import { newChildFact } from '../../support/agent-facts.ts';
import { newestConsumerNode, startTestCluster, type TestCluster } from '../../support/nats-cluster.ts';

/** More than a consumer's batch (1,024): the read must pull from the server after the kill. */
const FACTS = 3_000;
/** A scan (a start's replay) cannot pause: enough facts that it is still reading when the kill lands. */
const SCAN_FACTS = 20_000;

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
  async function clusterWithFacts(stallMs: number, facts: number) {
    const cluster = await startTestCluster(3);
    clusters.push(cluster);
    const nc = await connect({ servers: cluster.nodes[0]!.url });
    connections.push(nc);
    const log = await JetStreamLog.open(nc, { followStallMs: stallMs });
    const jsm = await jetstreamManager(nc);
    for (let i = 0; i < facts; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, k) =>
          log.append({ stream: 'events', subject: `skein.evt.main.agent.a${i + k}`, fact: newChildFact() }),
        ),
      );
    }
    const newestConsumer = () => newestConsumerNode(cluster, jsm, EVENTS_STREAM);
    return { cluster, log, newestConsumer };
  }

  async function killMidRead(stallMs: number) {
    const { cluster, log, newestConsumer } = await clusterWithFacts(stallMs, FACTS);
    let reader: AsyncIterator<StoredFact> | undefined;
    let victim = -1;
    for (let attempt = 0; attempt < 30 && victim <= 0; attempt++) {
      await reader?.return?.();
      reader = log.read()[Symbol.asyncIterator]();
      const first = await reader.next();
      expect(first.value?.seq).toBe(1);
      victim = await newestConsumer();
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

  /**
   * The same for a scan (a start's replay: a callback per fact, no pause): at its first fact the test looks up
   * its consumer's node and SIGKILLs it unless it is n1 (then the scan ends and another is tried).
   */
  async function killMidScan(stallMs: number) {
    const { cluster, log, newestConsumer } = await clusterWithFacts(stallMs, SCAN_FACTS);
    for (let attempt = 0; attempt < 30; attempt++) {
      const seen: number[] = [];
      const state: { ended: boolean; error?: Error; killed?: number } = { ended: false };
      let killing: Promise<void> | undefined;
      const scanning = log.scan({}, (f) => {
        seen.push(f.seq);
        killing ??= newestConsumer().then(async (victim) => {
          if (victim > 0 && !state.ended) {
            state.killed = seen.length;
            await cluster.kill(victim);
          }
        });
      });
      scanning.then(
        () => (state.ended = true),
        (err: Error) => ((state.error = err), (state.ended = true)),
      );
      while (!killing) await new Promise((r) => setTimeout(r, 5));
      await killing;
      if (state.killed !== undefined) return { seen, state, killedAt: performance.now() };
      await expect.poll(() => state.ended, { timeout: 30_000 }).toBe(true);
    }
    throw new Error('the scan never read from a consumer off n1 while it ran, in 30 tries');
  }

  it('without the guard, a scan hangs too: it ends not, short of the log', async () => {
    const { seen, state } = await killMidScan(0);
    expect(state.killed!).toBeLessThan(SCAN_FACTS);
    await new Promise((r) => setTimeout(r, 8_000));
    expect(state).toMatchObject({ ended: false });
    expect(seen.length).toBeLessThan(SCAN_FACTS);
  }, 180_000);

  it('with the guard, a scan visits every fact once, in order', async () => {
    const { seen, state, killedAt } = await killMidScan(2_000);
    await expect.poll(() => state.ended, { timeout: 40_000, interval: 50 }).toBe(true);
    console.log(
      `scan ended ${(performance.now() - killedAt).toFixed(0)} ms after its node was SIGKILLed at fact ${state.killed}`,
    );
    expect(state.error).toBeUndefined();
    expect(seen).toEqual(Array.from({ length: SCAN_FACTS }, (_, i) => i + 1));
  }, 180_000);

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
