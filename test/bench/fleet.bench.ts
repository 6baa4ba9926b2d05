/**
 * @module
 * Fleet benchmark (issue 6): 32 scripted sub-agents, each running 10 cheap
 * commands and 5 file steps (a write, then 4 fuzzy edits, one with
 * indentation drift), run in parallel by `runFleet` against an in-process
 * networked runtime, vs ONE agent running the same 32×15 tool calls in order
 * (fresh runtime of the same type), alternated PAIRS times (the ratio is the
 * median). Also: p99 command latency under the first fleet, and `review.list`
 * at the root over 32 agents × 5 changed files.
 * `SKEIN_BENCH_LIMITS=off` turns the per-agent cgroup limits off (a diagnostic: what they cost the fleet).
 */
import { FleetPlan, type FleetAgent, type FleetStep } from '../../schemas/index.ts';
import { runFleet, type AgentOutcome, type FleetOutcome } from '../../infra/agent/fleet.ts';
import { startTestNats } from '../support/nats-server.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { now, ok } from './bench-pty.ts';
import { percentile, scaled, type Bench, type BenchResult } from './types.ts';

const AGENTS = scaled(32, 2);
const NO_LIMITS =
  process.env['SKEIN_BENCH_LIMITS'] === 'off'
    ? { terminal: { maxProcessesPerAgent: 0, maxMemoryPerAgent: 0, maxMemoryAllAgents: 0 } }
    : {};
const REVIEW_CALLS = scaled(25, 2);
/** Fleet and one-agent runs, alternated (issue 15: the ratio is their median). */
const PAIRS = scaled(3, 1);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function source(i: number): string {
  return [
    `def handler_${i}(x):`,
    '    if x > 0:',
    '        return x * 2',
    '    return 0',
    '',
    '',
    `class Box${i}:`,
    '    def __init__(self):',
    '        self.items = []',
    '',
    '    def add(self, item):',
    '        self.items.append(item)',
    '',
  ].join('\n');
}

/**
 * One agent's 15 steps: 10 commands (4 of them write a file through the shell, so the
 * agent changes 5 distinct files in all), a file.write, then 4 edits of that file.
 */
export function steps(i: number): FleetStep[] {
  const p = (k: number) => `a${String(i).padStart(2, '0')}-f${k}`;
  const main = `${p(0)}.py`;
  return [
    { write: { path: main, content: source(i) } },
    { exec: 'true', expectExit: 0 },
    { exec: `echo hello ${i}`, expectExit: 0 },
    { edit: { path: main, edits: [{ oldText: '        return x * 2', newText: '        return x * 3' }] } },
    { exec: 'ls', expectExit: 0 },
    { exec: `echo one > ${p(1)}.txt`, expectExit: 0 },
    { exec: 'true', expectExit: 0 },
    // Indentation drift: the agent quotes the method at 2-space indent, without the class level.
    {
      edit: {
        path: main,
        edits: [
          {
            oldText: 'def add(self, item):\n  self.items.append(item)',
            newText: 'def add(self, item):\n  self.items.append(item)\n  return len(self.items)',
          },
        ],
      },
    },
    { exec: `echo two > ${p(2)}.txt`, expectExit: 0 },
    // Plain ls: with -l it stats every entry and fails (exit 1) when another agent's atomic-write temp file vanishes
    // in between.
    { exec: 'ls', expectExit: 0 },
    { edit: { path: main, edits: [{ oldText: '        self.items = []', newText: '        self.items = list()' }] } },
    { exec: `echo three > ${p(3)}.txt`, expectExit: 0 },
    { exec: 'echo done', expectExit: 0 },
    { exec: `echo four > ${p(4)}.txt`, expectExit: 0 },
    { edit: { path: main, edits: [{ oldText: '    return 0', newText: '    return -1' }] } },
  ];
}

type Run = { wallMs: number; outcome: FleetOutcome; failures: string[]; rt: TestRuntime };

function flatten(agents: AgentOutcome[]): AgentOutcome[] {
  return agents.flatMap((a) => [a, ...flatten(a.children)]);
}

/** Starts a fresh networked runtime, runs the plan, then `after` on it; always stops both. */
async function runPlan<T>(agents: FleetAgent[], trackShell: boolean, after: (run: Run) => Promise<T>): Promise<T> {
  const nats = await startTestNats();
  let rt: TestRuntime | undefined;
  try {
    rt = await startTestRuntime({
      mode: 'networked',
      natsUrl: nats.url,
      policy: { default: 'allow' },
      flags: { domains: { review: { trackShell }, ...NO_LIMITS } },
    });
    const plan = FleetPlan.parse({ agents });
    const t0 = now();
    const outcome = await runFleet(plan, { bus: rt.bus, root: 'main', timeoutMs: 120_000 });
    const wallMs = now() - t0;
    const failures = flatten(outcome.agents).flatMap((a) => [
      ...(a.status === 'completed' ? [] : [`${a.agentId}: ${a.status}`]),
      ...a.steps.filter((s) => !s.ok).map((s) => `${a.agentId} ${s.step}: ${s.summary}`),
    ]);
    return await after({ wallMs, outcome, failures, rt });
  } finally {
    await rt?.dispose();
    await nats.dispose();
  }
}

