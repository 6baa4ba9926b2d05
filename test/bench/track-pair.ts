/**
 * @module
 * One side of a tracking-cost pair (issue 15): a networked runtime in this process with a private nats-server,
 * shell tracking on unless `SKEIN_TRACK=0`, a workspace of `SKEIN_TRACK_FILES` files (default 50,000; 100 a
 * directory, as the exec bench fills it), then `SKEIN_TRACK_N` sequential `exec true` (default 60, after 10
 * untimed). Prints one JSON line: p50/p99 (and each half's p50: `SKEIN_TRACK_SETTLE_S` seconds pass between
 * them, to tell an aftermath of the first scan from a cost per exec), main-thread CPU per exec, the first
 * scan's time. Run it alternated (on, off, on, off …) from a shell loop: each run is its own process, so one
 * side's heap never weighs on the other's.
 */
import { readFileSync } from 'node:fs';
import { benchRuntime, fillWorkspace, mainThreadMs } from './bench-runtime.ts';
import { now, ok } from './bench-pty.ts';
import { percentile } from './types.ts';

const TRACK = process.env['SKEIN_TRACK'] !== '0';
const FILES = Number(process.env['SKEIN_TRACK_FILES'] ?? 50_000);
const N = Number(process.env['SKEIN_TRACK_N'] ?? 60);
/** Seconds to wait after the first exec (the first scan) before the timed half that follows the first one. */
const SETTLE_S = Number(process.env['SKEIN_TRACK_SETTLE_S'] ?? 0);

const rt = await benchRuntime(TRACK);
try {
  fillWorkspace(rt.workspace, FILES);
  const { terminalId } = ok(await rt.call('terminal.open', {}));
  const exec = (timeoutMs = 15_000) => rt.call('terminal.exec', { terminalId, command: 'true' }, { timeoutMs });
  const s = now();
  ok(await exec(600_000));
  const firstMs = now() - s;
  for (let i = 0; i < 10; i++) ok(await exec());
  const lat: number[] = [];
  const halves: number[][] = [[], []];
  const cpu0 = mainThreadMs();
  for (let i = 0; i < N; i++) {
    if (i === N / 2 && SETTLE_S > 0) await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const t = now();
    const r = ok(await exec());
    lat.push(now() - t);
    halves[i < N / 2 ? 0 : 1]!.push(now() - t);
    if (r['exitCode'] !== 0) throw new Error(`exec true: ${JSON.stringify(r)}`);
  }
  const cpu = mainThreadMs() - cpu0;
  process.stdout.write(
    `${JSON.stringify({
      track: TRACK,
      files: FILES,
      p50: +percentile(lat, 50).toFixed(2),
      p99: +percentile(lat, 99).toFixed(2),
      halvesP50: halves.map((h) => +percentile(h, 50).toFixed(2)),
      mainCpuPerExecMs: +(cpu / N).toFixed(2),
      firstExecS: +(firstMs / 1000).toFixed(1),
      heapMB: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
      load: readFileSync('/proc/loadavg', 'utf8').split(' ')[0],
    })}\n`,
  );
  ok(await rt.call('terminal.close', { terminalId, graceMs: 0 }));
} finally {
  await rt.dispose();
}
