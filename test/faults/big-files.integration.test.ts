/**
 * Big files do not stall the host: a 10 MB file (over the edit domain's default cap, raised in the config)
 * and a 50k-line file are written,
 * overwritten and edited while a client pings the runtime back to back; every ping's round trip is
 * measured. Before the bounded diff, a 4k-line overwrite stalled pings for 6.8 s and 12k lines for ~108 s.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { percentile } from './fault-harness.ts';

let rt: TestRuntime;
beforeAll(async () => {
  // Embedded: no broker max_payload, so a 10 MB file fits one file.write (the host's own limit is raised), and
  // the edit domain's cap (8 MiB by default) is raised as an operator would.
  rt = await startTestRuntime({
    mode: 'embedded',
    flags: { limits: { maxPayloadBytes: 32 * 1024 * 1024 }, domains: { edit: { maxFileBytes: 16 * 1024 * 1024 } } },
  });
}, 60_000);
afterAll(async () => rt?.dispose());

async function withPings<T>(work: () => Promise<T>): Promise<{ result: T; pings: number[] }> {
  const pings: number[] = [];
  let done = false;
  const pinger = (async () => {
    while (!done) {
      const t = performance.now();
      const reply = await rt.call('runtime.ping');
      expect(reply.ok).toBe(true);
      pings.push(performance.now() - t);
      await sleep(5);
    }
  })();
  try {
    return { result: await work(), pings };
  } finally {
    done = true;
    await pinger;
  }
}

const lines = (n: number, f: (i: number) => string) => `${Array.from({ length: n }, (_, i) => f(i)).join('\n')}\n`;

describe('big files and ping latency', () => {
  it('answers pings while a 10 MB file and a 50k-line file are written, overwritten and edited', async () => {
    const tenMb = lines(158_000, (i) => `line ${i} ${'x'.repeat(50)} ${i % 97}`);
    expect(tenMb.length).toBeGreaterThan(10_000_000);
    const tenMbOther = lines(158_000, (i) => `row ${i * 3} ${'y'.repeat(52)}`);
    const fiftyK = lines(50_000, (i) => `export const v${i} = ${i};`);
    const fiftyKOther = lines(50_000, (i) => `export let w${i} = '${i}';`);
    const { result, pings } = await withPings(async () => {
      const timings: Record<string, number> = {};
      const step = async (name: string, type: string, data: unknown) => {
        const t = performance.now();
        const reply = await rt.call(type, data, { timeoutMs: 60_000 });
        timings[name] = Math.round(performance.now() - t);
        expect(reply.ok, JSON.stringify(reply).slice(0, 500)).toBe(true);
      };
      await step('write 10 MB', 'file.write', { path: 'ten.txt', content: tenMb });
      await step('overwrite 10 MB', 'file.write', { path: 'ten.txt', content: tenMbOther });
      await step('write 50k lines', 'file.write', { path: 'fifty.ts', content: fiftyK });
      await step('overwrite 50k lines', 'file.write', { path: 'fifty.ts', content: fiftyKOther });
      await step('edit 50k lines', 'file.edit', {
        path: 'fifty.ts',
        edits: [{ oldText: "export let w25000 = '25000';", newText: 'export let w25000 = 0;' }],
      });
      await step('review.list', 'review.list', {});
      return timings;
    });
    const p50 = percentile(pings, 50);
    const p99 = percentile(pings, 99);
    const max = Math.max(...pings);
    console.log(
      `big files: ${JSON.stringify(result)} ms; ${pings.length} pings, p50 ${p50.toFixed(1)} ms, ` +
        `p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`,
    );
    expect(pings.length).toBeGreaterThan(10);
    // The 50 ms target is a benchmark figure (`npm run bench big-files`), not a timed assertion: the writer
    // here shares this event loop. The bound catches a return of the quadratic diff (seconds to minutes).
    expect(p99).toBeLessThan(1_000);
  }, 180_000);
});
