/**
 * @module
 * The flood's structural floor (flood-floor-child.ts) as a round of the flood bench: started once beside the
 * runtime on the same broker, each round types the flood into its shell and times it to the child's last ack or
 * the subscriber's last chunk, whichever is later, as a skein round is timed.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { NatsConnection } from '@nats-io/transport-node';
import { now } from './bench-pty.ts';
import { type MachineUse, schedProbe } from './sched.ts';
import type { BenchResult } from './types.ts';

const CHILD = fileURLToPath(new URL('./flood-floor-child.ts', import.meta.url));
/** The child publishes its chunks under this prefix. */
const FLOOR_SUBJECT = 'bench.floor.out';

export type FloorRound = { ms: number; bytes: number; threads: string; machine: MachineUse };

export type Floor = { run: (command: string, expect: number) => Promise<FloorRound>; dispose: () => Promise<void> };

export type FloorMode = 'same-thread' | 'thread';

export async function startFloor(
  nc: NatsConnection,
  natsUrl: string,
  rcPath: string,
  natsPid: number,
  mode: FloorMode,
): Promise<Floor> {
  const subject = `${FLOOR_SUBJECT}.${mode}`;
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, natsUrl, rcPath, subject, mode], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let out = '';
  let waiter: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void } | undefined;
  const check = () => {
    const m = waiter && out.match(waiter.pattern);
    if (!m || !waiter) return;
    out = out.slice(m.index! + m[0].length);
    const w = waiter;
    waiter = undefined;
    w.resolve(m);
  };
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString('utf8');
    check();
  });
  const next = (pattern: RegExp, timeoutMs: number) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`flood floor: no ${pattern} in ${timeoutMs} ms`)), timeoutMs);
      waiter = {
        pattern,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      check();
    });
  const dispose = async () => {
    child.stdin!.end();
    const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  };
  try {
    await next(/ready\n/, 60_000);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  return {
    dispose,
    async run(command, expect) {
      let received = 0;
      let lastAt = now();
      const dec = new TextDecoder();
      const sub = nc.subscribe(`${subject}.>`, {
        callback: (_e, m) => {
          const fact = JSON.parse(dec.decode(m.data)) as { data: { data: string } };
          received += Buffer.byteLength(fact.data.data, 'utf8');
          lastAt = now();
        },
      });
      try {
        await nc.flush();
        const probe = schedProbe({
          'floor main thread': { pid: child.pid!, tid: child.pid! },
          'floor all threads': { pid: child.pid! },
          'nats-server': { pid: natsPid },
          subscriber: { pid: process.pid, tid: process.pid },
        });
        const t = now();
        child.stdin!.write(`go ${command}\n`);
        await next(/done (\d+)\n/, 180_000);
        const doneMs = now() - t;
        while (received < expect && now() - lastAt < 5_000) await new Promise((r) => setTimeout(r, 5));
        return { ms: Math.max(doneMs, lastAt - t), bytes: received, threads: probe.stop(), machine: probe.machine() };
      } finally {
        sub.unsubscribe();
      }
    },
  };
}

export const FLOOR_MODES: FloorMode[] = ['same-thread', 'thread'];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A floor's rounds against the raw rounds and skein's, round by round (each set of three ran together). */
export function floorResult(
  mode: FloorMode,
  bytes: number,
  floors: FloorRound[],
  raws: Array<{ ms: number }>,
  ours: Array<{ ms: number }>,
): BenchResult {
  const mbps = (r: { ms: number }) => bytes / 1e6 / (r.ms / 1000);
  const vsRaw = floors.map((r, i) => mbps(r) / mbps(raws[i]!));
  const oursVs = ours.map((r, i) => mbps(r) / mbps(floors[i]!));
  const what =
    mode === 'thread'
      ? 'the PTY read and its reads joined on a worker thread, the main thread publishing each chunk to JetStream'
      : 'one thread reading the PTY and publishing each chunk to JetStream (file storage), nothing else';
  return {
    name: `flood ${bytes / 1e6} MB through the structural floor, ${mode} (flood-floor-child.ts), to a NATS subscriber`,
    value: median(floors.map(mbps)),
    unit: 'MB/s',
    baseline: median(raws.map(mbps)),
    ratio: median(vsRaw),
    target: 'none: diagnostic',
    note:
      `${what}; skein ÷ this floor ${median(oursVs).toFixed(2)}× (median); per round: ` +
      floors
        .map(
          (r, i) =>
            `${r.ms.toFixed(0)} ms, ${vsRaw[i]!.toFixed(2)}× raw, skein ${oursVs[i]!.toFixed(2)}× it, ` +
            `${r.bytes} bytes; CPU: ${r.threads}`,
        )
        .join('; '),
  };
}
