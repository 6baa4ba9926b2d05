/**
 * The benchmarks of issue 15 run (CI smoke): each at its tiny `SKEIN_BENCH_SMOKE` size reports finite figures
 * with a name and a unit. No timed assertion: how fast is `npm run bench`'s business.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Bench } from './types.ts';

process.env['SKEIN_BENCH_SMOKE'] = '1';
const here = fileURLToPath(new URL('.', import.meta.url));
const files = [
  'machine.bench.ts',
  'exec.bench.ts',
  'terminal-nats.bench.ts',
  'fleet.bench.ts',
  'host.bench.ts',
  'cli.bench.ts',
  'hosts.bench.ts',
  'big-files.bench.ts',
];

describe('benchmarks run (smoke size)', () => {
  it('finds the benchmarks', () => {
    expect(files.filter((f) => !existsSync(`${here}/${f}`))).toEqual([]);
  });
  for (const file of files) {
    it(`${file} reports finite figures`, { timeout: 60_000 }, async () => {
      const { bench } = (await import(`./${file}`)) as { bench: Bench };
      const results = await bench.run();
      expect(results.length).toBeGreaterThan(0);
      for (const r of results) {
        expect(r.name).not.toBe('');
        expect(r.unit).not.toBe('');
        expect(Number.isFinite(r.value), `${r.name}: ${r.value}`).toBe(true);
        if (r.baseline !== undefined) expect(Number.isFinite(r.baseline), `${r.name} baseline`).toBe(true);
      }
    });
  }
});
