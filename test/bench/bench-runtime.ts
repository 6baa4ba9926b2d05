/**
 * @module
 * What the exec and fleet probes (exec-cpu.ts, track-pair.ts, fleet-cpu.ts) and exec.bench.ts share: a private
 * nats-server with a networked runtime in this process (policy allow, shell tracking on or off), a workspace
 * filled with small files, and the main thread's CPU from /proc.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNetworkedRuntime, type TestRuntime } from '../support/runtime.ts';

/** A private nats-server and a networked runtime on it (policy allow); `dispose()` stops both. */
export function benchRuntime(trackShell: boolean): Promise<TestRuntime> {
  return startNetworkedRuntime({ policy: { default: 'allow' }, flags: { domains: { review: { trackShell } } } });
}

/** `count` small text files under `root`, 100 per directory. */
export function fillWorkspace(root: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const dir = join(root, 'src', `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `f${i % 100}.txt`), `file ${i}\n`);
  }
}

/** user+sys CPU ms of a /proc stat line from `utime` on (with its reaped children's when `reaped`; 10 ms ticks). */
export function statMs(stat: string, reaped = false): number {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = Number(f[11]) + Number(f[12]);
  return (reaped ? own + Number(f[13]) + Number(f[14]) : own) * 10;
}

/** This process's main thread's CPU in ms (what the event loop spent). */
export function mainThreadMs(): number {
  return statMs(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8'));
}
