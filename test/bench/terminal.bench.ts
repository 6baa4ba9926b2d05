/**
 * @module
 * Terminal benchmarks, in-process (the lead adds the over-NATS variants):
 * open → prompt ready, exec "true" round trip, 8 terminals × 100 commands,
 * throughput of a 50 MB flood, and runtime RSS for 100 idle terminals. Each
 * against raw node-pty doing the same work with the same shell and rc file.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger } from '../../infra/kernel/log.ts';
import { which } from '../../actors/terminal/pty-spawn.ts';
import { writeRcFile } from '../../actors/terminal/shell-integration.ts';
import { TerminalManager } from '../../actors/terminal/terminal-manager.ts';
import { gc, MARK_B, MARK_D, MiB, now, rawShell, rssSampler } from './bench-pty.ts';
import { percentile, type Bench, type BenchResult } from './types.ts';

const FLOOD = "head -c 50000000 /dev/zero | tr '\\0' a";
const FLOOD_BYTES = 50_000_000;

/**
 * The per-agent limits: the defaults (a pids and a memory cgroup per agent where the machine has the
 * hierarchies), or none (every bound 0).
 */
function manager(limits: 'default' | 'none', sandbox?: { scratchDir: string }): TerminalManager {
  const none = { maxProcessesPerAgent: 0, maxMemoryPerAgent: 0, maxMemoryAllAgents: 0 };
  return new TerminalManager({
    config: { maxPerAgent: 200, maxPerHost: 200, ...(limits === 'none' ? none : {}), sandbox: !!sandbox },
    log: createLogger({ level: 'silent' }),
    emit: async () => {},
    emitOutput: async () => {},
    ...(sandbox ? { scratchDir: sandbox.scratchDir } : {}),
  });
}

/**
 * Opens per kind. An open with the limits on is bimodal (it waits for all of a cgroup grace period or for the part
 * that does not overlap the shell's start, join-cost.ts): 15 samples moved its p50 by 3 ms between runs.
 */
const OPENS = 41;

async function openBench(rc: { path: string }): Promise<BenchResult[]> {
  const m = manager('default');
  const unbounded = manager('none');
  // The runtime's default when bwrap is installed: the shell in its sandbox (sandbox-args.ts).
  const home = mkdtempSync(join(tmpdir(), 'skein-bench-sandbox-'));
  const workspace = join(home, 'ws');
  mkdirSync(workspace);
  const boxed = which('bwrap') ? manager('default', { scratchDir: join(home, 'scratch') }) : undefined;
  const ours: number[] = [];
  const off: number[] = [];
  const inBox: number[] = [];
  const raw: number[] = [];
  for (let i = 0; i < OPENS; i++) {
    let t = now();
    const { pty, waitFor } = rawShell(rc.path);
    await waitFor(MARK_B);
    raw.push(now() - t);
    pty.kill('SIGKILL');
    for (const [into, mgr] of [
      [ours, m],
      [off, unbounded],
    ] as const) {
      t = now();
      const o = await mgr.open('bench', { cwd: process.cwd() });
      into.push(now() - t);
      await mgr.close('bench', { terminalId: o.terminalId, graceMs: 0 });
    }
  }
  // Apart, after the rest: a sandbox's end (bwrap's exit, its scratch removed in a child) must not land in the
  // samples above. Against raw samples of its own, taken between.
  const boxRaw: number[] = [];
  for (let i = 0; boxed && i < OPENS; i++) {
    let t = now();
    const { pty, waitFor } = rawShell(rc.path);
    await waitFor(MARK_B);
    boxRaw.push(now() - t);
    pty.kill('SIGKILL');
    t = now();
    const o = await boxed.open('bench', { cwd: workspace }, { workspace });
    inBox.push(now() - t);
    await boxed.close('bench', { terminalId: o.terminalId, graceMs: 0 });
  }
  await m.shutdown();
  await unbounded.shutdown();
  await boxed?.shutdown();
  rmSync(home, { recursive: true, force: true });
  const v = percentile(ours, 50);
  const b = percentile(raw, 50);
  const o = percentile(off, 50);
  return [
    {
      name: 'open → prompt ready p50',
      value: v,
      unit: 'ms',
      baseline: b,
      ratio: v / b,
      target: '≤ 1.3×',
      met: v / b <= 1.3,
      note:
        'ratio = ours/raw (lower is better); per-agent limits ' +
        `${m.cgroups ? 'on (the shell joins a pids and a memory cgroup)' : 'off'}, ${o.toFixed(2)} ms without them`,
    },
    {
      name: 'open → prompt ready p50, per-agent limits off (maxProcessesPerAgent, maxMemory* 0)',
      value: o,
      unit: 'ms',
      baseline: b,
      ratio: o / b,
      note: 'diagnostic: what the cgroup joins cost (the kernel moves the process: an RCU grace period)',
    },
    ...(boxed ? [sandboxedOpen(percentile(inBox, 50), percentile(boxRaw, 50))] : []),
  ];
}

/** The sandboxed open against the raw shell: bwrap, its namespaces, mounts and kernel limits on top. */
function sandboxedOpen(v: number, b: number): BenchResult {
  return {
    name: 'open → prompt ready p50, sandboxed (the default where bwrap is installed), limits on',
    value: v,
    unit: 'ms',
    baseline: b,
    ratio: v / b,
    note: 'diagnostic: ratio = ours/raw (lower is better); what the sandbox adds to an open',
  };
}

