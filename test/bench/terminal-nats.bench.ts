/**
 * @module
 * Terminal output benchmarks over NATS through the host (issues 3, 15): a
 * 100 MB flood read by a NATS subscriber of `skein.out.<agent>.<tid>` against
 * a raw node-pty read of the same flood (bash + skein's rc, OSC 133 marks
 * found by hand) in the same run, with the peak RSS of the runtime; and
 * runtime RSS for 100 idle terminals. Exec round trips are in exec.bench.ts.
 *
 * The flood's runtime is `skein up` in its own process (the bundle, as a user
 * runs it), so its peak RSS (the kernel's VmHWM) is the runtime's alone: not
 * the subscriber's, nor what earlier benches left in this process.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { decodeReply, encode } from '../../infra/transport/codec.ts';
import { writeRcFile } from '../../actors/terminal/shell-integration.ts';
import { cleanEnv, startCli } from '../support/cli.ts';
import { startTestNats, type TestNats } from '../support/nats-server.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { MARK_B, MARK_D, MiB, gc, now, ok, rawShell } from './bench-pty.ts';
import { SMOKE } from './types.ts';
import { scaled, type Bench, type BenchResult } from './types.ts';

const FLOOD_BYTES = scaled(100_000_000, 1_000_000);
const FLOOD = `head -c ${FLOOD_BYTES} /dev/zero | tr '\\0' a`;
const IDLE = scaled(100, 4);

type Env = { nats: TestNats; rt: TestRuntime };

async function withRuntime<T>(fn: (env: Env) => Promise<T>): Promise<T> {
  const nats = await startTestNats();
  let rt: TestRuntime | undefined;
  try {
    rt = await startTestRuntime({
      mode: 'networked',
      natsUrl: nats.url,
      policy: { default: 'allow' },
      flags: {
        log: { outputMaxBytes: 2 ** 30 } as never,
        domains: { terminal: { maxPerAgent: IDLE + 20, maxPerHost: 256 } },
      },
    });
    return await fn({ nats, rt });
  } finally {
    await rt?.dispose();
    await nats.dispose();
  }
}

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

/** One line of /proc/<pid>/status in MiB (VmRSS: resident now; VmHWM: the peak so far). */
function procMiB(pid: number, key: 'VmRSS' | 'VmHWM'): number {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`${key}:\\s+(\\d+) kB`));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** CPU time (user + system) a process has used so far, in ms. */
function procCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/** A command to the runtime over NATS as the root agent; throws on an error reply. */
async function request(nc: NatsConnection, type: string, data: unknown, timeoutMs = 30_000) {
  const m = await nc.request(`skein.cmd.main.${type}`, encode({ data }), { timeout: timeoutMs });
  return ok(decodeReply(type, m.data));
}

/**
 * `skein up --nats` in a temp dir (policy: allow), from the bundle (rebuilt first in a full run, as
 * `npm install` would; the smoke run takes what is there, else tsx). Resolves once it serves.
 */
