/**
 * The atomic write's steps on the file system. Only the temp file's creation, a missing directory's and the two
 * fsyncs wait in the thread pool (each await there is a turn of an event loop a fleet keeps busy: issue 15; a
 * new inode is CPU the loop's thread should not spend); the other opens, the stat, renames and closes are system
 * calls on the loop's thread, and steps that change nothing are left out. What the write guarantees stays: the mode
 * given, the bytes fsync'd before the rename, the directory fsync'd after it, on the descriptor it went through.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { writeFileAtomic } from '../../../actors/common/atomic-write.ts';

/** The file system calls made, in order, by name: `open <name>`, `fsync <name>`, `mkdir`, `chmod` … */
const calls: string[] = [];
/** What each descriptor opened names (`<temp>` for the temp file). */
const named = new Map<number, string>();

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const name = (path: unknown) => {
    const last = String(path).split('/').pop()!;
    return last.startsWith('.') ? '<temp>' : last;
  };
  const wrapped = {
    openSync: (...a: Parameters<typeof real.openSync>) => {
      const fd = real.openSync(...a);
      named.set(fd, name(a[0]));
      calls.push(`open ${name(a[0])}`);
      return fd;
    },
    open: (path: string, flags: number, mode: number, cb: (err: NodeJS.ErrnoException | null, fd: number) => void) =>
      real.open(path, flags, mode, (err, fd) => {
        if (!err) named.set(fd, name(path));
        calls.push(`open ${name(path)} in the pool`);
        cb(err, fd);
      }),
    mkdir: ((...a: Parameters<typeof real.mkdir>) => {
      calls.push('mkdir in the pool');
      return real.mkdir(...a);
    }) as typeof real.mkdir,
    fsync: (fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      calls.push(`fsync ${named.get(fd)}`);
      real.fsync(fd, cb);
    },
    fstatSync: ((...a: Parameters<typeof real.fstatSync>) => {
      calls.push('stat');
      return real.fstatSync(...a);
    }) as typeof real.fstatSync,
    fchmodSync: (...a: Parameters<typeof real.fchmodSync>) => {
      calls.push('chmod');
      return real.fchmodSync(...a);
    },
    mkdirSync: ((...a: Parameters<typeof real.mkdirSync>) => {
      calls.push('mkdir');
      return real.mkdirSync(...a);
    }) as typeof real.mkdirSync,
    renameSync: (...a: Parameters<typeof real.renameSync>) => {
      calls.push('rename');
      return real.renameSync(...a);
    },
    closeSync: (fd: number) => {
      calls.push(`close ${named.get(fd)}`);
      return real.closeSync(fd);
    },
  };
  return { ...real, ...wrapped, default: { ...real, ...wrapped } };
});

describe('writeFileAtomic', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skein-atomic-'));
    calls.length = 0;
    named.clear();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('into an existing directory: no mkdir, no needless chmod, the directory fsync’d on its handle', async () => {
    const target = join(dir, 'blob');
    await writeFileAtomic(target, 'one\n', 0o644);
    expect(readFileSync(target, 'utf8')).toBe('one\n');
    expect(statSync(target).mode & 0o7777).toBe(0o644);
    // The code before this test: mkdir, open dir, open temp, chmod, sync, stat, close, rename, open ., sync, close,
    // close.
    expect(calls).toEqual([
      `open ${basename(dir)}`,
      'open <temp> in the pool',
      'stat',
      'fsync <temp>',
      'close <temp>',
      'rename',
      `fsync ${basename(dir)}`,
      `close ${basename(dir)}`,
    ]);
  });

  it('makes a missing directory, and sets the mode the umask would have taken bits of', async () => {
    const target = join(dir, 'a', 'b', 'blob');
    const umask = process.umask(0o077);
    try {
      await writeFileAtomic(target, 'two\n', 0o644);
    } finally {
      process.umask(umask);
    }
    expect(readFileSync(target, 'utf8')).toBe('two\n');
    expect(statSync(target).mode & 0o7777).toBe(0o644);
    expect(calls).toContain('mkdir in the pool');
    expect(calls).not.toContain('mkdir');
    expect(calls.indexOf('chmod')).toBeGreaterThan(-1);
    expect(calls.indexOf('chmod')).toBeLessThan(calls.indexOf('fsync <temp>'));
  });
});
