#!/usr/bin/env node
/**
 * @module
 * `npm run mutate [-- <module>...]`: runs Stryker once per module of
 * modules.mjs (all when none is named), then prints the score table that
 * docs/quality.md records (module, killed, survived, timeout, no coverage,
 * score). Exits 1 when a module is under the 85% target.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { MODULES } from './modules.mjs';

const TARGET = 85;
const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const onlyTable = process.argv.includes('--table');
const partial = process.argv.includes('--partial');
for (const name of names) {
  if (!MODULES[name]) {
    console.error(`unknown module '${name}'; the modules are: ${Object.keys(MODULES).join(', ')}`);
    process.exit(2);
  }
}
const chosen = names.length > 0 ? names : Object.keys(MODULES);

if (partial) {
  for (const name of chosen) printPartial(name);
  process.exit(0);
}

if (!onlyTable) {
  for (const name of chosen) {
    console.log(`== mutate ${name}`);
    const r = spawnSync('npx', ['stryker', 'run'], { stdio: 'inherit', env: { ...process.env, SKEIN_MUTATE: name } });
    if (r.status !== 0) console.error(`stryker failed for ${name} (exit ${r.status}); its row is missing below`);
  }
}

/**
 * Counts by status from Stryker's mutation-testing-report-schema JSON. `Unloaded`: survivors under which not
 * one test ran. The vitest runner reports a mutant that makes a module throw while it is imported (a zod
 * schema built wrong at the top of a file) as Survived with no test, because the test files fail before
 * their tests are collected (docs/quality.md); plain vitest fails on them. They are shown apart and
 * counted in `score` as survived; `loaded` is the score without them.
 */
function score(name) {
  const file = `reports/mutation/${name}.json`;
  if (!existsSync(file)) return undefined;
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const n = { Killed: 0, Survived: 0, Timeout: 0, NoCoverage: 0, CompileError: 0, RuntimeError: 0, Ignored: 0 };
  let unloaded = 0;
  for (const f of Object.values(report.files)) {
    for (const m of f.mutants) {
      n[m.status] = (n[m.status] ?? 0) + 1;
      if (m.status === 'Survived' && m.testsCompleted === 0) unloaded++;
    }
  }
  const detected = n.Killed + n.Timeout;
  const valid = detected + n.Survived + n.NoCoverage;
  const pct = (d, v) => (v === 0 ? 100 : (100 * d) / v);
  return { ...n, unloaded, score: pct(detected, valid), loaded: pct(detected, valid - unloaded) };
}

let under = false;
const rows = [
  ['module', 'killed', 'survived', 'of which no test ran', 'timeout', 'no coverage', 'score', 'without those'],
];
for (const name of chosen) {
  const s = score(name);
  if (!s) continue;
  if (s.score < TARGET) under = true;
  const cells = [name, s.Killed, s.Survived, s.unloaded, s.Timeout, s.NoCoverage, `${s.score.toFixed(1)}%`];
  rows.push([...cells, `${s.loaded.toFixed(1)}%`].map(String));
}
console.log('');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
if (under) console.log(`\nat least one module is under the ${TARGET}% target`);
process.exit(under ? 1 : 0);

/**
 * The mutants a run has tested so far, from the event-recorder files (`reports/mutation/events-<module>/`,
 * one per tested mutant, written as it is tested): counts, score, and each survivor's place and replacement.
 * For a run that was stopped before its JSON report was written.
 */
function printPartial(name) {
  const dir = `reports/mutation/events-${name}`;
  if (!existsSync(dir)) {
    console.log(`${name}: no events in ${dir}`);
    return;
  }
  const n = { Killed: 0, Survived: 0, Timeout: 0, NoCoverage: 0 };
  const survivors = [];
  for (const f of readdirSync(dir).filter((f) => f.endsWith('-onMutantTested.json'))) {
    const m = JSON.parse(readFileSync(`${dir}/${f}`, 'utf8'));
    n[m.status] = (n[m.status] ?? 0) + 1;
    if (m.status === 'Survived' || m.status === 'NoCoverage') {
      const at = `${relative(process.cwd(), m.fileName)}:${m.location.start.line}:${m.location.start.column}`;
      survivors.push(`${m.status} ${at} ${m.mutatorName}: ${JSON.stringify(m.replacement)}`);
    }
  }
  const detected = n.Killed + n.Timeout;
  const valid = detected + n.Survived + n.NoCoverage;
  const pct = valid === 0 ? 100 : (100 * detected) / valid;
  console.log(
    `${name}: ${valid} tested so far, killed ${n.Killed}, timeout ${n.Timeout}, survived ${n.Survived}, ` +
      `no coverage ${n.NoCoverage}: ${pct.toFixed(1)}%`,
  );
  for (const s of survivors.sort()) console.log(`  ${s}`);
}
