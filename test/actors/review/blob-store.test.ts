import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobMissingError, BlobStore, contentHash } from '../../../actors/review/blob-store.ts';

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
});
