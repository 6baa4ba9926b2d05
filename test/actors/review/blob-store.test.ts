import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobMissingError, BlobStore, contentHash } from '../../../actors/review/blob-store.ts';

/** The atomic writes the store asked for, by target path. */
const writes: string[] = [];
vi.mock('../../../actors/common/atomic-write.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../actors/common/atomic-write.ts')>();
  return {
    ...real,
    writeFileAtomic: (path: string, data: string | Uint8Array, mode?: number) => {
      writes.push(path);
      return real.writeFileAtomic(path, data, mode);
    },
  };
});

describe('BlobStore', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'skein-blob-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('stores content under its sha256, once, and reads it back', async () => {
    const store = new BlobStore(join(dir, 'blobs'));
    const h = await store.put('héllo\n');
    expect(h).toBe(createHash('sha256').update(Buffer.from('héllo\n', 'utf8')).digest('hex'));
    expect(await store.get(h)).toBe('héllo\n');
    expect(await store.put('héllo\n')).toBe(h);
    expect(readdirSync(join(dir, 'blobs', h.slice(0, 2)))).toEqual([h]);
    expect(await store.has(h)).toBe(true);
    expect(await store.put('')).toBe(contentHash(''));
    expect(await store.get(contentHash(''))).toBe('');
  });

  it('returns undefined for an absent blob and a clear error from require()', async () => {
    const store = new BlobStore(join(dir, 'blobs'));
    const missing = contentHash('never stored');
    expect(await store.get(missing)).toBeUndefined();
    await expect(store.require(missing, "base of '/w/a.txt'")).rejects.toThrow(BlobMissingError);
    await expect(store.require(missing, "base of '/w/a.txt'")).rejects.toThrow(
      `Content '${missing}' (base of '/w/a.txt') is missing from ` +
        `the blob store at '${join(dir, 'blobs')}'; nothing was written.`,
    );
    await expect(store.get('../../etc/passwd')).rejects.toThrow("'../../etc/passwd' is not a sha256 hex digest");
  });

  it('leaves no temp files behind and survives concurrent puts of the same content', async () => {
    const store = new BlobStore(join(dir, 'blobs'));
    const hashes = await Promise.all(Array.from({ length: 8 }, () => store.put('same')));
    expect(new Set(hashes).size).toBe(1);
    expect(readdirSync(join(dir, 'blobs', hashes[0]!.slice(0, 2)))).toEqual([hashes[0]]);
  });

  it('writes content once while a write of it is in progress; reads and sizes wait for that write', async () => {
    writes.length = 0;
    const store = new BlobStore(join(dir, 'blobs'));
    // An edit and shell tracking storing the same new content at once.
    const [a, b] = await Promise.all([store.put('fresh\n'), store.put(Buffer.from('fresh\n', 'utf8'))]);
    expect(a).toBe(b);
    expect(writes).toHaveLength(1);
    const later = contentHash('later\n');
    const put = store.put('later\n');
    // Asked while the write is in progress: answered once it is done, never "missing".
    expect(await store.size(later, 'a file in review')).toBe(6);
    expect(await store.has(later)).toBe(true);
    expect((await store.getBytes(later))?.toString('utf8')).toBe('later\n');
    await expect(put).resolves.toBe(later);
    expect(writes).toHaveLength(2);
  });

  it('a put waiting for a write that fails tries for itself, and fails with its own error', async () => {
    writes.length = 0;
    // Where the fan-out directory should go is a file: every write fails.
    writeFileSync(join(dir, 'blobs'), 'not a directory');
    const store = new BlobStore(join(dir, 'blobs'));
    const results = await Promise.allSettled([store.put('x'), store.put('x')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(writes).toHaveLength(2);
  });
});
