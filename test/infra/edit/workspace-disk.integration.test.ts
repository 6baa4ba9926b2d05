/**
 * File tools on a workspace disk that is full or read-only (a 64 KiB tmpfs mounted in the workspace, live): the
 * reply names the path the agent gave and says the file is unchanged, retryable when the disk is full, and the
 * file on disk is the old one. Found by a review: the reply was `internal: ENOSPC: no space left on device,
 * write`, or named the temp file's /proc path. Needs root to mount (CI runs as root); skipped with the reason
 * printed otherwise.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

let rt: TestRuntime;
let small: string;
let mounted: string | undefined;

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded' });
  small = join(rt.workspace, 'small');
  mkdirSync(small);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', small], { stdio: 'pipe' });
    mounted = small;
  } catch (err) {
    console.log(`workspace-disk: skipped, cannot mount a tmpfs: ${String((err as Error).message).split('\n')[0]}`);
  }
});
afterAll(async () => {
  // Unmounted first: the runtime's disposal removes its directory, the mount point with it.
  if (mounted) execFileSync('umount', ['-l', mounted], { stdio: 'pipe' });
  await rt?.dispose();
});

describe('file tools on a full or read-only workspace disk', () => {
  it('a full disk: unavailable, retryable, naming the path; the old file kept, no temp file left', async (ctx) => {
    if (!mounted) ctx.skip();
    writeFileSync(join(small, 'a.txt'), 'old\n');
    const reply = await rt.call('file.write', { path: 'small/a.txt', content: 'x'.repeat(200_000) });
    expect(reply).toMatchObject({
      ok: false,
      error: {
        code: 'unavailable',
        retryable: true,
        message:
          'Path "small/a.txt" could not be written: the disk holding it is full (ENOSPC); the file is unchanged. ' +
          'Free space on that disk and retry.',
      },
    });
    expect(readFileSync(join(small, 'a.txt'), 'utf8')).toBe('old\n');
    expect(readdirSync(small)).toEqual(['a.txt']);
    // Space is there for a small write: the same tool works.
    expect(await rt.call('file.write', { path: 'small/a.txt', content: 'new\n' })).toMatchObject({ ok: true });
  });

  it('a read-only disk: invalid_state naming the path and EROFS; the file is kept', async (ctx) => {
    if (!mounted) ctx.skip();
    execFileSync('mount', ['-o', 'remount,ro', mounted!], { stdio: 'pipe' });
    try {
      const reply = await rt.call('file.write', { path: 'small/a.txt', content: 'changed\n' });
      expect(reply).toMatchObject({
        ok: false,
        error: {
          code: 'invalid_state',
          message:
            'Path "small/a.txt" could not be written: its file system is read-only (EROFS); the file is unchanged. ' +
            'Ask the user to make it writable.',
        },
      });
      expect(readFileSync(join(small, 'a.txt'), 'utf8')).toBe('new\n');
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', mounted!], { stdio: 'pipe' });
    }
  });
});
