/**
 * Issue 6 end to end through the CLI: `skein demo`; `skein fleet run` of a
 * 3-level YAML plan whose grandchildren edit files and run commands; the
 * root's review; reject-all restoring the workspace byte for byte and
 * undo-reject bringing the agents' versions back; a concurrent on-disk
 * change kept with a conflict; `skein agents --tree`; replay = live digest.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startEmbeddedCli, type EmbeddedRun } from '../support/cli.ts';

/** path → sha256 of every file under root (skipping .skein). */
function tree(root: string, dir = root, out: Record<string, string> = {}): Record<string, string> {
  for (const name of readdirSync(dir)) {
    if (name === '.skein') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) tree(root, path, out);
    else out[relative(root, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
  }
  return out;
}

const PLAN = `
agents:
  - label: backend
    agentId: backend
    steps:
      - spawn:
          label: api
          agentId: api
          steps:
            - edit: { path: src/api.ts, edits: [{ oldText: "return 1;", newText: "return 2;" }] }
            - exec: echo generated > src/gen.txt
      - spawn:
          label: db
          agentId: db
          steps:
            - write: { path: src/db.ts, content: "export const db = 'sqlite';\\n" }
            - exec: rm src/old.ts
  - label: docs
    agentId: docs
    steps:
      - edit: { path: README.md, edits: [{ oldText: "# app", newText: "# app\\n\\nNow with docs." }] }
`;

// 120 s: a test here starts up to five CLI processes, each up to ~6 s at a load of 12.
describe('fleets, review and demo through the CLI', { timeout: 120_000 }, () => {
  let run: EmbeddedRun;
  let data: string;
  let ws: string;
  let dir: { path: string };
  let before: Record<string, string>;

  beforeAll(async () => {
    run = await startEmbeddedCli({
      policy: { default: 'allow' },
      prepare: (workspace, root) => {
        mkdirSync(join(workspace, 'src'), { recursive: true });
        writeFileSync(join(workspace, 'src', 'api.ts'), 'export function api() {\r\n  return 1;\r\n}\r\n');
        writeFileSync(join(workspace, 'src', 'old.ts'), 'export {};\n');
        writeFileSync(join(workspace, 'README.md'), '# app\n');
        writeFileSync(join(root, 'plan.yaml'), PLAN);
        before = tree(workspace);
      },
    });
    ({ data, workspace: ws } = run);
    dir = { path: run.dir };
  });
  afterAll(async () => run?.dispose());

  it('runs a 3-level plan and the root reviews every change', async () => {
    const fleet = await runCli(['fleet', 'run', join(dir.path, 'plan.yaml'), '--data', data]);
    expect(fleet.code, fleet.stdout + fleet.stderr).toBe(0);
    expect(fleet.stdout).toMatch(/backend "backend" → completed/);
    expect(fleet.stdout).toMatch(/ {2}api "api" → completed/);
    expect(readFileSync(join(ws, 'src', 'api.ts'), 'utf8')).toBe('export function api() {\r\n  return 2;\r\n}\r\n');

    const review = await runCli(['review', '--json', '--data', data]);
    const files = (JSON.parse(review.stdout) as { files: Array<{ path: string; status: string; agents: string[] }> })
      .files;
    expect(files.map((f) => [relative(ws, f.path), f.status, f.agents]).sort()).toEqual([
      ['README.md', 'modified', ['docs']],
      ['src/api.ts', 'modified', ['api']],
      ['src/db.ts', 'created', ['db']],
      ['src/gen.txt', 'created', ['api']],
      ['src/old.ts', 'deleted', ['db']],
    ]);
    const agents = await runCli(['agents', '--tree', '--data', data]);
    const tree = [
      'main "root" [running]',
      '  backend "backend" [completed]',
      '    api "api" [completed]',
      '    db "db" [completed]',
      '  docs "docs" [completed]',
    ].join('\n');
    expect(agents.stdout.startsWith(tree)).toBe(true);
  });

  it('keeps a concurrent on-disk change, reports the conflict, and restores the rest byte for byte', async () => {
    // Somebody edits the very line the agent wrote: rejecting the agent's hunk would clobber it, so the
    // reject must leave README.md alone and report it as a conflict.
    const handEdited = '# app\n\nNow with docs, and a line by hand.\n';
    writeFileSync(join(ws, 'README.md'), handEdited);
    const reject = await runCli(['reject', '--json', '--data', data]);
    expect(reject.code, reject.stderr).toBe(0);
    const result = JSON.parse(reject.stdout) as {
      conflicts: Array<{ path: string }>;
      restored: string[];
      deleted: string[];
    };
    const readme = readFileSync(join(ws, 'README.md'), 'utf8');
    const conflicted = result.conflicts.map((c) => relative(ws, c.path));
    const restored = [...result.restored, ...result.deleted].map((p) => relative(ws, p)).sort();
    expect(conflicted).toEqual(['README.md']);
    expect(readme).toBe(handEdited);
    expect(restored).toEqual(['src/api.ts', 'src/db.ts', 'src/gen.txt', 'src/old.ts']);
    const now = tree(ws);
    for (const path of Object.keys(before)) if (path !== 'README.md') expect(now[path], path).toBe(before[path]);
    expect(Object.keys(now).sort()).toEqual(Object.keys(before).sort());
  });

  it("undo-reject brings the agents' versions back, the files they created included", async () => {
    const undo = await runCli(['undo-reject', '--json', '--data', data]);
    expect(undo.code, undo.stderr).toBe(0);
    const result = JSON.parse(undo.stdout) as { reapplied: string[]; notRestorable: Array<{ path: string }> };
    expect(result.reapplied.map((p) => relative(ws, p)).sort()).toEqual(
      expect.arrayContaining(['src/api.ts', 'src/db.ts', 'src/gen.txt']),
    );
    expect(readFileSync(join(ws, 'src', 'api.ts'), 'utf8')).toBe('export function api() {\r\n  return 2;\r\n}\r\n');
    expect(existsSync(join(ws, 'src', 'old.ts'))).toBe(false);
    expect(readFileSync(join(ws, 'src', 'db.ts'), 'utf8')).toBe("export const db = 'sqlite';\n");
    expect(readFileSync(join(ws, 'src', 'gen.txt'), 'utf8')).toBe('generated\n');
    expect(result.notRestorable).toEqual([]);
  });

  it('replays the whole scenario to the live digest', async () => {
    const status = await runCli(['status', '--digest', '--data', data]);
    const replayed = await runCli(['replay', '--digest', '--data', data]);
    expect(replayed.stdout).toBe(status.stdout);
  });

  it('rejects a bad plan naming the field', async () => {
    writeFileSync(join(dir.path, 'bad.yaml'), 'agents:\n  - label: x\n    steps:\n      - exec: 3\n');
    const r = await runCli(['fleet', 'run', join(dir.path, 'bad.yaml'), '--data', data]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/agents\.0\.steps\.0/);
    expect(r.stderr).toMatch(/A step is one object with one of: exec, write, edit, read, spawn/);
    writeFileSync(join(dir.path, 'typo.yaml'), 'agents:\n  - label: x\n    steps:\n      - run: npm test\n');
    const typo = await runCli(['fleet', 'run', join(dir.path, 'typo.yaml'), '--data', data]);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(/exec, write, edit, read, spawn/);
  });

  it('--timeout stops waiting for a fleet that outlives it, and a bad value is a usage error', async () => {
    writeFileSync(
      join(dir.path, 'slow.yaml'),
      'agents:\n  - label: slow\n    agentId: slow\n    steps:\n      - exec: sleep 25\n',
    );
    const t0 = Date.now();
    const r = await runCli(['fleet', 'run', join(dir.path, 'slow.yaml'), '--timeout', '1500', '--data', data]);
    const took = Date.now() - t0;
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stderr).toMatch(/fleet run did not finish within 1500 ms \(--timeout\)/);
    expect(took).toBeLessThan(20_000);
    for (const bad of ['0', 'soon', '-5', '1.5']) {
      const u = await runCli(['fleet', 'run', join(dir.path, 'slow.yaml'), '--timeout', bad, '--data', data]);
      expect(u.code, bad).toBe(2);
      expect(u.stderr).toContain(`--timeout '${bad}' is not a positive whole number of milliseconds`);
    }
  });

  it('skein demo runs the whole story from a clean state in a few seconds', async () => {
    const t0 = Date.now();
    const demo = await runCli(['demo']);
    expect(demo.code, demo.stdout + demo.stderr).toBe(0);
    expect(Date.now() - t0).toBeLessThan(30_000);
    for (const line of [
      /root answered allow_once to docs: docs\/CHANGELOG\.md/,
      /created {2}docs\/CHANGELOG\.md by docs/,
      /modified src\/app\.py by refactor\n/,
      /created {2}build\.log by tests/,
      /Matched fuzzily/,
      /accepted: src\/app\.py/,
      /live digest = replay digest/,
    ])
      expect(demo.stdout).toMatch(line);
  });
});
