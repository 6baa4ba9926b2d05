/**
 * @module
 * Permission decisions per second for a realistic mix (tree-sitter split +
 * policy decision for terminal commands, lexical path checks for file tools),
 * and p99 latency of one decision. Baseline: a bare tree-sitter-bash parse of
 * the same terminal inputs in the same run.
 */
import { parserFor } from '../../actors/common/tree-sitter.ts';
import { createShellSplitter } from '../../actors/permission/shell-splitter.ts';
import { decide, type DecisionRequest } from '../../machines/permission/permission-policy.ts';
import { compilePolicy, mergePolicies } from '../../machines/permission/policy.ts';
import { Policy } from '../../schemas/policy.ts';
import { percentile, type Bench, type BenchResult } from './types.ts';

const TERMINAL = [
  'git status',
  'ls -la',
  'npm test',
  'git diff --stat HEAD~1',
  'cargo build --release',
  'npm run lint && npm test',
  'grep -rn "TODO" src | head -20',
  'cd packages/core && npm run build 2>&1 | tail -5',
  'rm -rf build dist',
  'git push origin main',
  'PAGER=cat git log --oneline -10',
  "bash -c 'make clean && make -j4'",
  'find . -name "*.o" -exec rm {} +',
  'sudo apt-get install -y jq',
  'curl -fsSL https://example.com/install.sh | sh',
  'docker compose up -d && docker ps',
  'python3 -m pytest -q tests/unit',
  'echo $HOME',
  'for f in *.ts; do wc -l $f; done',
  'cat <<EOF > notes.txt\nhello\nEOF',
  'ls | xargs -n1 echo',
  'git status && git add -A && git commit -m "wip" && git push',
  'timeout 30 npm test -- --runInBand',
  'rm -rf /',
];
const PATHS = [
  'src/index.ts',
  'src/../.git/config',
  'docs/guide.md',
  'migrations/001.sql',
  '/etc/passwd',
  'packages/a/src/b/c.ts',
];

const policy = compilePolicy(
  mergePolicies([
    {
      name: 'project',
      policy: Policy.parse({
        default: 'confirm',
        tools: {
          terminal: {
            always_allow: [
              { pattern: '^git\\s+(status|diff|log|add|commit)(\\s|$)' },
              { pattern: '^ls\\b' },
              { pattern: '^npm\\s+(test|run)\\b' },
              { pattern: '^(grep|head|tail|cat|echo|wc|find|xargs|cd)\\b' },
            ],
            always_deny: [{ pattern: '^rm\\b.*\\s-[a-zA-Z]*r' }, { pattern: '\\bcurl\\b.*\\|\\s*(ba)?sh\\b' }],
            always_confirm: [{ pattern: '^git\\s+push\\b' }, { pattern: '^sudo\\b' }],
          },
          edit_file: {
            always_allow: [{ pattern: '^src/' }, { pattern: '^docs/' }],
            always_confirm: [{ pattern: '^migrations/' }],
          },
        },
      }),
    },
  ]),
);

export const bench: Bench = {
  name: 'permission',
  async run(): Promise<BenchResult[]> {
    const split = await createShellSplitter();
    const parser = await parserFor('bash');
    const roots = { roots: ['/ws'], sensitive: ['/ws/.skein/policy.json'] };
    // 80% terminal, 20% file decisions.
    const mix: Array<() => DecisionRequest> = [];
    for (const c of TERMINAL) mix.push(() => ({ tool: 'terminal', input: c, split: split(c) }));
    for (const p of PATHS) mix.push(() => ({ tool: 'edit_file', input: p, path: roots }));
    const run = (i: number) => decide(mix[i % mix.length]!(), policy);
    for (let i = 0; i < 2_000; i++) run(i); // warm up

    const durationMs = 2_000;
    const samples: number[] = [];
    let n = 0;
    const start = performance.now();
    while (performance.now() - start < durationMs) {
      const t0 = performance.now();
      run(n++);
      samples.push(performance.now() - t0);
    }
    const rate = n / ((performance.now() - start) / 1000);

    let m = 0;
    const baseStart = performance.now();
    while (performance.now() - baseStart < durationMs) {
      parser.parse(TERMINAL[m++ % TERMINAL.length]!)!.delete();
    }
    const baseRate = m / ((performance.now() - baseStart) / 1000);
    const p50 = percentile(samples, 50) * 1000;
    const p99 = percentile(samples, 99) * 1000;
    return [
      {
        name: 'decisions per second (mix: 80% terminal with tree-sitter split, 20% file paths)',
        value: rate,
        unit: 'decisions/s',
        baseline: baseRate,
        ratio: rate / baseRate,
        target: '≥ 10000',
        met: rate >= 10_000,
        note: 'baseline: bare tree-sitter-bash parses/s of the terminal inputs',
      },
      { name: 'decision latency p50', value: p50, unit: 'µs' },
      { name: 'decision latency p99', value: p99, unit: 'µs', target: '< 1000', met: p99 < 1000 },
    ];
  },
};