/**
 * `review.list` at the root after a fleet (every agent's 5 files), timed REVIEW_CALLS times, and how the files
 * are attributed: each agent's own log (no descendants) should hold only its own files.
 */
async function reviewListing(rt: TestRuntime, outcome: FleetOutcome) {
  const first = ok(await rt.call('review.list', {}));
  const files = (first['files'] as unknown[]).length;
  const times: number[] = [];
  for (let i = 0; i < REVIEW_CALLS; i++) {
    const t = now();
    ok(await rt.call('review.list', {}));
    times.push(now() - t);
  }
  let foreign = 0;
  let own = 0;
  for (const a of outcome.agents) {
    const mine = ok(await rt.call('review.list', { agentId: a.agentId, includeDescendants: false }));
    const prefix = `a${String(Number(a.label.split(' ')[1])).padStart(2, '0')}-`;
    for (const f of mine['files'] as Array<{ path: string }>) {
      if (f.path.split('/').pop()!.startsWith(prefix)) own++;
      else foreign++;
    }
  }
  return { files, times, own, foreign };
}

/** Fuzzy-match report of the drifted edit, from its reply. */
function driftNote(outcome: FleetOutcome): string {
  const step = outcome.agents[0]?.steps.find(
    (s) => s.step.startsWith('edit') && /add/.test(JSON.stringify(s.reply ?? {})),
  );
  return step ? step.summary.slice(0, 160) : 'n/a';
}

