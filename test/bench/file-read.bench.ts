/**
 * @module
 * Load: 1,000 concurrent `file.read` from 5 clients (200 each, all in flight at once) of a 20 KB source
 * file, against a real nats-server (networked) and an embedded runtime (socket clients). Reports the
 * round trip's p50 and p99 and the wall time; the issue measured p50 2.1–2.4 s (networked) before.
 */
import { createHook } from 'node:async_hooks';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { call } from '../../infra/transport/client.ts';
import { NatsBus } from '../../infra/transport/nats-bus.ts';
import { operatorSocket } from '../support/socket.ts';
import type { Bus } from '../../infra/transport/bus.ts';
import { startTestNats } from '../support/nats-server.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { percentile, type Bench, type BenchResult } from './types.ts';

const CLIENTS = 5;
const PER_CLIENT = 200;

async function load(rt: TestRuntime, connectOne: () => Promise<Bus>, mode: string): Promise<BenchResult[]> {
  const source = Array.from({ length: 600 }, (_, i) => `export const value${i} = ${i}; // padding text`).join('\n');
  writeFileSync(join(rt.workspace, 'read-me.ts'), `${source}\n`);
  const buses = await Promise.all(Array.from({ length: CLIENTS }, connectOne));
  // Warm up (tree-sitter, caches) so the first requests do not measure start-up.
  await call(buses[0]!, 'main', 'file.read', { path: 'read-me.ts' });
  const latencies: number[] = [];
  let failed = 0;
  const t0 = performance.now();
  await Promise.all(
    buses.flatMap((bus) =>
      Array.from({ length: PER_CLIENT }, async () => {
        const started = performance.now();
        const reply = await call(bus, 'main', 'file.read', { path: 'read-me.ts' }, { timeoutMs: 120_000 });
        latencies.push(performance.now() - started);
        if (!reply.ok) failed++;
      }),
    ),
  );
  const wall = performance.now() - t0;
  for (const bus of buses) await bus.close();
  const note = `${CLIENTS} clients × ${PER_CLIENT}, wall ${wall.toFixed(0)} ms, ${failed} failed`;
  return [
    { name: `file.read p50, 1,000 concurrent (${mode})`, value: percentile(latencies, 50), unit: 'ms', note },
    { name: `file.read p99, 1,000 concurrent (${mode})`, value: percentile(latencies, 99), unit: 'ms', note },
  ];
}

/**
 * Thread-pool fs requests per `file.read`, counted with async_hooks over 100 reads one after another on the
 * in-process embedded runtime (client and host share this process; a baseline of 100 pings is subtracted).
 * Unlike the latencies above, this does not move with the machine's load.
 */
async function fsCallsPerRead(rt: TestRuntime): Promise<BenchResult> {
  const source = Array.from({ length: 600 }, (_, i) => `export const value${i} = ${i}; // padding text`).join('\n');
  mkdirSync(join(rt.workspace, 'src', 'lib'), { recursive: true });
  writeFileSync(join(rt.workspace, 'src', 'lib', 'read-me.ts'), `${source}\n`);
  const counted = async (type: string, data: unknown) => {
    let n = 0;
    const hook = createHook({
      init: (_id, kind) => {
        if (kind === 'FSREQPROMISE' || kind === 'FSREQCALLBACK') n++;
      },
    });
    hook.enable();
    try {
      for (let i = 0; i < 100; i++) await rt.call(type, data);
    } finally {
      hook.disable();
    }
    return n / 100;
  };
  await rt.call('file.read', { path: 'src/lib/read-me.ts' });
  const ping = await counted('runtime.ping', {});
  const read = await counted('file.read', { path: 'src/lib/read-me.ts' });
  return {
    name: 'fs requests per file.read (src/lib/read-me.ts, embedded)',
    value: read - ping,
    unit: 'calls',
    note: `${read.toFixed(1)} per read, ${ping.toFixed(1)} per ping subtracted`,
  };
}

export const bench: Bench = {
  name: 'file.read under load',
  async run() {
    const results: BenchResult[] = [];
    const nats = await startTestNats();
    const networked = await startTestRuntime({ mode: 'networked', natsUrl: nats.url });
    try {
      results.push(...(await load(networked, () => NatsBus.connect(nats.url, 'bench-client'), 'networked')));
    } finally {
      await networked.dispose();
      await nats.dispose();
    }
    const embedded = await startTestRuntime({ mode: 'embedded' });
    try {
      results.push(await fsCallsPerRead(embedded));
      const socket = join(embedded.dir, 'data', 'skein.sock');
      results.push(...(await load(embedded, () => operatorSocket(join(embedded.dir, 'data'), socket), 'embedded')));
    } finally {
      await embedded.dispose();
    }
    return results;
  },
};
