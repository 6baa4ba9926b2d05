/**
 * @module
 * Big diffs off the event loop. The diff of a commit is linear (bounded Myers, then a coarse hunk), but for a
 * rewritten 8 MB file its work and garbage blocked the host for 100–280 ms, so pings and every other agent's
 * commands waited. Texts over `OFF_THREAD_CHARS` are diffed by one worker thread, started on first use;
 * smaller ones stay on this thread, where a round trip would cost more than the diff. The texts go as UTF-8
 * bytes in the transfer list: a structured clone of two 8 MB strings cost ~130 ms of this thread, an encode
 * a few. (A lone surrogate, which UTF-8 cannot carry, shows as U+FFFD in the diff, as it is on disk.) The
 * worker gives the same report as `cappedDiff`, and for review the same as `reviewDiff` (same code, tested
 * against it). A side may be a file's bytes, decoded there as the edit kernel decodes files (`DiffSide`). The
 * worker also finds a big file's hash, UTF-8 validity and line endings (`inspect`), so a whole-file write never
 * decodes or hashes the old 10 MB here. If the worker cannot start or dies, the work runs here again, with a
 * warning: slower, never wrong.
 */
import type { Logger } from 'pino';
import { LazyWorker } from '../common/lazy-worker.ts';
import { reviewDiff } from '../../machines/review/action-log-hunks.ts';
import type { Hunk } from '../../schemas/review.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { cappedDiff, type DiffReport } from './edit-report.ts';
import type { FileFacts, Inspected } from './file-io.ts';

/** Combined length of the two texts above which the diff runs on the worker. */
export const OFF_THREAD_CHARS = 512 * 1024;

export type ReviewDiff = { diff: string; hunks: Hunk[] };

/**
 * One side of a commit's diff: its text, or a file's bytes (as written or read) whose text is `decodeText`'s
 * (BOM dropped, CRLF as LF), with `text()` giving that same text here. Bytes go to the worker as a copy,
 * which costs far less than encoding a 10 MB string again (100–300 ms of this thread on a loaded machine).
 */
export type DiffSide = string | { bytes: Uint8Array; text: () => string; stored?: Stored | undefined };

/**
 * Where the worker may read a side's bytes itself (the blob store's copy of a base, the file just written):
 * it uses them only if their sha256 is `hash`, else the bytes are sent. Copying 10 MB here cost 100–500 ms
 * of this thread on a loaded machine (page faults of the fresh copy); reading there costs it nothing.
 */
export type Stored = { file: string; hash: string };

/** File size from which `inspect` decodes and hashes on the worker. */
export const INSPECT_OFF_THREAD_BYTES = 512 * 1024;

/** `b` as bytes that own their ArrayBuffer whole (safe to move to the worker). */
function owned(b: Uint8Array): Uint8Array {
  return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b : new Uint8Array(b);
}

export class DiffThread {
  readonly #worker: LazyWorker;
  readonly #log: Logger;
  readonly #threshold: number;

  /** `worker`: the worker script (tests give one that dies); default diff-thread-worker.mjs. */
  constructor(log: Logger, threshold = OFF_THREAD_CHARS, worker?: URL) {
    this.#log = log.child({ actor: 'diff-thread' });
    // Two levels up is the package root both from actors/edit/ (sources) and from dist/<x>/ (the bundle).
    const url = worker ?? new URL('../../actors/edit/diff-thread-worker.mjs', import.meta.url);
    this.#worker = new LazyWorker(url, this.#log);
    this.#threshold = threshold;
  }