async function execBench(rc: { path: string }): Promise<BenchResult[]> {
  const m = manager('default');
  const o = await m.open('bench', { cwd: process.cwd() });
  const { pty, waitFor } = rawShell(rc.path);
  await waitFor(MARK_B);
  const ours: number[] = [];
  const raw: number[] = [];
  for (let i = 0; i < 300; i++) {
    let t = now();
    pty.write('true\r');
    await waitFor(MARK_D);
    raw.push(now() - t);
    await waitFor(MARK_B);
    t = now();
    await m.exec('bench', { terminalId: o.terminalId, command: 'true' });
    ours.push(now() - t);
  }
  pty.kill('SIGKILL');
  // 8 terminals × 100 commands at once.
  const terms = await Promise.all(Array.from({ length: 8 }, () => m.open('bench', { cwd: process.cwd() })));
  const lat: number[] = [];
  const t0 = now();
  await Promise.all(
    terms.map(async (t) => {
      for (let i = 0; i < 100; i++) {
        const s = now();
        await m.exec('bench', { terminalId: t.terminalId, command: 'true' });
        lat.push(now() - s);
      }
    }),
  );
  const wall = now() - t0;
  await m.shutdown();
  const v = percentile(ours, 50);
  const b = percentile(raw, 50);
  return [
    {
      name: 'exec "true" round trip p50 (in-process)',
      value: v,
      unit: 'ms',
      baseline: b,
      ratio: v / b,
      target: '≤ 1.5× (over NATS: lead)',
      met: v / b <= 1.5,
      note: `p99 ${percentile(ours, 99).toFixed(2)} ms vs raw ${percentile(raw, 99).toFixed(2)} ms`,
    },
    {
      name: '8 terminals × 100 "true" concurrently p50 (in-process)',
      value: percentile(lat, 50),
      unit: 'ms',
      note:
        `p99 ${percentile(lat, 99).toFixed(2)} ms; ` +
        `${(800 / (wall / 1000)).toFixed(0)} commands/s; prior Rust impl: 120 ms avg`,
    },
  ];
}

/** Flood rounds, raw and ours alternated (which goes first swaps each round): one pair swung 0.67-1.0×. */
const FLOOD_ROUNDS = 3;

async function floodBench(rc: { path: string }): Promise<BenchResult[]> {
  const rawFlood = async () => {
    const { pty, waitFor } = rawShell(rc.path);
    await waitFor(MARK_B);
    const t = now();
    pty.write(`${FLOOD}\r`);
    await waitFor(MARK_D);
    const ms = now() - t;
    pty.kill('SIGKILL');
    return ms;
  };
  const m = manager('default');
  const o = await m.open('bench', { cwd: process.cwd() });
  const sampler = rssSampler(50);
  let exitCode: number | null | undefined;
  const ourFlood = async () => {
    const t = now();
    const r = await m.exec('bench', { terminalId: o.terminalId, command: FLOOD, maxBytes: 4096 });
    exitCode = r.exitCode;
    return now() - t;
  };
  const rounds: Array<{ raw: number; ours: number }> = [];
  for (let i = 0; i < FLOOD_ROUNDS; i++) {
    if (i % 2) {
      const ours = await ourFlood();
      rounds.push({ ours, raw: await rawFlood() });
    } else {
      const raw = await rawFlood();
      rounds.push({ raw, ours: await ourFlood() });
    }
  }
  const peak = sampler.stop();
  const pauses = m.get(o.terminalId)!.output.pauses;
  await m.shutdown();
  const mbps = (ms: number) => FLOOD_BYTES / 1e6 / (ms / 1000);
  const median = [...rounds].sort((a, b) => a.raw / a.ours - b.raw / b.ours)[Math.floor(rounds.length / 2)]!;
  const v = mbps(median.ours);
  const b = mbps(median.raw);
  const each = rounds.map((r) => `${(r.raw / r.ours).toFixed(2)}×`).join(' / ');
  return [
    {
      name: `flood 50 MB through the manager (no-op emitOutput, median of ${FLOOD_ROUNDS} alternated)`,
      value: v,
      unit: 'MB/s',
      baseline: b,
      ratio: v / b,
      target: '≥ 0.8×',
      met: v / b >= 0.8,
      note: `rounds ${each}; exit ${exitCode}; pty paused ${pauses}×`,
    },
    { name: `peak runtime RSS during ${FLOOD_ROUNDS} floods`, value: peak / MiB, unit: 'MiB' },
  ];
}

/** Runs first, before the flood inflates the heap. */
async function idleBench(): Promise<BenchResult[]> {
  const m = manager('default');
  gc();
  const before = process.memoryUsage();
  for (let i = 0; i < 100; i += 10) {
    await Promise.all(Array.from({ length: 10 }, () => m.open('bench', { cwd: process.cwd() })));
  }
  await new Promise((r) => setTimeout(r, 200));
  gc();
  const after = process.memoryUsage();
  await m.shutdown();
  const rss = (after.rss - before.rss) / MiB;
  const heap = (after.heapUsed + after.external - before.heapUsed - before.external) / MiB;
  return [
    {
      name: '100 idle terminals: runtime RSS growth (shells excluded)',
      value: rss,
      unit: 'MiB',
      note: `total RSS ${(after.rss / MiB).toFixed(0)} MiB`,
    },
    {
      name: '100 idle terminals: JS heap + external growth',
      value: heap,
      unit: 'MiB',
      note: `${((heap * 1024) / 100).toFixed(0)} KiB per terminal (mostly the headless xterm)`,
    },
  ];
}

export const bench: Bench = {
  name: 'terminal',
  async run() {
    const rc = writeRcFile();
    try {
      return [...(await idleBench()), ...(await openBench(rc)), ...(await execBench(rc)), ...(await floodBench(rc))];
    } finally {
      rc.remove();
    }
  },
};
