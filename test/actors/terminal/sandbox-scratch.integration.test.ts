/**
 * The scratch directories of sandboxes (sandbox-scratch.ts) against what an agent can leave in them: a live review
 * made a tree 2,045 levels deep in /tmp, which `fs.rm` could not remove (ENAMETOOLONG) and on which the next
 * start's `rmSync` threw (call stack), so the runtime did not start again on that data dir.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeScratch, releaseScratch, SandboxScratch } from '../../../actors/terminal/sandbox-scratch.ts';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A directory tree `depth` levels deep under `root` (made relative to each level, as a shell's `cd` would). */
function deepTree(root: string, depth: number): void {
  const start = process.cwd();
  try {
    process.chdir(root);
    for (let i = 0; i < depth; i++) {
      mkdirSync('d');
      process.chdir('d');
    }
  } finally {
    process.chdir(start);
  }
}

async function until(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  return check();
}

describe('sandbox scratch directories', () => {
  it('a tree deeper than PATH_MAX in a closed terminal’s /tmp is removed', async () => {
    dir = mkdtempSync(join(tmpdir(), 'skein-scratch-test-'));
    const scratch = join(dir, 'sandbox', 't1');
    makeScratch('t1', scratch, { '/tmp': join(scratch, 'tmp') });
    deepTree(join(scratch, 'tmp'), 2100);
    await releaseScratch('t1');
    expect(existsSync(scratch)).toBe(false);
  });

  it('a start on a data dir a dead runtime left such a tree in neither throws nor keeps it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'skein-scratch-test-'));
    const base = join(dir, 'sandbox');
    mkdirSync(join(base, 't-left'), { recursive: true });
    deepTree(join(base, 't-left'), 2100);
    const scratch = new SandboxScratch(base, '5%');
    expect(existsSync(base)).toBe(false);
    // Moved aside at once, removed in the background.
    expect(await until(() => !readdirSync(dir).some((n) => n.startsWith('sandbox.stale-')))).toBe(true);
    await scratch.dispose();
  });
});
