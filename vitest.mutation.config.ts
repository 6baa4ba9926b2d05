/**
 * @module
 * The vitest config of a mutation run (stryker.config.mjs): the main config with `include` narrowed to the
 * tests of the module named by SKEIN_MUTATE. The narrowing is here and not in Stryker's `testFiles`, because
 * with `testFiles` Stryker 9.5 runs a module-level ("static") mutant with runtime activation, set only after
 * the mutated module was imported, so such mutants always survived (docs/quality.md).
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';
import { MODULES } from './test/mutation/modules.mjs';

const name = process.env.SKEIN_MUTATE ?? 'policy';
const module = (MODULES as Record<string, { tests: string[] } | undefined>)[name];
if (!module) throw new Error(`SKEIN_MUTATE='${name}' is not a module of test/mutation/modules.mjs`);

// Not mergeConfig: it concatenates arrays, which would keep the main config's `test/**` include.
// One worker per runner, as before the main config went to two: Stryker already runs two runners at once.
// `isolate: false`: the test files of one mutant's run share one module graph, so the sources, zod and the
// tree-sitter grammar are imported once per run instead of once per file (shell-parse-main's three files: about
// 0.6-1.2 s per run instead of 2-3 s, load 10). Nothing leaks between mutants: vitest 4 stops the worker at the
// end of each run (`ctx.start`), so every run, a static mutant's included, imports the sandbox afresh (checked
// with a global counter: 1, 2 across the files of a run, 1 again at the next run). State a fixture keeps per file
// must be keyed by the file (test/support/permission-fixtures.ts `shellSplitter`). The vitest runner sets
// `pool: 'threads'` itself.
// The setup file restores per-test coverage and the hit count, which vitest 4.1 broke in the runner's own
// (test/mutation/stryker-meta-setup.ts).
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: module.tests,
    maxWorkers: 1,
    isolate: false,
    setupFiles: ['./test/mutation/stryker-meta-setup.ts'],
  },
});
