/**
 * `file.write` through the runtime creates missing parent directories inside the workspace (issue 14,
 * friction), and the created file is still recorded in the action log: the wiring resolves the path (creating
 * the parents) before the write, so review sees it. A symlinked parent leading out creates nothing outside.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileReview } from '../../../schemas/review.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded' });
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
});

describe('file.write with missing parents (real runtime, embedded)', () => {
  it('creates the parents, writes the file, and the action log records it', async () => {
    const reply = await rt.call('file.write', { path: 'src/new/deep/x.ts', content: 'export const x = 1;\n' });
    expect(reply.ok, JSON.stringify(reply)).toBe(true);
    expect(readFileSync(join(rt.workspace, 'src/new/deep/x.ts'), 'utf8')).toBe('export const x = 1;\n');
    const list = await rt.call('review.list', {});
    expect(list.ok).toBe(true);
    const files = (list as unknown as { files: FileReview[] }).files;
    expect(files.map((f) => f.path)).toContain(join(rt.workspace, 'src/new/deep/x.ts'));
  });

  it('refuses a parent that is a symlink out of the workspace, creating nothing there', async () => {
    const outside = join(rt.workspace, '..', 'outside-target');
    mkdirSync(outside, { recursive: true });
    symlinkSync(outside, join(rt.workspace, 'escape'));
    const reply = await rt.call('file.write', { path: 'escape/canary/c.txt', content: 'CANARY' });
    expect(reply.ok).toBe(false);
    expect(JSON.stringify(reply)).toMatch(/outside the agent's workspace/);
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(outside, 'canary'))).toBe(false);
  });
});

describe('file.write with missing parents under a policy that denies writes', () => {
  let denied: TestRuntime;
  beforeAll(async () => {
    denied = await startTestRuntime({ mode: 'embedded', policy: { default: 'deny' } });
  }, 60_000);
  afterAll(async () => {
    await denied?.dispose();
  });

  it('creates no directory before the gate: a denied write leaves the tree untouched', async () => {
    const reply = await denied.call('file.write', { path: 'canary-dir/sub/x.txt', content: 'CANARY' });
    expect(reply.ok).toBe(false);
    expect(existsSync(join(denied.workspace, 'canary-dir'))).toBe(false);
  });
});
