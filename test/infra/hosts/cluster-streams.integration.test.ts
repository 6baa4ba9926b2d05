/**
 * Streams on a 3-node cluster are created R3 (detected from the server's INFO), on one server R1; the
 * cluster helper's nodes can be SIGKILLed and an acknowledged fact survives it.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EVENTS_STREAM, OUTPUT_STREAM, type Fact } from '../../../schemas/index.ts';
import { JetStreamLog, streamReplicas } from '../../../infra/transport/jetstream-log.ts';
import { NatsBus } from '../../../infra/transport/nats-bus.ts';
import { startTestCluster, type TestCluster } from '../../support/nats-cluster.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';

function fact(id: string): Fact {
  return {
    id,
    type: 'agent.spawned',
    at: new Date().toISOString(),
    agentId: 'main' as Fact['agentId'],
    data: {
      agentId: 'main',
      parentId: null,
      label: 'root',
      workspace: '/w',
      depth: 0,
      task: null,
      hasPolicy: false,
      worker: null,
    },
  };
}

describe('JetStreamLog on a cluster', () => {
  let cluster: TestCluster;
  let single: TestNats;
  const buses: NatsBus[] = [];

  beforeAll(async () => {
    [cluster, single] = await Promise.all([startTestCluster(3), startTestNats()]);
  }, 60_000);
  afterAll(async () => {
    for (const bus of buses) await bus.close();
    await Promise.all([cluster?.dispose(), single?.dispose()]);
  });

  it('creates both streams with 3 replicas on a 3-node cluster, and 1 on a single server', async () => {
    const clustered = await NatsBus.connect(cluster.url);
    const alone = await NatsBus.connect(single.url);
    buses.push(clustered, alone);
    expect(streamReplicas(clustered.nc)).toBe(3);
    expect(streamReplicas(alone.nc)).toBe(1);
    await JetStreamLog.open(clustered.nc);
    await JetStreamLog.open(alone.nc);
    for (const [bus, replicas] of [
      [clustered, 3],
      [alone, 1],
    ] as const) {
      const jsm = await jetstreamManager(bus.nc);
      for (const stream of [EVENTS_STREAM, OUTPUT_STREAM]) {
        expect((await jsm.streams.info(stream)).config.num_replicas).toBe(replicas);
      }
    }
  });

  it('keeps every acknowledged fact when a node is SIGKILLed, and appends again after', async () => {
    const bus = await NatsBus.connect(cluster.url);
    buses.push(bus);
    const log = await JetStreamLog.open(bus.nc);
    const acked: number[] = [];
    for (let i = 0; i < 20; i++)
      acked.push((await log.append({ stream: 'events', subject: 'skein.evt.k.agent.k', fact: fact(`k-${i}`) })).seq);
    // The node the stream's leader is on is the worst case; kill it.
    const jsm = await jetstreamManager(bus.nc);
    const leader = (await jsm.streams.info(EVENTS_STREAM)).cluster?.leader;
    const index = Math.max(
      0,
      cluster.nodes.findIndex((n) => n.name === leader),
    );
    await cluster.kill(index);
    await expect
      .poll(
        async () =>
          log
            .append({ stream: 'events', subject: 'skein.evt.k.agent.k', fact: fact('k-after') })
            .then((r) => r.seq)
            .catch(() => 0),
        { timeout: 20_000, interval: 250 },
      )
      .toBeGreaterThan(0);
    // Creating a reader's consumer waits for a new meta leader when the killed node held it: retried. On a
    // loaded 2-core machine (CI beside other work, load 12) that election took over 20 s once.
    const readAll = async () => {
      const ids: string[] = [];
      for await (const f of log.read({ subject: 'skein.evt.k.agent.k' })) ids.push(f.id);
      return ids;
    };
    let stored: string[] = [];
    await vi.waitFor(async () => (stored = await readAll()), { timeout: 60_000, interval: 500 });
    expect(stored.slice(0, 20)).toEqual(acked.map((_, i) => `k-${i}`));
    expect(stored).toContain('k-after');
    await cluster.restart(index);
  }, 120_000);
});
