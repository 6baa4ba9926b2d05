/**
 * @module
 * Per-agent identities on the embedded socket: minting a token and
 * connecting as a new agent (p50/p95), 200 agents connected at once (host
 * RSS), and a command round trip as an agent (its subjects judged by the
 * permission lists) versus the operator (allow `>`, a shorter check) in the
 * same run. The embedded socket has no "auth off" any more: the operator is
 * the nearest baseline.
 */
import { join } from 'node:path';
import { mintSocketToken, socketKey } from '../../infra/transport/auth/socket-tokens.ts';
import { call } from '../../infra/transport/client.ts';
import { SocketBus } from '../../infra/transport/socket-bus.ts';
import { operatorSocket } from '../support/socket.ts';
import { startTestRuntime } from '../support/runtime.ts';
import { percentile, type Bench, type BenchResult } from './types.ts';

const MINTS = 100;
const CONNECTED = 200;
const ROUND_TRIPS = 1_000;

async function roundTrips(bus: SocketBus, agentId: string): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const t0 = performance.now();
    const reply = await call(bus, agentId, 'runtime.ping', {});
    samples.push(performance.now() - t0);
    if (!reply.ok) throw new Error(`ping failed: ${reply.error.message}`);
  }
  return samples;
}

export const bench: Bench = {
  name: 'identity (embedded socket tokens)',
  async run() {
    const results: BenchResult[] = [];
    const rt = await startTestRuntime({ mode: 'embedded' });
    const dataDir = join(rt.dir, 'data');
    const key = socketKey(dataDir);
    const socket = rt.info.socketPath!;
    const open: SocketBus[] = [];
    try {
      const total: number[] = [];
      for (let i = 0; i < MINTS; i++) {
        const t0 = performance.now();
        const token = mintSocketToken(key, { kind: 'agent', agentId: `m${i}` });
        const bus = await SocketBus.connect(socket, { token });
        total.push(performance.now() - t0);
        await bus.close();
      }
      results.push({ name: 'socket: mint + connect as a new agent p50', value: percentile(total, 50), unit: 'ms' });
      results.push({ name: 'socket: mint + connect as a new agent p95', value: percentile(total, 95), unit: 'ms' });

      const before = process.memoryUsage().rss / 2 ** 20;
      const t0 = performance.now();
      for (let i = 0; i < CONNECTED; i++) {
        const bus = await SocketBus.connect(socket, {
          token: mintSocketToken(key, { kind: 'agent', agentId: `c${i}` }),
        });
        for (const kind of ['evt', 'out', 'ask']) bus.subscribe(`skein.${kind}.c${i}.>`, () => undefined);
        open.push(bus);
      }
      await Promise.all(open.map((bus) => bus.flush()));
      const after = process.memoryUsage().rss / 2 ** 20;
      results.push({
        name: `socket: ${CONNECTED} agents connected: host+clients process RSS`,
        value: after,
        unit: 'MiB',
        baseline: before,
        note: `the host and the clients share this process; all connected in ${(performance.now() - t0).toFixed(0)} ms`,
      });
      for (const bus of open.splice(0)) await bus.close();

      await call(rt.bus, 'main', 'agent.spawn', { label: 'bench', agentId: 'bench' });
      const agent = await SocketBus.connect(socket, {
        token: mintSocketToken(key, { kind: 'agent', agentId: 'bench' }),
      });
      const operator = await operatorSocket(dataDir, socket);
      open.push(agent, operator);
      const on: number[] = [];
      const off: number[] = [];
      for (let round = 0; round < 3; round++) {
        off.push(percentile(await roundTrips(operator, 'bench'), 50));
        on.push(percentile(await roundTrips(agent, 'bench'), 50));
      }
      const onP50 = percentile(on, 50);
      const offP50 = percentile(off, 50);
      results.push({
        name: 'socket: command round trip p50, agent token vs operator token',
        value: onP50,
        unit: 'ms',
        baseline: offP50,
        ratio: offP50 / onP50,
        target: 'agent ≤ 1.1× operator (ratio ≥ 0.91)',
        met: onP50 <= offP50 * 1.1,
        note: `median of 3 rounds of ${ROUND_TRIPS} sequential runtime.ping`,
      });
    } finally {
      for (const bus of open) await bus.close().catch(() => undefined);
      await rt.dispose();
    }
    return results;
  },
};
