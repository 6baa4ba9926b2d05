/**
 * @module
 * `npm run bench`: runs every `*.bench.ts` in this folder (or those named on
 * the command line), prints a table and writes `bench-results.json` to the
 * folder given by `--out` (default: the OS temp dir).
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Bench, BenchResult } from './types.ts';

const here = fileURLToPath(new URL('.', import.meta.url));
const args = process.argv.slice(2);
const outIndex = args.indexOf('--out');
const outDir = outIndex >= 0 ? args[outIndex + 1]! : tmpdir();
const only = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--out');

const MACHINE = 'machine.bench.ts';
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  // The machine's own costs first: the figures after it are read against them.
  .sort((a, b) => Number(b === MACHINE) - Number(a === MACHINE) || a.localeCompare(b));

const all: Array<BenchResult & { bench: string }> = [];
for (const file of files) {
  const mod = (await import(join(here, file))) as { bench: Bench };
  process.stderr.write(`\n== ${mod.bench.name} (${file})\n`);
  const results = await mod.bench.run();
  for (const r of results) {
    all.push({ ...r, bench: mod.bench.name });
    const ratio = r.ratio === undefined ? '' : ` ratio ${r.ratio.toFixed(2)}×`;
    const base = r.baseline === undefined ? '' : ` (baseline ${fmt(r.baseline)} ${r.unit})`;
    const target = r.target ? ` target ${r.target}${r.met === undefined ? '' : r.met ? ' ✓' : ' ✗'}` : '';
    process.stdout.write(
      `${r.name}: ${fmt(r.value)} ${r.unit}${base}${ratio}${target}${r.note ? ` — ${r.note}` : ''}\n`,
    );
  }
}
const out = join(outDir, 'bench-results.json');
mkdirSync(outDir, { recursive: true });
writeFileSync(out, JSON.stringify(all, null, 2));
process.stderr.write(`\nwrote ${out}\n`);

function fmt(n: number): string {
  return Math.abs(n) >= 100 ? n.toFixed(0) : n.toFixed(2);
}
