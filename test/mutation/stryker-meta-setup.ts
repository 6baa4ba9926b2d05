/**
 * @module
 * The half of Stryker's vitest setup file (`@stryker-mutator/vitest-runner` 9.5.1, `stryker-setup.js`) that
 * vitest 4.1 broke: it hands a file's results to Stryker in `afterAll(({ meta }) => …)`, but since 4.1 the first
 * argument of a suite hook is its fixture context (the suite is the second), so that hook throws a
 * FixtureAccessError and the file's `meta` stays empty. The dry run then reports no coverage, and Stryker runs
 * every test of the module for every mutant with the mutant active from the import, and without a hit limit
 * (an endless loop runs to the timeout). This hook writes the same two fields the second way; the runner's own
 * hook still throws, on the file and not in a test, which the runner does not read (its `mode` and namespace are
 * what it provides). vitest.mutation.config.ts adds it after the runner's file; only a mutation run loads it.
 */
import { afterAll, inject } from 'vitest';

type StrykerNamespace = { mutantCoverage?: unknown; hitCount?: number };
type Provided = { globalNamespace: string; mode: 'mutant' | 'dry-run' };
const provided = (key: keyof Provided) => (inject as (k: string) => unknown)(key) as Provided[typeof key];

const space = provided('globalNamespace') as string;
const mode = provided('mode');

// biome-ignore lint/correctness/noEmptyPattern: vitest 4.1 requires an object pattern for the fixture context.
afterAll(({}, file) => {
  // Read at the end: the instrumented sources fill the namespace the runner's setup file made.
  const ns = (globalThis as unknown as Record<string, StrykerNamespace | undefined>)[space] ?? {};
  const meta = file.meta as Record<string, unknown>;
  if (mode === 'mutant') meta.hitCount = ns.hitCount;
  else meta.mutantCoverage = ns.mutantCoverage;
});
