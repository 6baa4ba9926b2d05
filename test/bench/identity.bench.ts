/**
 * @module
 * Per-agent identities: minting a user and connecting as it (p50/p95), 200
 * agents connected at once (broker and host RSS), and a command round trip
 * as an authenticated agent on the private broker versus an unauthenticated
 * client of a broker without auth, in the same run.
 */
import { readFileSync } from 'node:fs';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { fastCredsAuthenticator } from '../../infra/transport/auth/client-auth.ts';
import { inboxPrefixFor } from '../../infra/transport/auth/permissions.ts';
import { call } from '../../infra/transport/client.ts';
import { NatsBus } from '../../infra/transport/nats-bus.ts';
import { startTestNats } from '../support/nats-server.ts';
import { startTestRuntime } from '../support/runtime.ts';
import { percentile, type Bench, type BenchResult } from './types.ts';

const MINTS = 40;
const CONNECTED = 200;
const ROUND_TRIPS = 1_000;

function rssMiB(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kb / 1024;
}

async function roundTrips(bus: NatsBus, agentId: string): Promise<number[]> {
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
  name: 'identity (private broker auth)',
  async run() {
    const results: BenchResult[] = [];
    const rt = await startTestRuntime({ mode: 'private' });
    const authority = rt.auth!.authority;
    const url = rt.info.natsUrl!;
    const asAgent = async (agentId: string) => {
      const minted = await authority.mintAgent(agentId);
      return connect({
        servers: url,
        authenticator: fastCredsAuthenticator(minted.creds),
        inboxPrefix: inboxPrefixFor(agentId),
      });
    };
    const open: NatsConnection[] = [];
    try {
      // 1. Mint + connect, one at a time.
      const mint: number[] = [];
      const total: number[] = [];
      for (let i = 0; i < MINTS; i++) {
        const t0 = performance.now();
        const minted = await authority.mintAgent(`m${i}`);
        const t1 = performance.now();
        const nc = await connect({
          servers: url,
          authenticator: fastCredsAuthenticator(minted.creds),
          inboxPrefix: inboxPrefixFor(`m${i}`),
        });
        total.push(performance.now() - t0);
        mint.push(t1 - t0);
        await nc.close();
      }
      results.push({ name: 'mint a user JWT p50', value: percentile(mint, 50), unit: 'ms' });
      results.push({ name: 'mint + connect as a new agent p50', value: percentile(total, 50), unit: 'ms' });
      results.push({ name: 'mint + connect as a new agent p95', value: percentile(total, 95), unit: 'ms' });

      // 2. 200 agents connected at once, 3 subscriptions each.
      const brokerBefore = rssMiB(rt.info.natsServerPid!);
      const hostBefore = process.memoryUsage().rss / 2 ** 20;
      const t0 = performance.now();
      for (let i = 0; i < CONNECTED; i++) {
        const nc = await asAgent(`c${i}`);
        for (const kind of ['evt', 'out', 'ask']) nc.subscribe(`skein.${kind}.c${i}.>`);
        open.push(nc);
      }
      await Promise.all(open.map((nc) => nc.flush()));
      const elapsed = performance.now() - t0;
      const brokerAfter = rssMiB(rt.info.natsServerPid!);
      const hostAfter = process.memoryUsage().rss / 2 ** 20;
      results.push({
        name: `${CONNECTED} agents connected: broker RSS`,
        value: brokerAfter,
        unit: 'MiB',
        baseline: brokerBefore,
        note:
          `${(((brokerAfter - brokerBefore) * 1024) / CONNECTED).toFixed(0)} KiB per agent; ` +
          `all minted and connected in ${elapsed.toFixed(0)} ms`,
      });
      results.push({
        name: `${CONNECTED} agents connected: host+clients process RSS`,
        value: hostAfter,
        unit: 'MiB',
        baseline: hostBefore,
        note: 'the host and the 200 client connections share this process',
      });
      for (const nc of open.splice(0)) await nc.close();

      // 3. Command round trip as an agent (auth on) vs a client of a broker without auth (off).
      await call(rt.bus, 'main', 'agent.spawn', { label: 'bench', agentId: 'bench' });
      const agentNc = await asAgent('bench');
      open.push(agentNc);
      const nats = await startTestNats();
      const plain = await startTestRuntime({ mode: 'networked', natsUrl: nats.url });
      const plainNc = await connect({ servers: nats.url });
      try {
        await call(plain.bus, 'main', 'agent.spawn', { label: 'bench', agentId: 'bench' });
        const on: number[] = [];
        const off: number[] = [];
        for (let round = 0; round < 3; round++) {
          off.push(percentile(await roundTrips(new NatsBus(plainNc), 'bench'), 50));
          on.push(percentile(await roundTrips(new NatsBus(agentNc), 'bench'), 50));
        }
        const onP50 = percentile(on, 50);
        const offP50 = percentile(off, 50);
        results.push({
          name: 'command round trip p50, auth on (agent creds) vs off',
          value: onP50,
          unit: 'ms',
          baseline: offP50,
          ratio: offP50 / onP50,
          target: 'auth on ≤ 1.1× off (ratio ≥ 0.91)',
          met: onP50 <= offP50 * 1.1,
          note: `median of 3 rounds of ${ROUND_TRIPS} sequential runtime.ping`,
        });
      } finally {
        await plainNc.close();
        await plain.dispose();
        await nats.stop();
      }
    } finally {
      for (const nc of open) await nc.close().catch(() => undefined);
      await rt.dispose();
    }
    return results;
  },
};
