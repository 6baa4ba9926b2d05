/**
 * @module
 * Main-thread CPU per `terminal.exec` (issue 15), for comparing two versions of the code on a loaded machine:
 * a private nats-server, a networked runtime in this process with shell tracking on in a workspace of
 * `SKEIN_EXEC_FILES` files (default 5,000), then `SKEIN_EXEC_AGENTS` agents (default 8) × `SKEIN_EXEC_N`
 * commands (default 100) at once, after a warm-up. Prints one JSON line: CPU of the main thread
 * (/proc/self/task/<pid>/stat, what the host's event loop spends, the in-process client included) and of the
 * whole process per exec, and the wall p50/p99 of the execs, plus a sequential run's p50. Run under
 * `SKEIN_EXEC_PROFILE=<file.cpuprofile>` to profile the concurrent run alone (`cpu-profile-summary.ts` sums it);
 * `SKEIN_EXEC_TRACK=0` turns shell side-effect tracking off.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { benchRuntime, fillWorkspace, mainThreadMs } from './bench-runtime.ts';
import { now, ok } from './bench-pty.ts';
import { percentile } from './types.ts';

const FILES = Number(process.env['SKEIN_EXEC_FILES'] ?? 5_000);
const AGENTS = Number(process.env['SKEIN_EXEC_AGENTS'] ?? 8);
const N = Number(process.env['SKEIN_EXEC_N'] ?? 100);
const PROFILE = process.env['SKEIN_EXEC_PROFILE'];
const TRACK = process.env['SKEIN_EXEC_TRACK'] !== '0';

function processMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const rt = await benchRuntime(TRACK);
try {
  fillWorkspace(rt.workspace, FILES);
  const agents: Array<{ agentId: string; terminalId: string }> = [];
  for (let a = 0; a < AGENTS; a++) {
    const { agentId } = ok(await rt.call('agent.spawn', { label: `cpu ${a}` }));
    const { terminalId } = ok(await rt.call('terminal.open', {}, { agentId }));
    agents.push({ agentId: String(agentId), terminalId: String(terminalId) });
  }
  const exec = (a: { agentId: string; terminalId: string }, command: string, timeoutMs = 15_000) =>
    rt.call('terminal.exec', { terminalId: a.terminalId, command }, { agentId: a.agentId, timeoutMs });
  // The first exec of each waits for the workspace's first scan; then a warm-up for the JIT.
  for (const a of agents) ok(await exec(a, 'true', 600_000));
  for (let i = 0; i < 20; i++) ok(await exec(agents[0]!, 'true'));

  const seq: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = now();
    ok(await exec(agents[0]!, 'true'));
    seq.push(now() - t);
  }
  const lat: number[] = [];
  const inspector = PROFILE ? new Session() : undefined;
  if (inspector) {
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.setSamplingInterval', { interval: 100 });
    await inspector.post('Profiler.start');
  }
  const main0 = mainThreadMs();
  const proc0 = processMs();
  const t0 = now();
  await Promise.all(
    agents.map(async (a) => {
      for (let i = 0; i < N; i++) {
        const s = now();
        const r = await exec(a, i % 2 ? 'echo x' : 'true');
        lat.push(now() - s);
        if (!r.ok || r['exitCode'] !== 0) throw new Error(`exec: ${JSON.stringify(r)}`);
      }
    }),
  );
  const wall = now() - t0;
  if (inspector && PROFILE) {
    const { profile } = await inspector.post('Profiler.stop');
    writeFileSync(PROFILE, JSON.stringify(profile));
    inspector.disconnect();
  }
  const n = AGENTS * N;
  const out = {
    execs: n,
    mainCpuPerExecMs: +((mainThreadMs() - main0) / n).toFixed(3),
    processCpuPerExecMs: +((processMs() - proc0) / n).toFixed(3),
    p50: +percentile(lat, 50).toFixed(2),
    p99: +percentile(lat, 99).toFixed(2),
    seqP50: +percentile(seq, 50).toFixed(2),
    wallS: +(wall / 1000).toFixed(2),
    load: readFileSync('/proc/loadavg', 'utf8').split(' ')[0],
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  for (const a of agents) await rt.call('terminal.close', { terminalId: a.terminalId, graceMs: 0 }, a);
} finally {
  await rt.dispose();
}
