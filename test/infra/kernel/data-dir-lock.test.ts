/**
 * `<data>/lock`: who holds a data dir, and when a lock left behind is taken over (its process gone, its pid
 * reused, or not a lock skein wrote) rather than refused (a live holder, here or on another host).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DataDirLockedError, lockDataDir, type DataDirLock } from '../../../infra/kernel/data-dir-lock.ts';
import { tempDir } from '../../support/temp-dir.ts';

describe('lockDataDir', () => {
  const temp = tempDir('skein-lock-unit-');
  let dirs = 0;
  const locks: DataDirLock[] = [];
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const lock of locks.splice(0)) lock.release();
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });
  afterAll(() => temp.dispose());

  /** A fresh data dir, holding `lock` as `<data>/lock` when given. */
  function dataDir(lock?: object | string, breaker?: object): string {
    const dir = join(temp.path, `data-${++dirs}`);
    mkdirSync(dir, { recursive: true });
    const text = (v: object | string) => (typeof v === 'string' ? v : JSON.stringify(v));
    if (lock !== undefined) writeFileSync(join(dir, 'lock'), `${text(lock)}\n`);
    if (breaker !== undefined) writeFileSync(join(dir, 'lock.break'), `${text(breaker)}\n`);
    return dir;
  }
  const take = async (dir: string) => {
    const lock = await lockDataDir(dir);
    locks.push(lock);
    return lock;
  };
  const holderOf = (dir: string) => JSON.parse(readFileSync(join(dir, 'lock'), 'utf8')) as Record<string, unknown>;
  /** The pid of a process that has exited (and was reaped). */
  const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;
  /** A live process other than skein, and its start time from /proc. */
  function liveOther(): { pid: number; start: number } {
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    children.push(child);
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'utf8');
    return { pid: child.pid!, start: Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]) };
  }
  const at = '2026-01-01T00:00:00.000Z';

  it('writes who holds it, refuses a second take while held, and removes it on release', async () => {
    const dir = dataDir();
    const lock = await take(dir);
    expect(holderOf(dir)).toEqual({
      pid: process.pid,
      start: expect.any(Number),
      host: hostname(),
      at: expect.any(String),
    });
    const second = lockDataDir(dir);
    await expect(second).rejects.toBeInstanceOf(DataDirLockedError);
    await expect(second).rejects.toThrow(
      new RegExp(
        `^data dir ${dir} is in use by another skein runtime \\(pid ${process.pid}, this process, since .*\\): ` +
          `stop it first \\(Ctrl-C where it runs, or kill ${process.pid}\\), or pass another --data; ` +
          `if no skein runs as pid ${process.pid}, remove ${join(dir, 'lock')}$`,
      ),
    );
    lock.release();
    expect(existsSync(join(dir, 'lock'))).toBe(false);
    await take(dir);
    expect(readdirSync(dir)).toEqual(['lock']);
  });

  it('refuses a second take in this process through another path to the same data dir', async () => {
    const dir = dataDir();
    await take(dir);
    const link = `${dir}-link`;
    symlinkSync(dir, link);
    await expect(lockDataDir(link)).rejects.toThrow(`(pid ${process.pid}, this process, since `);
  });

  it('refuses while another live process holds it, naming its pid', async () => {
    const other = liveOther();
    const dir = dataDir({ pid: other.pid, start: other.start, host: hostname(), at });
    await expect(lockDataDir(dir)).rejects.toThrow(`(pid ${other.pid}, since ${at}): stop it first`);
  });

  it('refuses while a process on another host holds it (its liveness cannot be checked from here)', async () => {
    const dir = dataDir({ pid: 4242, start: 1, host: 'elsewhere', at });
    await expect(lockDataDir(dir)).rejects.toThrow(
      `(pid 4242 on host elsewhere, since ${at}): stop it first (Ctrl-C where it runs, or kill 4242), or pass ` +
        `another --data; if no skein runs as pid 4242 on host elsewhere, remove ${join(dir, 'lock')}`,
    );
  });

  it.each([
    ['a process that is gone (SIGKILL, a crash)', () => ({ pid: deadPid(), start: 1, host: hostname(), at })],
    ['a pid now reused by another process', () => ({ pid: liveOther().pid, start: 1, host: hostname(), at })],
    ['this pid, from an earlier process', () => ({ pid: process.pid, start: 1, host: hostname(), at })],
    ['no holder skein wrote', () => 'not a lock'],
  ])('takes over a lock left by %s', async (_name, holder) => {
    const dir = dataDir(holder());
    await take(dir);
    expect(holderOf(dir)).toMatchObject({ pid: process.pid, host: hostname() });
    expect(readdirSync(dir)).toEqual(['lock']);
  });

  it('takes over a stale lock when a start that was breaking it died and left its break behind', async () => {
    const dir = dataDir({ pid: deadPid(), host: hostname(), at }, { pid: deadPid(), host: hostname(), at });
    await take(dir);
    expect(holderOf(dir)).toMatchObject({ pid: process.pid });
    expect(readdirSync(dir)).toEqual(['lock']);
  });

  it('gives the lock to exactly one of many takes at once', async () => {
    const dir = dataDir({ pid: deadPid(), host: hostname(), at });
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => lockDataDir(dir)));
    const taken = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    locks.push(...taken);
    expect(taken).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(4);
  });
});
