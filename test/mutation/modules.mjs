/**
 * @module
 * The modules under mutation testing (the guard rails and the ledger), each
 * with the fast unit tests that must kill its mutants. Per module so that one
 * run takes minutes on two shared cores: vitest includes only the listed test
 * files (vitest.mutation.config.ts), and per-test coverage runs only the tests
 * that reach a mutant; a module-level mutant runs them all.
 * `npm run mutate` runs them all; `npm run mutate -- policy codec` some.
 */
/** The unit tests of the permission decision and the built-in rules: the three policy-decision modules share them. */
const DECISION_TESTS = [
  'test/machines/permission/permission-policy.test.ts',
  'test/machines/permission/permission-builtin.test.ts',
  'test/machines/permission/permission-builtin-edges.test.ts',
  'test/machines/permission/permission-reasons.test.ts',
  'test/machines/permission/permission-decision-edges.test.ts',
  'test/machines/permission/policy-layers.test.ts',
];

export const MODULES = {
  policy: {
    mutate: [
      'machines/permission/permission-policy.ts',
      'machines/permission/permission-decision.ts',
      'machines/permission/permission-builtin.ts',
      'machines/permission/permission-patterns.ts',
      'machines/permission/permission-paths.ts',
    ],
    tests: [
      'test/machines/permission/permission-policy.test.ts',
      'test/machines/permission/permission-patterns.test.ts',
      'test/machines/permission/permission-builtin.test.ts',
      'test/machines/permission/permission-builtin-edges.test.ts',
      'test/machines/permission/permission-reasons.test.ts',
      'test/machines/permission/permission-decision-edges.test.ts',
      'test/machines/permission/permission-bypass.test.ts',
      'test/machines/permission/policy-layers.test.ts',
      'test/machines/permission/permission-mutants.test.ts',
    ],
  },
  // The decision and the built-in rules with their unit tests only: no bypass suite, no property test, and not
  // the path rules and learned patterns, which policy-paths measures. The whole policy module ran at about five
  // mutants a minute on the shared machine (docs/quality.md), hours for its 1136.
  'policy-decision': {
    mutate: [
      'machines/permission/permission-policy.ts',
      'machines/permission/permission-decision.ts',
      'machines/permission/permission-builtin.ts',
    ],
    tests: DECISION_TESTS,
  },
  // policy-decision without the built-in rules: the precedence and its reasons, for a run that fits a deadline
  // on the shared machine (policy-decision ran at 3-4 mutants a minute at load 23). Same tests.
  'policy-precedence': {
    mutate: ['machines/permission/permission-policy.ts', 'machines/permission/permission-decision.ts'],
    tests: DECISION_TESTS,
  },
  // The other part of policy-decision: the built-in rules alone, with the same tests.
  'policy-builtin': {
    mutate: ['machines/permission/permission-builtin.ts'],
    tests: DECISION_TESTS,
  },
  // The path rules and learned patterns alone (the whole policy module costs hours: see docs/quality.md).
  'policy-paths': {
    mutate: ['machines/permission/permission-paths.ts', 'machines/permission/permission-patterns.ts'],
    tests: [
      'test/machines/permission/permission-patterns.test.ts',
      'test/machines/permission/names-policy.test.ts',
      'test/machines/permission/path-facts.test.ts',
      'test/machines/permission/permission-policy.test.ts',
    ],
  },
  shell: {
    mutate: [
      'machines/permission/shell-words.ts',
      'machines/permission/shell-wrappers.ts',
      'actors/permission/shell-parse.ts',
      'actors/permission/shell-node-words.ts',
      'actors/permission/shell-refusals.ts',
      'actors/permission/shell-pipes.ts',
    ],
    tests: [
      'test/machines/permission/shell-words.test.ts',
      'test/machines/permission/shell-wrappers*.test.ts',
      'test/actors/permission/shell-split*.test.ts',
      'test/actors/permission/shell-parse.test.ts',
      'test/machines/permission/permission-bypass.test.ts',
      'test/machines/permission/permission-builtin.test.ts',
    ],
  },
  // The shell module in three parts, each with the unit tests written for it (the whole module, with the bypass
  // suite, takes hours on the shared machine: docs/quality.md).
  'shell-words': {
    mutate: ['machines/permission/shell-words.ts'],
    tests: ['test/machines/permission/shell-words.test.ts'],
  },
  'shell-wrappers': {
    mutate: ['machines/permission/shell-wrappers.ts'],
    tests: ['test/machines/permission/shell-wrappers*.test.ts'],
  },
  'shell-parse': {
    mutate: [
      'actors/permission/shell-parse.ts',
      'actors/permission/shell-node-words.ts',
      'actors/permission/shell-refusals.ts',
      'actors/permission/shell-pipes.ts',
    ],
    // Not shell-parse.test.ts: its property tests split hundreds of random inputs per mutant.
    tests: ['test/actors/permission/shell-split*.test.ts', 'test/actors/permission/shell-node-words.test.ts'],
  },
  // shell-parse.ts (and its refusal messages and pipeline helpers) without the node words, which shell-node-words
  // measures.
  'shell-parse-main': {
    mutate: [
      'actors/permission/shell-parse.ts',
      'actors/permission/shell-refusals.ts',
      'actors/permission/shell-pipes.ts',
    ],
    tests: ['test/actors/permission/shell-split*.test.ts', 'test/actors/permission/shell-node-words.test.ts'],
  },
  // The end of shell-parse-main that its stopped runs left unsorted (docs/quality.md): the scripts a command
  // feeds a shell (here-strings, here-docs), emitCommand and the wrappers' assignments, handleRedirect,
  // handlePipeline, innermostArgv, and stdinScripts. A quarter of the module's mutants: one run fits a loaded hour.
  'shell-parse-scripts': {
    // The line ranges as of the descriptor-0 fix (1 December, 22:50).
    mutate: [
      'actors/permission/shell-parse.ts:268-371',
      'actors/permission/shell-pipes.ts',
      'actors/permission/shell-node-words.ts:150-166',
    ],
    tests: ['test/actors/permission/shell-split*.test.ts', 'test/actors/permission/shell-node-words.test.ts'],
  },
  // The pipeline helpers alone (what a stage runs through its wrappers, the script echo or printf writes into a
  // shell), with the split tests: a part of shell-parse-main that fits beside a run of it.
  'shell-pipes': {
    mutate: ['actors/permission/shell-pipes.ts'],
    tests: ['test/actors/permission/shell-split*.test.ts', 'test/actors/permission/shell-node-words.test.ts'],
  },
  // The node words alone, with their unit tests and the splits (a part of shell-parse that fits a shared hour).
  'shell-node-words': {
    mutate: ['actors/permission/shell-node-words.ts'],
    tests: ['test/actors/permission/shell-node-words.test.ts', 'test/actors/permission/shell-split*.test.ts'],
  },
  review: {
    mutate: [
      'machines/review/action-log-reject.ts',
      'machines/review/action-log-plan.ts',
      'machines/review/action-log-hunks.ts',
    ],
    tests: ['test/machines/review/*.test.ts'],
  },
  projection: {
    // digestOf has its own file, so no line range drifts as the host changes.
    mutate: ['machines/kernel/projection.ts', 'infra/kernel/digest.ts'],
    tests: ['test/machines/kernel/projection.test.ts', 'test/infra/kernel/digest.test.ts'],
  },
  codec: {
    // wire.ts holds what codec.ts did before `skein call` was split from the catalogue (frames, fast fact check).
    mutate: ['infra/transport/codec.ts', 'infra/transport/wire.ts'],
    tests: ['test/infra/transport/codec.test.ts', 'test/infra/transport/codec-decode.test.ts'],
  },
  'fact-writer': {
    mutate: ['infra/kernel/fact-writer.ts'],
    // All on the JSONL log in a temp dir (no broker), fast enough per mutant: the re-read after an append in
    // doubt and its backoff (resync), facts of other hosts and carried facts (foreign).
    tests: [
      'test/infra/kernel/fact-writer.test.ts',
      'test/infra/kernel/fact-writer-checked.test.ts',
      'test/infra/kernel/fact-writer-doubt.integration.test.ts',
      'test/infra/kernel/fact-writer-resync.test.ts',
      'test/infra/kernel/fact-writer-foreign.test.ts',
    ],
  },
  // The one "inside the root" rule; the fd walk that uses it is exercised by integration tests (races,
  // hostile suite), too slow to run per mutant.
  confinement: {
    mutate: ['machines/common/confine.ts'],
    tests: ['test/machines/common/confine.test.ts'],
  },
  // The mount plan (bwrapArgs). The constants it reads (HIDDEN_*, GIT_PROTECTIONS) are module-level, which the
  // runner cannot mutate per test (docs/quality.md); they and the rest of pty-spawn.ts (which, env checks,
  // spawning) are pinned by sandbox-args.test.ts and the live sandbox-floor tests, too slow to run per mutant.
  sandbox: {
    mutate: ['actors/terminal/pty-spawn.ts:231-281'],
    tests: ['test/actors/terminal/pty-spawn*.test.ts', 'test/actors/terminal/sandbox-args*.test.ts'],
  },
};
