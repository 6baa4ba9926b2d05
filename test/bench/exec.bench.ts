/**
 * @module
 * Exec benchmarks over NATS through the host (issue 15), against the floor
 * measured in the same run, interleaved with our calls: the sum of the p50s
 * of a raw in-process PTY exec with OSC 133 (bash + skein's rc, marks found
 * by hand), one raw NATS request/reply and one acked JetStream publish (file
 * storage, like the event log). Exec "true" with shell side-effect tracking on
 * and off, in a workspace of 5,000 and of 50,000 files; then 8 agents × 100
 * commands at once, tracking on and off alternated over 3 rounds.
 *
 * Each exec figure is read twice on the same runtime: over its first execs (a fresh process, its code still in
 * V8's interpreter and baseline tiers) and again after WARM_EXECS execs, at the steady state a long-lived runtime
 * serves from. The runtime runs ~100 functions once per exec, and each reaches TurboFan only after a few
 * thousand calls: the same runtime's p50 falls from ~2.6 to ~1.3 ms over its first 3,000 execs. The floor is
 * sampled beside both, interleaved, so each ratio compares figures of the same minutes.
 */
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { writeRcFile } from '../../actors/terminal/shell-integration.ts';
import { call } from '../../infra/transport/client.ts';
import type { TestRuntime } from '../support/runtime.ts';
import { benchRuntime, fillWorkspace } from './bench-runtime.ts';
import { MARK_B, MARK_D, now, ok, rawShell } from './bench-pty.ts';
import { percentile, scaled, type Bench, type BenchResult } from './types.ts';

const AGENTS = scaled(8, 2);
const PER_AGENT = scaled(100, 5);
/** Rounds of the concurrent run per mode, tracking on and off alternated. */
const ROUNDS = scaled(3, 1);
/** `SKEIN_BENCH_FILES=5000` runs only that workspace size (the 50,000-file scan alone takes minutes). */
const ONLY_FILES = Number(process.env['SKEIN_BENCH_FILES'] ?? 0);
const WORKSPACES = [scaled(5_000, 50), scaled(50_000, 200)].filter((n) => !ONLY_FILES || n === ONLY_FILES);
const EXECS: Record<number, number> = { [scaled(5_000, 50)]: scaled(200, 5), [scaled(50_000, 200)]: scaled(60, 5) };
/** Execs (each after a floor sample) before the steady-state figure is read. */
const WARM_EXECS = scaled(3_000, 5);

type Env = { natsUrl: string; rt: TestRuntime };

async function withRuntime<T>(trackShell: boolean, fn: (env: Env) => Promise<T>): Promise<T> {
  const rt = await benchRuntime(trackShell);
  try {
    return await fn({ natsUrl: rt.info.natsUrl!, rt });
  } finally {
    await rt.dispose();
  }
}

const label = (trackShell: boolean) => (trackShell ? 'tracking on' : 'tracking off');

/** The floor's three raw parts, one sample of each per call of `sample()`. */
async function floorParts(natsUrl: string, rcPath: string) {
  const server = await connect({ servers: natsUrl });
  server.subscribe('bench.floor.echo', { callback: (_e, m) => void m.respond(m.data) });
  await server.flush();
  const client = await connect({ servers: natsUrl });
  const jsm = await jetstreamManager(client);
  await jsm.streams.add({ name: 'BENCH_FLOOR', subjects: ['bench.floor.js.>'], storage: 'file' as never });
  const js = jetstream(client);
  const raw = rawShell(rcPath);
  await raw.waitFor(MARK_B);
  const body = new TextEncoder().encode(JSON.stringify({ type: 'terminal.command.finished', data: { exitCode: 0 } }));
  let samples = { pty: [] as number[], req: [] as number[], js: [] as number[] };
  let n = 0;
  return {
    /** Starts a new set of kept samples: `floor()` and `note()` read the current set. */
    restart() {
      samples = { pty: [], req: [], js: [] };
    },
    async sample(keep: boolean) {
      let t = now();
      raw.pty.write('true\r');
      await raw.waitFor(MARK_D);
      const pty = now() - t;
      await raw.waitFor(MARK_B);
      t = now();
      await client.request('bench.floor.echo', body, { timeout: 5000 });
      const req = now() - t;
      t = now();
      await js.publish(`bench.floor.js.${n % 64}`, body, { msgID: `floor-${n++}` });
      const pub = now() - t;
      if (keep) {
        samples.pty.push(pty);
        samples.req.push(req);
        samples.js.push(pub);
      }
    },
    floor: () => percentile(samples.pty, 50) + percentile(samples.req, 50) + percentile(samples.js, 50),
    note: () =>
      `floor = PTY ${percentile(samples.pty, 50).toFixed(2)} + NATS req ${percentile(samples.req, 50).toFixed(2)}` +
      ` + JetStream ack ${percentile(samples.js, 50).toFixed(2)} ms`,
    async close() {
      raw.pty.kill('SIGKILL');
      await client.close();
      await server.close();
    },
  };
}

