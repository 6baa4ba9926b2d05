/**
 * @module
 * A content-addressed file store in the data dir: `<dir>/<aa>/<sha256>`.
 * Write-once (a present blob is never rewritten) and atomic (temp file,
 * fsync, rename), so a blob is either whole or absent. Holds action-log
 * bases and results; facts reference them by hash.
 */
import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { writeFileAtomic } from '../common/atomic-write.ts';
import { statNow } from '../common/stat-now.ts';

const HASH = /^[0-9a-f]{64}$/;

/** sha256 of the UTF-8 bytes of `content`, hex. */
export function contentHash(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}

export class BlobMissingError extends RuntimeError {
  override name = 'BlobMissingError';
  constructor(hash: string, dir: string, what: string) {
    super(
      ErrorCode.NotFound,
      `Content '${hash}' (${what}) is missing from the blob store at '${dir}'; nothing was ` +
        `written. Restore the data dir from a backup, or accept the change to drop it from review.`,
      { details: { hash, dir } },
    );
  }
}

/** Blobs never change, so reads are cached in memory up to this many bytes (least recently used evicted). */
export const BLOB_CACHE_BYTES = 32 * 1024 * 1024;

export class BlobStore {
  readonly dir: string;
  /**
   * Writes not finished yet, by hash: a put of content already being written waits for that write instead of
   * writing it again, and a read or size of it waits too. An edit and shell tracking store the same new
   * content at once (a fleet's round wrote ~146 of its ~310 blobs twice: each a new inode and two fsyncs), and a
   * second put that saw the first one's file renamed into place returned before its directory was fsync'd.
   */
  readonly #writing = new Map<string, Promise<void>>();
  #cache = new Map<string, string>();
  #cacheBytes = 0;
  #cacheLimit: number;
  constructor(dir: string, options: { cacheBytes?: number } = {}) {
    this.dir = dir;
    this.#cacheLimit = options.cacheBytes ?? BLOB_CACHE_BYTES;
  }

  /**
   * Stores `content` (a string is stored as UTF-8) and returns its hash. Idempotent. `hash`: its sha256, when
   * the caller has it already (an edit hashed the bytes it read and wrote: a 10 MB file's hash is ~15 ms).
   */
  async put(content: string | Uint8Array, hash = contentHash(content)): Promise<string> {
    if (typeof content === 'string') this.#remember(hash, content, Buffer.byteLength(content, 'utf8'));
    const target = this.pathOf(hash);
    const pending = this.#writing.get(hash);
    if (pending) {
      try {
        await pending;
        return hash;
      } catch {
        // That write failed: this put tries for itself (below), and fails with its own error if it must.
      }
    }
    if (exists(target)) return hash;
    // Another put may have begun while this one waited for a failed write: share it.
    const again = this.#writing.get(hash);
    if (again) return again.then(() => hash);
    const write = writeFileAtomic(target, content, 0o644);
    this.#writing.set(hash, write);
    try {
      await write;
    } finally {
      if (this.#writing.get(hash) === write) this.#writing.delete(hash);
    }
    return hash;
  }

  /** Waits for a write of `hash` in progress, if any (its outcome is its put's to report). */
  async #settled(hash: string): Promise<void> {
    await this.#writing.get(hash)?.catch(() => undefined);
  }

  /** The content of `hash` as UTF-8 text, or undefined when absent. */
  async get(hash: string): Promise<string | undefined> {
    const cached = this.#cache.get(hash);
    if (cached !== undefined) {
      this.#cache.delete(hash);
      this.#cache.set(hash, cached);
      return cached;
    }
    const bytes = await this.getBytes(hash);
    if (bytes === undefined) return undefined;
    const text = bytes.toString('utf8');
    this.#remember(hash, text, bytes.length);
    return text;
  }

  #remember(hash: string, text: string, size: number): void {
    if (size > this.#cacheLimit / 4 || this.#cache.has(hash)) return;
    this.#cache.set(hash, text);
    this.#cacheBytes += size;
    for (const [k, v] of this.#cache) {
      if (this.#cacheBytes <= this.#cacheLimit) break;
      this.#cache.delete(k);
      this.#cacheBytes -= Buffer.byteLength(v, 'utf8');
    }
  }

  async getBytes(hash: string): Promise<Buffer | undefined> {
    if (!HASH.test(hash))
      throw new RuntimeError(
        ErrorCode.InvalidMessage,
        `'${hash}' is not a sha256 hex digest; pass a hash returned by put().`,
      );
    await this.#settled(hash);
    try {
      return await readFile(this.pathOf(hash));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** Like get, but a missing blob is a `BlobMissingError` naming `what` (e.g. "base of '/w/a.ts'"). */
  async require(hash: string, what: string): Promise<string> {
    const t = await this.get(hash);
    if (t === undefined) throw new BlobMissingError(hash, this.dir, what);
    return t;
  }

  /** The size of `hash`'s content in bytes, without reading it; a missing blob is a `BlobMissingError`. */
  async size(hash: string, what: string): Promise<number> {
    // Always the file's size: measuring a cached 8 MB string (Buffer.byteLength) held the loop 30-100 ms.
    await this.#settled(hash);
    try {
      // On this thread: one system call (actors/common/stat-now.ts says why not the pool).
      return statSync(this.pathOf(hash)).size;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BlobMissingError(hash, this.dir, what);
      throw err;
    }
  }

  async has(hash: string): Promise<boolean> {
    await this.#settled(hash);
    return exists(this.pathOf(hash));
  }

  pathOf(hash: string): string {
    return join(this.dir, hash.slice(0, 2), hash);
  }
}

function exists(p: string): boolean {
  return statNow(p) !== undefined;
}
