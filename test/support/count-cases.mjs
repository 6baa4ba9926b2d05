#!/usr/bin/env node
/**
 * @module
 * `npm run test:count`: how many tests vitest collects, and how many distinct
 * cases they are. Many edit tests run one case under several chunkings of the
 * same input (whole, per character, random chunks per seed): good coverage,
 * but one case. A test's name is reduced to its case by dropping the seed and
 * the chunking (`(seed 123)`, `fed whole`, `streamed random chunks (seed 9)`);
 * names equal after that count once. Reads `vitest list --json` (collects,
 * runs nothing), or a file of it given as the first argument.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The case a test name stands for: the name without its seed and chunking. */
export function caseOf(name) {
  return name
    .replace(/\s*\((?:fast-check )?seed -?\d+\)/g, '')
    .replace(/\b(fed|streamed) (?:whole|per char|random chunks)\b/g, '$1 <chunking>')
    .trim();
}

function collect() {
  if (process.argv[2]) return readFileSync(process.argv[2], 'utf8');
  const r = spawnSync('npx', ['vitest', 'list', '--json'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    process.exit(r.status ?? 1);
  }
  return r.stdout;
}

const tests = JSON.parse(collect());
const cases = new Set(tests.map((t) => `${t.file}\u0000${caseOf(t.name)}`));
console.log(
  `tests: ${tests.length} collected, ${cases.size} distinct cases (same case in other chunkings/seeds counted once)`,
);