  /** The capped unified diff of `before` → `after`, shown as `display`. */
  diff = async (display: string, before: DiffSide, after: DiffSide): Promise<DiffReport> => {
    const size = (x: DiffSide) => (typeof x === 'string' ? x.length : x.bytes.byteLength);
    if (this.#worker.broken || size(before) + size(after) < this.#threshold) {
      return cappedDiff(display, textOf(before), textOf(after));
    }
    try {
      const sides = { display, beforeFile: typeof before !== 'string', afterFile: typeof after !== 'string' };
      const stored = { beforeStored: storedOf(before), afterStored: storedOf(after) };
      let answer = await this.#send(
        { ...sides, ...stored },
        stored.beforeStored ? null : bytesOf(before),
        stored.afterStored ? null : bytesOf(after),
      );
      // A stored copy that is gone or not the same bytes: send the bytes.
      if (answer['stale']) answer = await this.#send(sides, bytesOf(before), bytesOf(after));
      if (answer['report']) return answer['report'] as DiffReport;
      throw new Error(String(answer['error'] ?? 'no report'));
    } catch (err) {
      this.#log.warn({ err: (err as Error).message }, 'diff worker failed; diffing on the main thread');
      return cappedDiff(display, textOf(before), textOf(after));
    }
  };

  /**
   * A big file's facts (hash, BOM, line endings, text length) found on the worker, as `textFile` finds them,
   * with its bytes (moved there and back: `bytes` is empty after); undefined for a small file or when the worker
   * cannot take them (the caller decodes here). Throws the RuntimeError `decodeText` throws for binary or invalid
   * UTF-8, and a retryable `unavailable` when the worker died holding the bytes.
   */
  inspect = async (bytes: Buffer, shown: string): Promise<Inspected | undefined> => {
    const size = bytes.byteLength;
    if (this.#worker.broken || size < INSPECT_OFF_THREAD_BYTES) return undefined;
    // A file read into a buffer of its own (confined-fs.ts: the file's bytes and one spare byte) is moved there
    // and back, not copied: a 10 MB copy held this thread 100-500 ms on a loaded machine (fresh pages).
    const own = bytes.byteOffset === 0 && bytes.buffer.byteLength - size <= 1;
    const sent = own ? new Uint8Array(bytes.buffer as ArrayBuffer, 0, size) : new Uint8Array(bytes);
    let answer: Record<string, unknown>;
    try {
      answer = await this.#worker.request({ kind: 'inspect', display: shown, before: sent }, [
        sent.buffer as ArrayBuffer,
      ]);
    } catch (err) {
      if (bytes.byteLength === size) {
        this.#log.warn({ err: (err as Error).message }, 'file inspection failed on the worker; decoding here');
        return undefined;
      }
      throw new RuntimeError(
        ErrorCode.Unavailable,
        `the file thread stopped while it read ${JSON.stringify(shown)}, whose bytes were lost with it ` +
          `(${(err as Error).message}); nothing was written: try again`,
        { retryable: true, cause: err },
      );
    }
    const refused = answer['refused'] as { code: string; message: string } | undefined;
    if (refused) throw new RuntimeError(refused.code, refused.message);
    const back = answer['bytes'] as Uint8Array;
    return { facts: answer['facts'] as FileFacts, bytes: Buffer.from(back.buffer, 0, size) };
  };

  /**
   * Review's diff and hunks of `path` from base to current, as `reviewDiff` gives them for the texts, computed
   * on the worker whatever their size. `load` gives the two as UTF-8 bytes (as the blob store holds them;
   * null: absent), fresh on each call: they are moved to the worker, and loaded again if it fails.
   */
  review = async (path: string, load: () => Promise<[Uint8Array | null, Uint8Array | null]>): Promise<ReviewDiff> => {
    if (!this.#worker.broken) {
      try {
        const answer = await this.#send({ display: path, kind: 'review' }, ...(await load()));
        if (answer['review']) return answer['review'] as ReviewDiff;
        throw new Error(String(answer['error'] ?? 'no review diff'));
      } catch (err) {
        this.#log.warn({ err: (err as Error).message }, 'diff worker failed; diffing on the main thread');
      }
    }
    const [base, current] = await load();
    return reviewDiff(path, decode(base), decode(current));
  };

  #send(message: Record<string, unknown>, before: Uint8Array | null, after: Uint8Array | null) {
    const b = before && owned(before);
    const a = after && owned(after);
    const transfer = [b, a].filter((x): x is Uint8Array => x !== null).map((x) => x.buffer as ArrayBuffer);
    // The same buffer twice in a transfer list is an error: identical texts give one moved buffer.
    return this.#worker.request({ ...message, before: b, after: a }, [...new Set(transfer)]);
  }

  /** Whether a worker thread is running (for tests). */
  get running(): boolean {
    return this.#worker.running;
  }

  close(): Promise<void> {
    return this.#worker.close();
  }
}

const storedOf = (x: DiffSide) => (typeof x === 'string' ? undefined : x.stored);
const textOf = (x: DiffSide) => (typeof x === 'string' ? x : x.text());
/** A side as bytes the worker may own: a copy of a file's bytes (still used here), or the text encoded. */
const bytesOf = (x: DiffSide) => (typeof x === 'string' ? Buffer.from(x, 'utf8') : new Uint8Array(x.bytes));

const decode = (b: Uint8Array | null) =>
  b === null ? null : Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('utf8');