/** One phase's figures: our p50 and p99, and the floor sampled beside them. */
type Phase = { p50: number; p99: number; floor: number; note: string; execs: number };

/**
 * exec "true" round trip p50 vs the floor, interleaved; tracking on or off, in a workspace of `files` files: over
 * the fresh runtime's first execs (`cold`), then again after WARM_EXECS execs (`steady`).
 */
async function execBench({ rt, natsUrl }: Env, rcPath: string, files: number) {
  fillWorkspace(rt.workspace, files);
  const floor = await floorParts(natsUrl, rcPath);
  const { terminalId } = ok(await rt.call('terminal.open', {}));
  // The first exec waits for the workspace's first scan (every file hashed and stored): not timed.
  ok(await call(rt.bus, 'main', 'terminal.exec', { terminalId, command: 'true' }, { timeoutMs: 600_000 }));
  const execs = EXECS[files]!;
  /** `count` execs, each after a floor sample; kept (with the floor's) when `keep`. */
  const run = async (count: number, keep: boolean): Promise<number[]> => {
    const ours: number[] = [];
    for (let i = 0; i < count; i++) {
      await floor.sample(keep);
      const t = now();
      const r = ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
      if (keep) ours.push(now() - t);
      if (r['exitCode'] !== 0) throw new Error(`exec true: ${JSON.stringify(r)}`);
    }
    return ours;
  };
  const phase = (ours: number[]): Phase => ({
    p50: percentile(ours, 50),
    p99: percentile(ours, 99),
    floor: floor.floor(),
    note: floor.note(),
    execs,
  });
  try {
    await run(10, false);
    const cold = phase(await run(execs, true));
    await run(Math.max(0, WARM_EXECS - execs - 10), false);
    floor.restart();
    const steady = phase(await run(execs, true));
    return { cold, steady };
  } finally {
    await floor.close();
    ok(await rt.call('terminal.close', { terminalId, graceMs: 0 }));
  }
}

/** A phase's p50 against the floor sampled beside it. */
function againstFloor(name: string, p: Phase, rest: Pick<BenchResult, 'target' | 'met' | 'note'>): BenchResult {
  return { name, value: p.p50, unit: 'ms', baseline: p.floor, ratio: p.p50 / p.floor, ...rest };
}

/** One round of the concurrent run: its latencies, wall time and failures. */
type Round = { lat: number[]; wall: number; failed: number };

/**
 * 8 agents (agent.spawn), each with its own terminal, 100 commands each, all at once, after one untimed exec in
 * each terminal (its first waits for the workspace's first scan).
 */
