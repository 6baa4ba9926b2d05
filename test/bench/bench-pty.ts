/**
 * @module
 * Shared helpers of the over-NATS benchmarks: the raw node-pty baseline
 * (bash with skein's rc, OSC 133 marks found by hand; also used by
 * terminal.bench.ts), a GC handle, an RSS sampler and a reply check.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { spawn, type IPty } from '@lydell/node-pty';
import { terminalEnv } from '../../actors/terminal/pty-spawn.ts';

export const MARK_B = '\x1b]133;B\x07';
export const MARK_D = '\x1b]133;D;';

/** Raw baseline: node-pty + the same bash and rc, watching for marks by hand. */
export function rawShell(rcPath: string): {
  pty: IPty;
  bytes: () => number;
  waitFor: (marker: string) => Promise<number>;
} {
  const pty = spawn('bash', ['--noprofile', '--rcfile', rcPath, '-i'], {
    name: 'xterm-256color',
    cols: 80,
    rows: 24,
    cwd: process.cwd(),
    env: terminalEnv({ terminalId: 'raw', agentId: 'raw', shellPath: '/usr/bin/bash' }),
  });
  let tail = '';
  let bytes = 0;
  let waiter: { marker: string; resolve: (n: number) => void } | undefined;
  pty.onData((d) => {
    bytes += d.length;
    tail = (tail + d).slice(-4096);
    const at = waiter ? tail.indexOf(waiter.marker) : -1;
    if (waiter && at >= 0) {
      const w = waiter;
      waiter = undefined;
      tail = tail.slice(at + w.marker.length);
      w.resolve(bytes);
    }
  });
  return {
    pty,
    bytes: () => bytes,
    waitFor: (marker) =>
      new Promise((resolve) => {
        const at = tail.indexOf(marker);
        if (at >= 0) {
          tail = tail.slice(at + marker.length);
          resolve(bytes);
        } else waiter = { marker, resolve };
      }),
  };
}

setFlagsFromString('--expose-gc');
export const gc = runInNewContext('gc') as () => void;

/** Samples process RSS every `everyMs`; `stop()` returns the peak in bytes. */
export function rssSampler(everyMs = 50): { stop: () => number } {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage().rss);
    },
  };
}

/** Throws on an error reply; returns the reply's fields. */
export function ok(r: { ok: boolean }): Record<string, any> {
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r as unknown as Record<string, any>;
}

export const now = () => performance.now();
export const MiB = 2 ** 20;
