/**
 * @module
 * What the machine charges for the operating-system work every figure here is made of, measured first so that
 * runs on different machines can be compared: a system call, a hop to libuv's thread pool (every `fs/promises`
 * call), a wake-up of another process (every socket write to nats-server, every PTY read of a shell's output)
 * and a fresh page of memory. No targets: the same code measured 2.12× and 2.58× of its exec floor on two
 * machines of one kind, and only the second was calibrated (a system call ~3 µs: docs/architecture.md, Known
 * limits). These figures say which one a run came from.
 */
import { spawn } from 'node:child_process';
import { closeSync, fstatSync, openSync, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { now } from './bench-pty.ts';
import { percentile, scaled, type Bench, type BenchResult } from './types.ts';

const SYSCALLS = scaled(20_000, 200);
const HOPS = scaled(3_000, 50);
const WAKEUPS = scaled(400, 20);
const PAGES_MIB = scaled(64, 2);
const here = fileURLToPath(import.meta.url);

/** µs per call of `fn`, run `n` times back to back. */
function perCall(n: number, fn: () => void): number {
  const t = now();
  for (let i = 0; i < n; i++) fn();
  return ((now() - t) * 1000) / n;
}

/** One byte to `cat` and back, `n` times: p50 µs, back to back or after a pause that lets both sleep. */
async function pingPong(n: number, pauseMs: number): Promise<number> {
  const cat = spawn('cat', [], { stdio: ['pipe', 'pipe', 'ignore'] });
  const samples: number[] = [];
  try {
    let wake: (() => void) | undefined;
    cat.stdout.on('data', () => wake?.());
    const byte = Buffer.from('x');
    for (let i = 0; i < n + 10; i++) {
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      const t = now();
      await new Promise<void>((resolve) => {
        wake = resolve;
        cat.stdin.write(byte);
      });
      if (i >= 10) samples.push((now() - t) * 1000);
    }
  } finally {
    cat.kill('SIGKILL');
  }
  return percentile(samples, 50);
}

export const bench: Bench = {
  name: 'machine (calibration)',
  async run() {
    const results: BenchResult[] = [];
    const fd = openSync(here, 'r');
    let syscall: number;
    try {
      syscall = Math.min(...[0, 1, 2].map(() => perCall(SYSCALLS, () => fstatSync(fd))));
    } finally {
      closeSync(fd);
    }
    results.push({
      name: 'a system call (fstat of an open file, best of 3)',
      value: syscall,
      unit: 'µs',
      note: 'every PTY read, socket write and file step costs at least one',
    });

    const sync = Math.min(...[0, 1, 2].map(() => perCall(HOPS, () => statSync(here))));
    const hops: number[] = [];
    for (let round = 0; round < 3; round++) {
      const t = now();
      for (let i = 0; i < HOPS; i++) await stat(here);
      hops.push(((now() - t) * 1000) / HOPS);
    }
    const hop = Math.min(...hops);
    results.push({
      name: "fs/promises stat (through libuv's thread pool, best of 3)",
      value: hop,
      unit: 'µs',
      baseline: sync,
      ratio: hop / sync,
      note: 'baseline = statSync on this thread; ratio = async / sync (the cost of the hop)',
    });

    const busy = await pingPong(WAKEUPS, 0);
    const asleep = await pingPong(WAKEUPS, 1);
    results.push({
      name: 'one byte to another process and back, both asleep before (p50)',
      value: asleep,
      unit: 'µs',
      baseline: busy,
      ratio: asleep / busy,
      note: 'a pipe to `cat`, after a 1 ms pause; baseline = back to back; each hop of an exec pays a wake-up',
    });

    const pages = (PAGES_MIB * 1024 * 1024) / 4096;
    const t = now();
    const fresh = Buffer.allocUnsafeSlow(PAGES_MIB * 1024 * 1024);
    for (let i = 0; i < fresh.length; i += 4096) fresh[i] = 1;
    const perPage = ((now() - t) * 1000) / pages;
    results.push({
      name: `touching ${PAGES_MIB} MiB of fresh memory, per 4 KiB page`,
      value: perPage,
      unit: 'µs',
      note: 'a page fault each (a heap that grows pays them)',
    });
    return results;
  },
};
