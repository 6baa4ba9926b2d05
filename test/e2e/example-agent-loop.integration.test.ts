/**
 * docs/examples/agent-loop.ts, run as a user would (`node --import tsx`,
 * importing `skein/client` through package.json exports) from a
 * subdirectory of a workspace whose runtime is up: the scripted brain fixes
 * the bug through a sub-agent, the tests pass, and the parent's review
 * accepts the change. The same run with an unfixable bug fails and rejects.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultDataDir } from '../../infra/kernel/data-dir.ts';
import { cleanEnv } from '../support/cli.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXAMPLE = join(ROOT, 'docs', 'examples', 'agent-loop.ts');
/** tsx by path: `--import tsx` would resolve it from the workspace, which does not install skein's tools. */
const TSX = pathToFileURL(join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;

const CALC = 'export function add(a, b) {\n  return a - b;\n}\n';
const TEST =
  "import { add } from './calc.js';\n" +
  "if (add(2, 3) !== 5) { console.log('FAIL add(2, 3) = ' + add(2, 3)); process.exit(1); }\n" +
  "console.log('ok 1 - add');\n";

/** The XDG_STATE_HOME of the test's runtime: where the example looks for the data dir. */
let state = '';

function runExample(cwd: string, args: string[] = []) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', TSX, EXAMPLE, ...args],
      { cwd, env: cleanEnv({ XDG_STATE_HOME: state }), timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

describe('the example agent loop (docs/examples/agent-loop.ts)', () => {
  let rt: TestRuntime;
  let ws: string;

  beforeAll(async () => {
    // `skein/client` resolves to dist/client (built by npm install); rebuild it so the run sees this source.
    await build({
      absWorkingDir: ROOT,
      entryPoints: ['infra/client/index.ts'],
      outdir: 'dist/client',
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      logLevel: 'warning',
    });
    const dir = mkdtempSync(join(tmpdir(), 'skein-example-'));
    ws = join(dir, 'ws');
    state = join(dir, 'state');
    // The data dir `skein up` in the workspace would use (outside it, under XDG_STATE_HOME), so the example
    // finds the runtime by the same rule as every client.
    rt = await startTestRuntime({
      mode: 'embedded',
      dir,
      flags: { dataDir: defaultDataDir(ws, { XDG_STATE_HOME: state }) },
    });
    writeFileSync(join(ws, 'package.json'), '{"type":"module"}\n');
    writeFileSync(join(ws, 'calc.js'), CALC);
    writeFileSync(join(ws, 'test.js'), TEST);
    mkdirSync(join(ws, 'src'), { recursive: true });
  }, 60_000);
  afterAll(async () => rt?.dispose());

  it('reads, edits, tests and gets its change accepted, from a subdirectory', async () => {
    const r = await runExample(join(ws, 'src'), ['calc.js', 'node test.js']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/spawned sub-agent a-/);
    expect(r.stdout).toContain('read ');
    expect(r.stdout).toContain('ok 1 - add');
    expect(r.stdout).toMatch(/\[fact\] a-\S+ completed: \{"tests":"pass"\}/);
    expect(r.stdout).toContain('accepted 1 file(s); tests pass');
    expect(readFileSync(join(ws, 'calc.js'), 'utf8')).toBe('export function add(a, b) {\n  return a + b;\n}\n');
    const review = await rt.call('review.list', {});
    expect(review).toMatchObject({ ok: true, files: [] });
  });

  it('rejects the change when the tests still fail, leaving the file as it was', async () => {
    writeFileSync(join(ws, 'calc.js'), 'export function add(a, b) {\n  return a - b - 1;\n}\n');
    const r = await runExample(ws, ['calc.js', 'node test.js']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('rejected: tests fail');
    expect(readFileSync(join(ws, 'calc.js'), 'utf8')).toBe('export function add(a, b) {\n  return a - b - 1;\n}\n');
  });
});
