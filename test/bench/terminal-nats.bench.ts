/**
 * @module
 * Terminal benchmarks over NATS through the host (issue 3), each against the
 * raw node-pty baseline (bash + skein's rc, OSC 133 marks found by hand)
 * measured in the same run: exec "true" round trip, 8 agents × 100 commands
 * at once, a 50 MB flood read by a NATS subscriber of `skein.out.<agent>.<tid>`,
 * and runtime RSS for 100 idle terminals. The exec benchmarks run twice: with
 * shell side-effect tracking (`domains.review.trackShell`, the default) and
 * without.
 */
import { connect } from '@nats-io/transport-node';
import { writeRcFile } from '../../actors/terminal/shell-integration.ts';
import { startTestNats, type TestNats } from '../support/nats-server.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { MARK_B, MARK_D, MiB, gc, now, ok, rawShell, rssSampler } from './bench-pty.ts';
import { percentile, type Bench, type BenchResult } from './types.ts';

const FLOOD = "head -c 50000000 /dev/zero | tr '\\0' a";
const FLOOD_BYTES = 50_000_000;
const EXECS = 300;
const AGENTS = 8;
const PER_AGENT = 100;
const IDLE = 100;

type Env = { nats: TestNats; rt: TestRuntime };

async function withRuntime<T>(trackShell: boolean, fn: (env: Env) => Promise<T>): Promise<T> {
  const nats = await startTestNats();
  let rt: TestRuntime | undefined;
  try {
    rt = await startTestRuntime({
      mode: 'networked',
      natsUrl: nats.url,
      policy: { default: 'allow' },
      flags: {
        log: { outputMaxBytes: 2 ** 30 } as never,
        domains: { terminal: { maxPerAgent: IDLE + 20, maxPerHost: 256 }, review: { trackShell } },
      },
    });
    return await fn({ nats, rt });
  } finally {
    await rt?.dispose();
    await nats.dispose();
  }
}

const label = (trackShell: boolean) => (trackShell ? 'trackShell on (default)' : 'trackShell off');

/** 100 idle terminals through the host: RSS growth of this process (the runtime); the shells are other processes. */
async function idleBench({ rt }: Env): Promise<BenchResult[]> {
  gc();
  await new Promise((r) => setTimeout(r, 100));
  gc();
  const before = process.memoryUsage();
  const ids: string[] = [];
  const t0 = now();
  for (let i = 0; i < IDLE; i += 10) {
    const opened = await Promise.all(Array.from({ length: 10 }, () => rt.call('terminal.open', {})));
    for (const o of opened) ids.push(String(ok(o)['terminalId']));
  }
  const openMs = now() - t0;
  await new Promise((r) => setTimeout(r, 500));
  gc();
  const after = process.memoryUsage();
  await Promise.all(ids.map((terminalId) => rt.call('terminal.close', { terminalId, graceMs: 0 })));
  const rss = (after.rss - before.rss) / MiB;
  const heap = (after.heapUsed + after.external - before.heapUsed - before.external) / MiB;
  return [
    {
      name: `${IDLE} idle terminals through the host: runtime RSS growth (shells excluded)`,
      value: rss,
      unit: 'MiB',
      note:
        `${((rss * 1024) / IDLE).toFixed(0)} KiB/terminal; JS heap+external +${heap.toFixed(1)} MiB; ` +
        `total RSS ${(after.rss / MiB).toFixed(0)} MiB; opened in ${openMs.toFixed(0)} ms (10 at a time)`,
    },
  ];
}

/** exec "true" round trip over NATS vs raw node-pty, interleaved, one terminal each. */
async function execBench({ rt }: Env, rcPath: string, trackShell: boolean): Promise<BenchResult> {
  const { terminalId } = ok(await rt.call('terminal.open', {}));
  const raw = rawShell(rcPath);
  await raw.waitFor(MARK_B);
  // Warm-up: JIT, first snapshot.
  for (let i = 0; i < 20; i++) {
    ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
    raw.pty.write('true\r');
    await raw.waitFor(MARK_D);
    await raw.waitFor(MARK_B);
  }
  const ours: number[] = [];
  const base: number[] = [];
  for (let i = 0; i < EXECS; i++) {
    let t = now();
    raw.pty.write('true\r');
    await raw.waitFor(MARK_D);
    base.push(now() - t);
    await raw.waitFor(MARK_B);
    t = now();
    const r = ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
    ours.push(now() - t);
    if (r['exitCode'] !== 0) throw new Error(`exec true: ${JSON.stringify(r)}`);
  }
  raw.pty.kill('SIGKILL');
  ok(await rt.call('terminal.close', { terminalId, graceMs: 0 }));
  const v = percentile(ours, 50);
  const b = percentile(base, 50);
  return {
    name: `exec "true" round trip over NATS p50, ${label(trackShell)}`,
    value: v,
    unit: 'ms',
    baseline: b,
    ratio: v / b,
    target: '≤ 1.5× (latency ratio, ours/raw)',
    met: v / b <= 1.5,
    note:
      `p99 ${percentile(ours, 99).toFixed(2)} ms vs raw ` +
      `${percentile(base, 99).toFixed(2)} ms; ${EXECS} sequential calls`,
  };
}