async function startRuntimeProcess(natsUrl: string) {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  if (!SMOKE) execFileSync(process.execPath, [join(root, 'infra/cli/build.mjs')], { cwd: root, stdio: 'ignore' });
  const dir = mkdtempSync(join(tmpdir(), 'skein-flood-'));
  const ws = join(dir, 'ws');
  mkdirSync(join(ws, '.skein'), { recursive: true });
  writeFileSync(join(ws, '.skein', 'policy.json'), JSON.stringify({ default: 'allow' }));
  writeFileSync(join(ws, '.skein', 'config.json'), JSON.stringify({ log: { outputMaxBytes: 2 ** 30 } }));
  const up = startCli(['up', '--nats', natsUrl, '--data', join(dir, 'data'), '--workspace', ws], {
    cwd: ws,
    env: cleanEnv(),
  });
  try {
    await up.waitFor(/mode networked/, 60_000);
  } catch (err) {
    up.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    pid: up.child.pid!,
    async dispose() {
      if (up.child.exitCode === null) {
        up.child.kill('SIGTERM');
        await up.exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** 100 MB flood: raw node-pty reading it vs a NATS subscriber of the output subject of a `skein up` terminal. */
async function floodBench(rcPath: string): Promise<BenchResult[]> {
  const raw = rawShell(rcPath);
  await raw.waitFor(MARK_B);
  const rawStart = raw.bytes();
  const rawCpu = process.cpuUsage();
  let t = now();
  raw.pty.write(`${FLOOD}\r`);
  await raw.waitFor(MARK_D);
  const rawMs = now() - t;
  const { user, system } = process.cpuUsage(rawCpu);
  const rawCpuMs = (user + system) / 1000;
  const rawBytes = raw.bytes() - rawStart;
  raw.pty.kill('SIGKILL');

  const nats = await startTestNats();
  const runtime = await startRuntimeProcess(nats.url).catch(async (err: unknown) => {
    await nats.dispose();
    throw err;
  });
  const nc = await connect({ servers: nats.url });
  let received = 0;
  let chunks = 0;
  let lastAt = now();
  let reply: Record<string, any> = {};
  let oursMs = 0;
  let rssBefore = 0;
  let peak = 0;
  let runtimeCpuMs = 0;
  let natsCpuMs = 0;
  try {
    const { terminalId } = await request(nc, 'terminal.open', {});
    const dec = new TextDecoder();
    nc.subscribe(`skein.out.main.${terminalId}`, {
      callback: (_e, m) => {
        const fact = JSON.parse(dec.decode(m.data)) as { data: { data: string } };
        received += Buffer.byteLength(fact.data.data, 'utf8');
        chunks++;
        lastAt = now();
      },
    });
    await nc.flush();
    rssBefore = procMiB(runtime.pid, 'VmRSS');
    const cpu0 = procCpuMs(runtime.pid);
    const natsCpu0 = procCpuMs(nats.pid);
    t = now();
    reply = await request(
      nc,
      'terminal.exec',
      { terminalId, command: FLOOD, maxBytes: 4096, timeoutMs: 170_000 },
      180_000,
    );
    const replyMs = now() - t;
    // The subscriber may still be behind the reply: wait until it has the whole flood (or goes quiet for 5 s).
    while (received < FLOOD_BYTES && now() - lastAt < 5_000) await new Promise((r) => setTimeout(r, 5));
    oursMs = Math.max(replyMs, lastAt - t);
    peak = procMiB(runtime.pid, 'VmHWM');
    runtimeCpuMs = procCpuMs(runtime.pid) - cpu0;
    natsCpuMs = procCpuMs(nats.pid) - natsCpu0;
    await request(nc, 'terminal.close', { terminalId, graceMs: 0 });
  } finally {
    await nc.close();
    await runtime.dispose();
    await nats.dispose();
  }
  const v = FLOOD_BYTES / 1e6 / (oursMs / 1000);
  const b = FLOOD_BYTES / 1e6 / (rawMs / 1000);
  return [
    {
      name: `flood ${FLOOD_BYTES / 1e6} MB through the host to a NATS subscriber of skein.out`,
      value: v,
      unit: 'MB/s',
      baseline: b,
      ratio: v / b,
      target: '≥ 0.8×',
      met: v / b >= 0.8 && received >= FLOOD_BYTES,
      note:
        `exit ${reply['exitCode']}; subscriber got ${received} bytes in ${chunks} facts ` +
        `(raw read ${rawBytes}); ${oursMs.toFixed(0)} ms vs raw ${rawMs.toFixed(0)} ms; CPU: runtime ` +
        `${runtimeCpuMs.toFixed(0)} ms, nats-server ${natsCpuMs.toFixed(0)} ms, raw reader ${rawCpuMs.toFixed(0)} ms`,
    },
    {
      name: `peak RSS of the runtime (skein up, its own process) during the ${FLOOD_BYTES / 1e6} MB flood`,
      value: peak,
      unit: 'MiB',
      target: '< 200 MiB',
      met: peak < 200,
      note: `VmHWM; ${rssBefore.toFixed(0)} MiB resident before the flood`,
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
      phase('flood');
      results.push(...(await floodBench(rc.path)));
      await withRuntime(async (env) => {
        phase('idle terminals');
        results.push(...(await idleBench(env)));
      });
    } finally {
      rc.remove();
    }
    return results;
  },
};
