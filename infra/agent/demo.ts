/**
 * @module
 * `skein demo`: an embedded runtime in a temporary workspace; the root hands
 * work to three scripted sub-agents (commands in terminals, a fuzzy edit,
 * a write that needs the root's permission), then reviews everything,
 * accepts part and rejects part, and checks the replayed digest. Prints what
 * happened as it happens.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { FleetPlan } from '../../schemas/index.ts';
import type { FileReview } from '../../schemas/review.ts';
import { call } from '../transport/client.ts';
import { loadConfig } from '../kernel/config.ts';
import { AGGREGATES } from '../kernel/domains.ts';
import { formatFleet, runFleet } from './fleet.ts';
import { createLogger } from '../kernel/log.ts';
import { replayLog } from '../kernel/replay.ts';
import { startRuntime } from '../kernel/runtime.ts';

const APP_PY = `def total(items):
    result = 0
    for item in items:
        result += item.price
    return result


def label(item):
    return item.name.title()
`;

export const DEMO_PLAN: FleetPlan = {
  agents: [
    {
      label: 'tests',
      agentId: 'tests',
      steps: [
        { exec: 'ls src' },
        { exec: "python3 -c 'import sys; print(sys.version_info[0])' || echo no-python" },
        // No `$(date)`: an expansion asks a person (its value is unknown to every rule), and nobody answers a demo.
        { exec: 'date +%F > build.log' },
      ],
    },
    {
      label: 'refactor',
      agentId: 'refactor',
      steps: [
        { read: { path: 'src/app.py' } },
        {
          // The model's old text drifted: two-space indentation instead of four.
          edit: {
            path: 'src/app.py',
            edits: [
              {
                oldText: '  result = 0\n  for item in items:\n      result += item.price',
                newText: '  result = 0\n  for item in items:\n      result += item.price * item.quantity',
              },
            ],
          },
        },
      ],
    },
    {
      label: 'docs',
      agentId: 'docs',
      steps: [
        { write: { path: 'docs/CHANGELOG.md', content: '# Changelog\n\n- totals count quantities\n' } },
        // A read, not a shell command: commands of two agents running at once in one directory both see
        // each other's changes, and under load `tests`' build.log was put down to `docs`.
        { read: { path: 'docs/CHANGELOG.md' } },
      ],
    },
  ],
  answers: [{ match: '^docs/', decision: 'allow_once' }],
};

export async function runDemo(
  options: { keep?: boolean; out?: (line: string) => void } = {},
): Promise<{ ok: boolean; workspace: string }> {
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  const dir = mkdtempSync(join(tmpdir(), 'skein-demo-'));
  const workspace = join(dir, 'workspace');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  mkdirSync(join(workspace, 'docs'), { recursive: true });
  mkdirSync(join(workspace, '.skein'), { recursive: true });
  writeFileSync(join(workspace, 'src', 'app.py'), APP_PY);
  writeFileSync(join(workspace, 'README.md'), '# shop\n');
  // Everything is allowed except writes under docs/, which the root must confirm.
  writeFileSync(
    join(workspace, '.skein', 'policy.json'),
    JSON.stringify({ default: 'allow', tools: { write_file: { always_confirm: [{ pattern: '^docs/' }] } } }, null, 2),
  );

  const config = loadConfig({
    cwd: dir,
    env: {},
    flags: {
      mode: 'embedded',
      dataDir: join(dir, 'data'),
      workspace,
      logLevel: 'warn',
      domains: { permission: { globalPolicy: join(dir, 'no-global-policy.json') } },
    },
  });
  const t0 = performance.now();
  const runtime = await startRuntime(config, createLogger({ level: 'warn' }));
  const root = config.rootAgentId;
  let ok = true;
  try {
    out(`skein demo: embedded runtime, workspace ${workspace}`);
    out(`policy: everything allowed, except writes under docs/ which the root must confirm\n`);
    out('== the root spawns three sub-agents and they work in parallel');
    const fleet = await runFleet(DEMO_PLAN, {
      bus: runtime.bus,
      root,
      onStep: (agent, s) => out(`  ${agent.padEnd(9)} ${s.ok ? '✓' : '✗'} ${s.step} (${s.summary})`),
    });
    out('\n== results');
    out(formatFleet(fleet));
    ok = fleet.agents.every((a) => a.status === 'completed');

    out(`\n== the root reviews every change of its subtree`);
    const review = await call(runtime.bus, root, 'review.list', {}, { timeoutMs: 30_000 });
    const files = review.ok ? (review['files'] as FileReview[]) : [];
    for (const f of files) {
      out(`  ${f.status.padEnd(8)} ${relative(workspace, f.path)} by ${f.agents.join(', ')}`);
      for (const line of f.diff.split('\n').filter((l) => /^[+-][^+-]/.test(l))) out(`      ${line}`);
    }

    out('\n== accept the refactor, reject everything else');
    const accepted = await call(
      runtime.bus,
      root,
      'review.accept',
      { paths: [join(workspace, 'src', 'app.py')] },
      { timeoutMs: 30_000 },
    );
    const acceptedPaths = accepted.ok
      ? (accepted['accepted'] as Array<{ path: string }>).map((a) => relative(workspace, a.path)).join(', ')
      : accepted.error.message;
    out(`  accepted: ${acceptedPaths}`);
    const rejected = await call(runtime.bus, root, 'review.reject', {}, { timeoutMs: 30_000 });
    if (rejected.ok) {
      for (const p of rejected['restored'] as string[]) out(`  restored ${relative(workspace, p)}`);
      for (const p of rejected['deleted'] as string[]) out(`  deleted  ${relative(workspace, p)}`);
    } else out(`  reject failed: ${rejected.error.message}`);

    out('\n== the workspace now');
    for (const path of listFiles(workspace)) out(`  ${path}`);
    const kept = readFileSync(join(workspace, 'src', 'app.py'), 'utf8').includes('item.quantity');
    out(`  src/app.py keeps the edit: ${kept}`);

    const status = await call(runtime.bus, root, 'runtime.status', {}, { timeoutMs: 10_000 });
    const replayed = await replayLog(runtime.log, AGGREGATES);
    const same = status.ok && status['digest'] === replayed.digest;
    const digest = replayed.digest.slice(0, 16);
    out(`\n== ${replayed.facts} facts in the log; live digest ${same ? '=' : '≠'} replay digest (${digest}…)`);
    const keptAt = options.keep ? `; kept ${dir} (skein replay --data ${join(dir, 'data')})` : '';
    out(`done in ${((performance.now() - t0) / 1000).toFixed(1)} s${keptAt}`);
    ok = ok && same && accepted.ok && rejected.ok;
  } finally {
    await runtime.stop();
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  }
  return { ok, workspace };
}

function listFiles(root: string, dir = root): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === '.skein') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(root, path));
    else out.push(relative(root, path));
  }
  return out.sort();
}