async function concurrentRound({ rt }: Env): Promise<Round> {
  const agents: Array<{ agentId: string; terminalId: string }> = [];
  for (let a = 0; a < AGENTS; a++) {
    const { agentId } = ok(await rt.call('agent.spawn', { label: `bench ${a}` }));
    const { terminalId } = ok(await rt.call('terminal.open', {}, { agentId }));
    agents.push({ agentId, terminalId });
    ok(await rt.call('terminal.exec', { terminalId, command: 'true' }, { agentId, timeoutMs: 600_000 }));
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
  return { lat, wall, failed };
}

/**
 * The concurrent run, tracking on and off alternated `ROUNDS` times (each a fresh runtime): whichever ran first
 * paid for what the 50,000-file runs left the machine doing (their workspaces' removal, writeback). Reports the
 * round with the median p50 of each mode.
 */
async function concurrentBench(): Promise<BenchResult[]> {
  const rounds: Record<'on' | 'off', Round[]> = { on: [], off: [] };
  for (let i = 0; i < ROUNDS; i++) {
    for (const trackShell of i % 2 ? [false, true] : [true, false]) {
      rounds[trackShell ? 'on' : 'off'].push(await withRuntime(trackShell, (env) => concurrentRound(env)));
    }
  }
  const results: BenchResult[] = [];
  for (const trackShell of [true, false]) {
    const all = rounds[trackShell ? 'on' : 'off'].map((r) => ({ ...r, p50: percentile(r.lat, 50) }));
    const median = [...all].sort((a, b) => a.p50 - b.p50)[Math.floor(all.length / 2)]!;
    const p99 = percentile(median.lat, 99);
    const failed = all.reduce((n, r) => n + r.failed, 0);
    const n = AGENTS * PER_AGENT;
    const what = `${AGENTS} agents × ${PER_AGENT} commands at once, ${label(trackShell)}`;
    const each = all.map((r) => r.p50.toFixed(2)).join(' / ');
    results.push(
      {
        name: `${what}: exec p50`,
        value: median.p50,
        unit: 'ms',
        target: '≤ 12 ms',
        met: median.p50 <= 12 && failed === 0,
        note:
          `median of ${all.length} rounds alternated with tracking ${trackShell ? 'off' : 'on'} (p50s ${each} ms); ` +
          `${(n / (median.wall / 1000)).toFixed(0)} commands/s; ${failed} failed; seed's Rust runtime: 120 ms mean`,
      },
      { name: `${what}: exec p99`, value: p99, unit: 'ms', target: '≤ 50 ms', met: p99 <= 50 && failed === 0 },
    );
  }
  return results;
}

export const bench: Bench = {
  name: 'exec over NATS',
  async run() {
    const rc = writeRcFile();
    const results: BenchResult[] = [];
    const phase = (name: string) => process.stderr.write(`  ${name}…\n`);
    try {
      for (const files of WORKSPACES) {
        phase(`exec round trip, ${files} files, tracking on`);
        const onRun = await withRuntime(true, (env) => execBench(env, rc.path, files));
        phase(`exec round trip, ${files} files, tracking off`);
        const offRun = await withRuntime(false, (env) => execBench(env, rc.path, files));
        for (const [trackShell, { cold, steady: r }] of [
          [true, onRun],
          [false, offRun],
        ] as const) {
          const name = `exec "true" round trip p50, ${label(trackShell)}, ${files} files`;
          results.push(
            againstFloor(name, r, {
              target: '≤ 1.5× its floor (latency ratio)',
              met: r.p50 / r.floor <= 1.5,
              note: `steady state, after ${WARM_EXECS} execs; p99 ${r.p99.toFixed(2)} ms; ${r.note}; ${r.execs} calls`,
            }),
            againstFloor(`${name}, fresh runtime`, cold, {
              target: 'none: read beside the steady state (a fresh process, its JIT cold)',
              note: `execs 11-${10 + cold.execs} of the runtime; p99 ${cold.p99.toFixed(2)} ms; ${cold.note}`,
            }),
          );
        }
        const [on, off] = [onRun.steady, offRun.steady];
        results.push({
          name: `cost of tracking, ${files} files: exec p50 tracking on / off`,
          value: on.p50,
          unit: 'ms',
          baseline: off.p50,
          ratio: on.p50 / off.p50,
          target: '≤ 1.2× (latency ratio; the target is stated for 50,000 files)',
          met: on.p50 / off.p50 <= 1.2,
          // The two runs are minutes apart on a shared box: each against its own floor too.
          note: `against each run's floor: ${(on.p50 / on.floor / (off.p50 / off.floor)).toFixed(2)}×`,
        });
      }
      phase(`${AGENTS} agents × ${PER_AGENT}, tracking on and off, ${ROUNDS} rounds alternated`);
      results.push(...(await concurrentBench()));
    } finally {
      rc.remove();
    }
    return results;
  },
};