/** 8 agents (agent.spawn), each with its own terminal, 100 commands each, all at once. */
async function concurrentBench({ rt }: Env, trackShell: boolean, round: number): Promise<BenchResult[]> {
  const agents: Array<{ agentId: string; terminalId: string }> = [];
  for (let a = 0; a < AGENTS; a++) {
    const { agentId } = ok(await rt.call('agent.spawn', { label: `bench ${round}-${a}` }));
    const { terminalId } = ok(await rt.call('terminal.open', {}, { agentId }));
    agents.push({ agentId, terminalId });
  }
  const lat: number[] = [];
  let failed = 0;
  const t0 = now();
  await Promise.all(
    agents.map(async ({ agentId, terminalId }) => {
      for (let i = 0; i < PER_AGENT; i++) {
        const s = now();
        const r = await rt.call('terminal.exec', { terminalId, command: i % 2 ? 'echo x' : 'true' }, { agentId });
        lat.push(now() - s);
        if (!r.ok || r['exitCode'] !== 0) failed++;
      }
    }),
  );
  const wall = now() - t0;
  for (const { agentId, terminalId } of agents)
    ok(await rt.call('terminal.close', { terminalId, graceMs: 0 }, { agentId }));
  const p50 = percentile(lat, 50);
  const p99 = percentile(lat, 99);
  const mean = lat.reduce((s, x) => s + x, 0) / lat.length;
  const n = AGENTS * PER_AGENT;
  return [
    {
      name: `${AGENTS} agents × ${PER_AGENT} commands concurrently over NATS, exec p50, ${label(trackShell)}`,
      value: p50,
      unit: 'ms',
      target: '≤ 12 ms (prior Rust impl: 120 ms avg with 8 agents; aim 10× better)',
      met: p50 <= 12,
      note: `mean ${mean.toFixed(2)} ms; ${(n / (wall / 1000)).toFixed(0)} commands/s; ${failed} failed`,
    },
    {
      name: `${AGENTS} agents × ${PER_AGENT} commands concurrently over NATS, exec p99, ${label(trackShell)}`,
      value: p99,
      unit: 'ms',
      note: `max ${Math.max(...lat).toFixed(1)} ms`,
    },
  ];
}

/** 50 MB flood: raw node-pty reading it vs a NATS subscriber of the terminal's output subject. */
async function floodBench({ rt, nats }: Env, rcPath: string): Promise<BenchResult[]> {
  const raw = rawShell(rcPath);
  await raw.waitFor(MARK_B);
  const rawStart = raw.bytes();
  let t = now();
  raw.pty.write(`${FLOOD}\r`);
  await raw.waitFor(MARK_D);
  const rawMs = now() - t;
  const rawBytes = raw.bytes() - rawStart;
  raw.pty.kill('SIGKILL');

  const { terminalId } = ok(await rt.call('terminal.open', {}));
  const nc = await connect({ servers: nats.url });
  let received = 0;
  let chunks = 0;
  let lastAt = now();
  const dec = new TextDecoder();
  const sub = nc.subscribe(`skein.out.main.${terminalId}`, {
    callback: (_e, m) => {
      const fact = JSON.parse(dec.decode(m.data)) as { data: { data: string } };
      received += Buffer.byteLength(fact.data.data, 'utf8');
      chunks++;
      lastAt = now();
    },
  });
  await nc.flush();
  gc();
  const rssBefore = process.memoryUsage().rss;
  const sampler = rssSampler(50);
  let peak = 0;
  let oursMs = 0;
  let reply: Record<string, any>;
  try {
    t = now();
    reply = ok(await rt.call('terminal.exec', { terminalId, command: FLOOD, maxBytes: 4096, timeoutMs: 120_000 }));
    const replyMs = now() - t;
    // The subscriber may still be behind the reply: wait until it has the whole flood (or goes quiet for 5 s).
    while (received < FLOOD_BYTES && now() - lastAt < 5_000) await new Promise((r) => setTimeout(r, 5));
    oursMs = Math.max(replyMs, lastAt - t);
  } finally {
    peak = sampler.stop();
    sub.unsubscribe();
    await nc.close();
  }
  await rt.call('terminal.close', { terminalId, graceMs: 0 });
  const v = FLOOD_BYTES / 1e6 / (oursMs / 1000);
  const b = FLOOD_BYTES / 1e6 / (rawMs / 1000);
  return [
    {
      name: 'flood 50 MB through the host to a NATS subscriber of skein.out',
      value: v,
      unit: 'MB/s',
      baseline: b,
      ratio: v / b,
      target: '≥ 0.8×',
      met: v / b >= 0.8 && received >= FLOOD_BYTES,
      note:
        `exit ${reply['exitCode']}; subscriber got ${received} bytes in ${chunks} facts ` +
        `(raw read ${rawBytes}); ${oursMs.toFixed(0)} ms vs raw ${rawMs.toFixed(0)} ms`,
    },
    {
      name: 'peak RSS of this process (runtime + subscriber) during the flood',
      value: peak / MiB,
      unit: 'MiB',
      note: `+${((peak - rssBefore) / MiB).toFixed(0)} MiB over the ${(rssBefore / MiB).toFixed(0)} MiB before`,
    },
  ];
}

export const bench: Bench = {
  name: 'terminal over NATS',
  async run() {
    const rc = writeRcFile();
    const results: BenchResult[] = [];
    const phase = (name: string) => process.stderr.write(`  ${name}…\n`);
    try {
      await withRuntime(true, async (env) => {
        phase('idle terminals');
        results.push(...(await idleBench(env)));
        phase('exec round trip (trackShell on)');
        results.push(await execBench(env, rc.path, true));
        phase('8 agents × 100 (trackShell on)');
        results.push(...(await concurrentBench(env, true, 0)));
        phase('flood');
        results.push(...(await floodBench(env, rc.path)));
      });
      await withRuntime(false, async (env) => {
        phase('exec round trip (trackShell off)');
        results.push(await execBench(env, rc.path, false));
        phase('8 agents × 100 (trackShell off)');
        results.push(...(await concurrentBench(env, false, 1)));
      });
    } finally {
      rc.remove();
    }
    return results;
  },
};