export const bench: Bench = {
  name: 'fleet',
  async run() {
    const results: BenchResult[] = [];
    const fleetAgents: FleetAgent[] = Array.from({ length: AGENTS }, (_, i) => ({
      label: `worker ${i}`,
      steps: steps(i),
    }));
    const soloAgents: FleetAgent[] = [
      { label: 'solo', steps: Array.from({ length: AGENTS }, (_, i) => steps(i)).flat() },
    ];

    // Untimed: the first runtime of the process pays for compiling the code paths (JIT, grammars, the shell
    // helper): measured first, the tracking-on fleet carried that alone and read 4× the same fleet without it.
    process.stderr.write('  warm-up (4 agents, untimed)…\n');
    await runPlan(fleetAgents.slice(0, Math.min(4, AGENTS)), true, async () => undefined);
    // The fleet and the one agent alternate, PAIRS times (which goes first swaps each pair), and the ratio is the
    // median of the pairs': the machine drifts between runs seconds apart. Here a new file's inode cost 45-800 µs
    // of CPU depending on how many files were deleted in the minutes before (ext4 without a journal skips
    // recently deleted inodes), and every run deletes its runtime's files as it ends.
    const fleets: Array<{ wallMs: number; outcome: FleetOutcome; failures: string[] }> = [];
    const solos: Array<{ wallMs: number; outcome: FleetOutcome; failures: string[] }> = [];
    let listing: { files: number; times: number[]; own: number; foreign: number } | undefined;
    const runFleetOnce = () =>
      runPlan(fleetAgents, true, async ({ wallMs, outcome, failures, rt }) => {
        fleets.push({ wallMs, outcome, failures });
        listing ??= await reviewListing(rt, outcome);
      });
    const runSoloOnce = () =>
      runPlan(
        soloAgents,
        true,
        async ({ wallMs, outcome, failures }) => void solos.push({ wallMs, outcome, failures }),
      );
    for (let pair = 0; pair < PAIRS; pair++) {
      process.stderr.write(`  fleet of ${AGENTS} and one agent sequentially (pair ${pair + 1} of ${PAIRS})…\n`);
      if (pair % 2 === 0) {
        await runFleetOnce();
        await runSoloOnce();
      } else {
        await runSoloOnce();
        await runFleetOnce();
      }
    }
    const fleet = { ...fleets[0]!, ...listing! };
    process.stderr.write('  the same two without trackShell…\n');
    const fleetOff = await runPlan(fleetAgents, false, async ({ wallMs, failures }) => ({ wallMs, failures }));
    const soloOff = await runPlan(soloAgents, false, async ({ wallMs, failures }) => ({ wallMs, failures }));

    const calls = AGENTS * 15;
    const shares = fleets.map((f, i) => f.wallMs / solos[i]!.wallMs);
    const share = median(shares);
    const failed = [...fleets, ...solos].flatMap((r) => r.failures);
    const fleetMs = median(fleets.map((f) => f.wallMs));
    const soloMs = median(solos.map((f) => f.wallMs));
    results.push({
      name: `fleet of ${AGENTS} agents × 15 tool calls, tracking on: wall time vs one agent sequentially`,
      value: fleetMs,
      unit: 'ms',
      baseline: soloMs,
      ratio: share,
      target: '≤ 0.6× (fleet/sequential, lower is better)',
      met: share <= 0.6 && failed.length === 0,
      note:
        `median of ${PAIRS} alternated pairs (${fleets
          .map((f, i) => `${f.wallMs.toFixed(0)} / ` + `${solos[i]!.wallMs.toFixed(0)} ms, ${shares[i]!.toFixed(2)}×`)
          .join('; ')}); ` +
        `${(calls / (fleetMs / 1000)).toFixed(0)} vs ${(calls / (soloMs / 1000)).toFixed(0)} tool calls/s; ` +
        `failures: ${failed.length}${firstFailure(failed, 1)}; drifted edit: ${driftNote(fleet.outcome)}`,
    });
    const shareOff = fleetOff.wallMs / soloOff.wallMs;
    results.push({
      name: `fleet of ${AGENTS} agents × 15 tool calls, tracking off: wall time vs one agent sequentially`,
      value: fleetOff.wallMs,
      unit: 'ms',
      baseline: soloOff.wallMs,
      ratio: shareOff,
      target: '≤ 0.6× (diagnostic)',
      met: shareOff <= 0.6 && fleetOff.failures.length === 0 && soloOff.failures.length === 0,
      note:
        `failures: fleet ${fleetOff.failures.length}, solo ` +
        `${soloOff.failures.length}${firstFailure([...fleetOff.failures, ...soloOff.failures], 3)}`,
    });
    // The issue's figure is the command p99: terminal.exec round trips. Every call of the run (spawns, opens,
    // writes, edits, closes, completes) is reported beside it, with each type's p99.
    // Every fleet run's calls (and every one-agent run's, for the baseline), PAIRS × 320 commands.
    const byType: Record<string, number[]> = {};
    for (const f of fleets)
      for (const [type, xs] of Object.entries(f.outcome.latenciesByType)) (byType[type] ??= []).push(...xs);
    const lat = byType['terminal.exec'] ?? [];
    const soloLat = solos.flatMap((s) => s.outcome.latenciesByType['terminal.exec'] ?? []);
    const all = fleets.flatMap((f) => f.outcome.latenciesMs);
    const types = Object.entries(byType)
      .map(([type, xs]) => `${type} ${percentile(xs, 99).toFixed(0)} (${xs.length})`)
      .join(', ');
    results.push({
      name: `command (terminal.exec) latency under the fleet p99 (${lat.length} commands)`,
      value: percentile(lat, 99),
      unit: 'ms',
      baseline: percentile(soloLat, 99),
      target: '≤ 150 ms',
      met: percentile(lat, 99) <= 150,
      note:
        `baseline = p99 of the one sequential agent's commands; p50 ${percentile(lat, 50).toFixed(1)} ` +
        `ms vs ${percentile(soloLat, 50).toFixed(1)} ms; max ${Math.max(...lat).toFixed(0)} ms`,
    });
    results.push({
      name: `every call under the fleet p99 (all ${all.length} calls)`,
      value: percentile(all, 99),
      unit: 'ms',
      baseline: percentile(
        solos.flatMap((s) => s.outcome.latenciesMs),
        99,
      ),
      note:
        `diagnostic; p50 ${percentile(all, 50).toFixed(1)} ms, max ${Math.max(...all).toFixed(0)} ms; ` +
        `p99 by type, ms (calls): ${types}`,
    });
    results.push({
      name: `review.list at the root, ${AGENTS} agents × 5 files, p50 of ${REVIEW_CALLS}`,
      value: percentile(fleet.times, 50),
      unit: 'ms',
      note:
        `${fleet.files} files listed; p99 ${percentile(fleet.times, 99).toFixed(1)} ms; per-agent logs ` +
        `(includeDescendants false): ${fleet.own} own files, ${fleet.foreign} other agents' files attributed to it`,
    });
    return results;
  },
};

/** ` (first failures…)` for a bench note, or nothing when there were none. */
function firstFailure(failures: string[], count: number): string {
  return failures.length > 0 ? ` (${failures.slice(0, count).join(' | ')})` : '';
}
