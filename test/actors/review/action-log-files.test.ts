import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PathLock, applyWrites, readDisk } from '../../../actors/review/action-log-files.ts';

describe('action-log file effects', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skein-alf-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes, creates parent dirs and deletes; reads absent files as null', async () => {
    writeFileSync(join(dir, 'a'), 'old');
    writeFileSync(join(dir, 'gone'), 'x');
    await applyWrites([
      { path: join(dir, 'a'), content: 'new' },
      { path: join(dir, 'sub/deep/b'), content: 'b' },
      { path: join(dir, 'gone'), content: null },
      { path: join(dir, 'never-existed'), content: null },
    ]);
    expect(await readDisk([join(dir, 'a'), join(dir, 'sub/deep/b'), join(dir, 'gone')])).toEqual({
      [join(dir, 'a')]: 'new',
      [join(dir, 'sub/deep/b')]: 'b',
      [join(dir, 'gone')]: null,
    });
  });

  it('writes nothing when one of the files cannot be staged', async () => {
    writeFileSync(join(dir, 'a'), 'old');
    writeFileSync(join(dir, 'file'), 'i am a file');
    await expect(
      applyWrites([
        { path: join(dir, 'a'), content: 'new' },
        { path: join(dir, 'file/under-a-file'), content: 'x' },
        { path: join(dir, 'file'), content: null },
      ]),
    ).rejects.toThrow(/ENOTDIR|EEXIST/);
    expect(readFileSync(join(dir, 'a'), 'utf8')).toBe('old');
    expect(readdirSync(dir).sort()).toEqual(['a', 'file']);
  });

  it('PathLock runs holders of the same path one after another, and different paths together', async () => {
    const lock = new PathLock();
    const order: string[] = [];
    let releaseFirst!: () => void;
    const first = lock.withLock(['/w/x'], async () => {
      order.push('first start');
      await new Promise<void>((r) => (releaseFirst = r));
      order.push('first end');
    });
    const second = lock.withLock(['/w/y', '/w/x'], async () => void order.push('second'));
    const other = lock.withLock(['/w/z'], async () => void order.push('other'));
    await other;
    expect(order).toEqual(['first start', 'other']);
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(['first start', 'other', 'first end', 'second']);
    expect(lock.isLocked('/w/x')).toBe(false);
    await expect(lock.withLock(['/w/x'], async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(lock.isLocked('/w/x')).toBe(false);
  });
});
