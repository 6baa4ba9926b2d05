/**
 * @module
 * Stryker for one module of test/mutation/modules.mjs, named by SKEIN_MUTATE
 * (test/mutation/run.mjs sets it). Two shared cores: concurrency 2.
 */
import { MODULES } from './test/mutation/modules.mjs';

const name = process.env.SKEIN_MUTATE ?? 'policy';
const module = MODULES[name];
if (!module) throw new Error(`SKEIN_MUTATE='${name}' is not a module; use one of ${Object.keys(MODULES).join(', ')}`);

export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: module.mutate,
  // The module's tests are chosen by vitest.mutation.config.ts (its `include`), not by Stryker's `testFiles`:
  // with `testFiles` set, Stryker 9.5 runs a module-level ("static") mutant with runtime activation, which
  // sets the active mutant only after the mutated module was imported, so those mutants always survived.
  vitest: { configFile: 'vitest.mutation.config.ts', related: false },
  coverageAnalysis: 'perTest',
  concurrency: 2,
  // A static mutant reruns every test of its module with fresh imports; at load 20 that took over the 20 s
  // allowed when the dry run was measured at a lower load, and 84 codec mutants were counted as timeouts
  // (detected) without proof. 60 s costs more only for real endless loops.
  timeoutMS: 60_000,
  // event-recorder writes each tested mutant to its own file as it is tested, so a run stopped early (a
  // deadline, a shared machine) still leaves its results: `node test/mutation/run.mjs --partial <module>`.
  reporters: ['clear-text', 'progress', 'json', 'event-recorder'],
  jsonReporter: { fileName: `reports/mutation/${name}.json` },
  eventReporter: { baseDir: `reports/mutation/events-${name}` },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  // Stryker rewrites the tsconfig through TypeScript's JS API, which TypeScript 7 (native) no longer has;
  // skein's tsconfig has no extends/references to rewrite, so point it at a file that does not exist.
  tsconfigFile: 'no-tsconfig-rewrite.json',
  // SKEIN_MUTATE_INCREMENTAL=1 reuses the last run's results for mutants and tests that did not change.
  incremental: process.env.SKEIN_MUTATE_INCREMENTAL === '1',
  incrementalFile: `reports/mutation/${name}.incremental.json`,
  tempDirName: `.stryker-tmp-${name}`,
  cleanTempDir: true,
  // Other modules' sandboxes too: two modules may run at once.
  ignorePatterns: ['dist', 'reports', '.skein', 'coverage', '.stryker-tmp*'],
  // A checker would compile every mutant; the tests run tsx without a typecheck, so a mutant that
  // does not type-check still runs and is killed or survives on its behaviour.
};
