/**
 * @module
 * Named hosts (issue 16) on a 3-node loopback cluster: a command round trip to an agent on a remote host (its
 * host on another node, the client on the local host's node) against one on the local host; and a fleet's
 * throughput (agents writing files) with half the agents placed on a second host against all on one. Both
 * hosts share this machine's cores, so the fleet figure shows the cost of the second host's routing more
 * than any scale-out. And the reply time of a spawn with a worker placed on the other host (started there)
 * against one started on the spawning host.
 */
import { call } from '../../infra/transport/client.ts';
import { NatsBus } from '../../infra/transport/nats-bus.ts';
import { startTestCluster } from '../support/nats-cluster.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { percentile, scaled, type Bench, type BenchResult } from './types.ts';

const ROUND_TRIPS = scaled(1_000, 10);
const FLEET_AGENTS = scaled(8, 2);
const WRITES_PER_AGENT = scaled(40, 2);
const HOSTS = { heartbeatMs: 500, lostAfterMs: 10_000 };
const WORKER_SPAWNS = scaled(20, 3);

/** `agent.spawn` with a worker, reply time p50 (the worker is running when it replies); each then cancelled. */
async function workerSpawns(a: TestRuntime, round: string, host: 'a' | 'b'): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < WORKER_SPAWNS; i++) {
    const agentId = `${round}${i}`;
    const t0 = performance.now();
    const reply = await a.call('agent.spawn', {
      label: agentId,
      agentId,
      worker: { command: 'sleep', args: ['60'] },
      ...(host === 'b' ? { host } : {}),
    });
    ms.push(performance.now() - t0);
    if (!reply.ok || reply['status'] !== 'running') throw new Error(JSON.stringify(reply));
    const cancelled = await a.call('agent.cancel', { agentId });
    if (!cancelled.ok) throw new Error(JSON.stringify(cancelled));
  }
  return percentile(ms, 50);
}

async function fleet(client: NatsBus, a: TestRuntime, round: string, onB: boolean): Promise<number> {
  const ids = Array.from({ length: FLEET_AGENTS }, (_, i) => `${round}${i}`);
  for (const [i, id] of ids.entries()) {
    const placed = onB && i % 2 === 1 ? { host: 'b' } : {};
    const reply = await a.call('agent.spawn', { label: id, agentId: id, ...placed });
    if (!reply.ok) throw new Error(JSON.stringify(reply));
  }
  const t0 = performance.now();
  await Promise.all(
    ids.map(async (id) => {
      for (let n = 0; n < WRITES_PER_AGENT; n++) {
        const reply = await call(client, id, 'file.write', { path: `${id}-${n}.txt`, content: `${n}\n` });
        if (!reply.ok) throw new Error(JSON.stringify(reply));
      }
    }),
  );
  return (ids.length * WRITES_PER_AGENT * 1000) / (performance.now() - t0);
}

export const bench: Bench = {
  name: 'hosts (issue 16)',
  async run() {
    const results: BenchResult[] = [];
    const cluster = await startTestCluster(3);
    const started: TestRuntime[] = [];
    let client: NatsBus | undefined;
    try {
      const node = (i: number) => cluster.nodes[i]!.url;
      const a = await startTestRuntime({ mode: 'networked', natsUrl: node(0), flags: { host: 'a', hosts: HOSTS } });
      started.push(a);
      const b = await startTestRuntime({ mode: 'networked', natsUrl: node(2), flags: { host: 'b', hosts: HOSTS } });
      started.push(b);
      client = await NatsBus.connect(node(0));
      for (const [id, host] of [
        ['local', 'a'],
        ['remote', 'b'],
      ] as const) {
        const reply = await a.call('agent.spawn', { label: id, agentId: id, ...(host === 'b' ? { host } : {}) });
        if (!reply.ok) throw new Error(JSON.stringify(reply));
      }
      const sample = async (agentId: string) => {
        const ms: number[] = [];
        for (let i = 0; i < ROUND_TRIPS; i++) {
          const t0 = performance.now();
          const reply = await call(client!, agentId, 'agent.get', {});
          ms.push(performance.now() - t0);
          if (!reply.ok) throw new Error(JSON.stringify(reply));
        }
        return ms;
      };
      await sample('local');
      await sample('remote');
      const local = percentile(await sample('local'), 50);
      const remote = percentile(await sample('remote'), 50);
      results.push({
        name: 'agent.get round trip p50, agent on the remote host (vs on the local host)',
        value: remote,
        unit: 'ms',
        baseline: local,
        ratio: local / remote,
        note: 'client and host a on node 1, host b on node 3',
      });
      await workerSpawns(a, 'wwarm', 'b');
      const localWorker = await workerSpawns(a, 'wl', 'a');
      const remoteWorker = await workerSpawns(a, 'wr', 'b');
      results.push({
        name: 'agent.spawn with a worker, reply p50, placed on the remote host (vs on the local host)',
        value: remoteWorker,
        unit: 'ms',
        baseline: localWorker,
        ratio: localWorker / remoteWorker,
        note: 'replies once the worker runs: on b, started by b after it read the spawn from the log',
      });
      const one = await fleet(client, a, 'one', false);
      const two = await fleet(client, a, 'two', true);
      results.push({
        name: `fleet file.write throughput, ${FLEET_AGENTS} agents on 2 hosts (vs all on 1)`,
        value: two,
        unit: 'ops/s',
        baseline: one,
        ratio: two / one,
        note: 'both hosts share this machine',
      });
    } finally {
      await client?.close();
      for (const rt of started.reverse()) await rt.dispose();
      await cluster.dispose();
    }
    return results;
  },
};
