/**
 * The atomic write's steps on the file system: each is an await, and each await a turn of an event loop that a
 * fleet keeps busy (issue 15: ~8 ms a turn under 32 agents), so steps that change nothing are left out. What
 * the write guarantees stays: the mode given, the bytes fsync'd before the rename, the directory fsync'd after.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { writeFileAtomic } from '../../../actors/common/atomic-write.ts';

/** The file system calls made, in order: `open <name>`, `mkdir`, and each handle method (`chmod`, `sync` …). */
const calls: string[] = [];

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const fsync = (fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
    calls.push('fsync fd');
    real.fsync(fd, cb);
  };
  return { ...real, default: { ...real, fsync }, fsync };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...real,
    mkdir: (...args: Parameters<typeof real.mkdir>) => {
      calls.push('mkdir');
      return real.mkdir(...args);
    },
    open: async (...args: Parameters<typeof real.open>) => {
      const name = String(args[0]).split('/').pop()!;
      calls.push(`open ${name.startsWith('.') ? '<temp>' : name}`);
      const fh = await real.open(...args);
      return new Proxy(fh, {
        get(target, key) {
          const value = Reflect.get(target, key, target);
          if (typeof value !== 'function') return value;
          return (...a: unknown[]) => {
            if (key !== 'writeFile') calls.push(String(key));
            return value.apply(target, a);
          };
        },
      });
    },
    rename: (...args: Parameters<typeof real.rename>) => {
      calls.push('rename');
      return real.rename(...args);
    },
  };
});

describe('writeFileAtomic', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skein-atomic-'));
    calls.length = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('into an existing directory: no mkdir, no needless chmod, the directory fsync’d on its handle', async () => {
    const target = join(dir, 'blob');
    await writeFileAtomic(target, 'one\n', 0o644);
    expect(readFileSync(target, 'utf8')).toBe('one\n');
    expect(statSync(target).mode & 0o7777).toBe(0o644);
    // The code before: mkdir, open dir, open temp, chmod, sync, stat, close, rename, open ., sync, close, close.
    expect(calls).toEqual([
      `open ${basename(dir)}`,
      'open <temp>',
      'stat',
      'sync',
      'close',
      'rename',
      'fsync fd',
      'close',
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
    expect(calls).toContain('mkdir');
    expect(calls.indexOf('chmod')).toBeGreaterThan(-1);
    expect(calls.indexOf('chmod')).toBeLessThan(calls.indexOf('sync'));
  });
});
