/**
 * @module
 * Where a fleet's command latency goes (issue 15): the fleet bench's 32 agents × 15 tool calls (agents and step
 * kinds chosen by `SKEIN_FLEET_AGENTS` and `SKEIN_FLEET_KINDS=write,exec,edit`), once per entry of
 * `SKEIN_FLEET_ROUNDS` (default `1,1`: tracking on, twice; `0` is off), each against a fresh networked runtime in
 * this process with its own nats-server; the first round warms the JIT. Prints one JSON line a round: wall time,
 * CPU of the main thread, of the process and of its children (nats-server, the shell helper and the shells it
 * reaped), p50/p99 of all calls and of each command type, and how many took over 150 ms (the p99 target).
 * `SKEIN_FLEET_PROFILE=<file.cpuprofile>` profiles the last round (`cpu-profile-summary.ts` sums it).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { FleetPlan } from '../../schemas/index.ts';
import { runFleet } from '../../infra/agent/fleet.ts';
import { benchRuntime, mainThreadMs, statMs } from './bench-runtime.ts';
import { steps } from './fleet.bench.ts';
import { now } from './bench-pty.ts';
import { percentile } from './types.ts';

const AGENTS = Number(process.env['SKEIN_FLEET_AGENTS'] ?? 32);
const ROUNDS = (process.env['SKEIN_FLEET_ROUNDS'] ?? '1,1').split(',').map((r) => r !== '0');
const KINDS = (process.env['SKEIN_FLEET_KINDS'] ?? 'write,exec,edit').split(',');
const PROFILE = process.env['SKEIN_FLEET_PROFILE'];

/**
 * CPU of this process's children (nats-server, the shell helper) and of what they reaped (the shells), by the
 * child's name, and `all` of them.
 */
function childrenMs(): Record<string, number> {
  const by: Record<string, number> = { all: 0 };
  for (const task of readdirSync('/proc/self/task')) {
    const kids = readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim().split(' ').filter(Boolean);
    for (const pid of kids) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const ms = statMs(stat, true);
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        by[name] = (by[name] ?? 0) + ms;
        by['all']! += ms;
      } catch {
        // gone meanwhile
      }
    }
  }
  return by;
}

/**
 * CPU of each thread of this process (ms, by its rank among the threads, the main thread 0): all are named
 * `node`; V8's platform workers (GC, compilers) come first, libuv's pool (fs, crypto, dns) when first used.
 */
function threadsMs(): Map<string, number> {
  const tids = readdirSync('/proc/self/task')
    .map(Number)
    .sort((a, b) => a - b);
  const out = new Map<string, number>();
  for (const tid of tids) {
    try {
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      out.set(String(tid - process.pid), ns / 1e6);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

for (const [round, track] of ROUNDS.entries()) {
  const rt = await benchRuntime(track);
  try {
    const pick = (i: number) => steps(i).filter((st) => KINDS.some((k) => k in st));
    const plan = FleetPlan.parse({
      agents: Array.from({ length: AGENTS }, (_, i) => ({ label: `w ${i}`, steps: pick(i) })),
    });
    const inspector = PROFILE && round === ROUNDS.length - 1 ? new Session() : undefined;
    if (inspector) {
      inspector.connect();
      await inspector.post('Profiler.enable');
      await inspector.post('Profiler.setSamplingInterval', { interval: 200 });
      await inspector.post('Profiler.start');
    }
    const main0 = mainThreadMs();
    const proc0 = process.cpuUsage();
    const kids0 = childrenMs();
    const threads0 = threadsMs();
    const t0 = now();
    const outcome = await runFleet(plan, { bus: rt.bus, root: 'main', timeoutMs: 120_000 });
    const wall = now() - t0;
    const main = mainThreadMs() - main0;
    const proc = process.cpuUsage(proc0);
    const kidsNow = childrenMs();
    const kids = kidsNow['all']! - kids0['all']!;
    const kidsBy = Object.fromEntries(
      Object.entries(kidsNow)
        .filter(([name]) => name !== 'all')
        .map(([name, ms]) => [name, ms - (kids0[name] ?? 0)]),
    );
    const threads = Object.fromEntries(
      [...threadsMs()]
        .map(([t, ms]) => [t, Math.round(ms - (threads0.get(t) ?? 0))] as const)
        .filter(([, ms]) => ms >= 10),
    );
    if (inspector && PROFILE) {
      const { profile } = await inspector.post('Profiler.stop');
      writeFileSync(PROFILE, JSON.stringify(profile));
      inspector.disconnect();
    }
    const lat = outcome.latenciesMs;
    const types = Object.fromEntries(
      Object.entries(outcome.latenciesByType).map(([t, l]) => [
        t,
        `${l.length} p50 ${percentile(l, 50).toFixed(0)} p99 ${percentile(l, 99).toFixed(0)} ` +
          `>150ms ${l.filter((ms) => ms > 150).length}`,
      ]),
    );
    process.stdout.write(
      `${JSON.stringify({
        round,
        track,
        wallMs: Math.round(wall),
        mainCpuMs: main,
        processCpuMs: Math.round((proc.user + proc.system) / 1000),
        childrenCpuMs: kids,
        children: kidsBy,
        threads,
        p50: +percentile(lat, 50).toFixed(1),
        p99: +percentile(lat, 99).toFixed(1),
        over150: lat.filter((ms) => ms > 150).length,
        calls: lat.length,
        failed: outcome.agents.filter((a) => a.status !== 'completed').length,
        types,
        load: readFileSync('/proc/loadavg', 'utf8').split(' ')[0],
      })}\n`,
    );
  } finally {
    await rt.dispose();
  }
}
