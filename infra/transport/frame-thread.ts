/**
 * @module
 * Big socket frames decoded off the event loop. A frame of the embedded socket carries its payload in base64
 * inside JSON: for an 8 MB `file.write` or a big reply, the UTF-8 decode, `JSON.parse` and base64 decode took
 * 100–275 ms of one tick on the host (and as much on a client), so every ping waited. Frames of at least
 * `OFF_THREAD_BYTES` go to one worker thread as the pieces line-frames.ts collected (moved, not copied); the
 * frame comes back with its payload as bytes (moved too), and only the schema check of the small rest runs
 * here. A worker that cannot start leaves the decode to this thread: slower, never different. A worker that
 * dies while decoding takes that frame's bytes with it (they were moved): `decode` then rejects at once with a
 * `FrameLostError` that says what the frame's first bytes told (its op and request id), so whoever waits for
 * it is told now, not at its timeout; the next big frame gets a new worker (`FRAME_THREAD_RESTARTS` times,
 * then this thread decodes).
 */
import { LazyWorker, type WorkerLog } from '../../actors/common/lazy-worker.ts';
import { decodeFrame, SocketFrame } from './wire.ts';

/** Frame size from which the decode runs on the worker (smaller ones cost less than the round trip). */
export const OFF_THREAD_BYTES = 512 * 1024;

/** Worker deaths survived by starting a new one; past them big frames are decoded on this thread. */
export const FRAME_THREAD_RESTARTS = 3;

/** What a frame's first bytes say of it (JSON.stringify of a frame puts `op` first, then `rid` or `sid`). */
export type FrameHead = { op?: string | undefined; rid?: number | undefined; sid?: number | undefined };

/** The worker died while decoding a big frame, whose bytes went with it. */
export class FrameLostError extends Error {
  override name = 'FrameLostError';
  readonly head: FrameHead;
  readonly bytes: number;
  constructor(head: FrameHead, bytes: number, cause: unknown) {
    super(
      `a ${bytes}-byte ${head.op ?? 'socket'} frame was lost: the thread decoding it died ` +
        `(${cause instanceof Error ? cause.message : String(cause)})`,
      { cause },
    );
    this.head = head;
    this.bytes = bytes;
  }
}

/** The op and id a frame starts with, read from its first bytes (before they are moved to the worker). */
export function frameHead(first: Uint8Array | undefined): FrameHead {
  const text = first ? Buffer.from(first.buffer, first.byteOffset, Math.min(first.byteLength, 96)).toString() : '';
  const m = /^\{"op":"([a-z_]+)"(?:,"(rid|sid)":(\d+))?/.exec(text);
  if (!m) return {};
  return { op: m[1], ...(m[2] ? { [m[2]]: Number(m[3]) } : {}) };
}

/** A frame with its payload: `payload` holds the decoded `data` when the worker decoded it (`data` is then ''). */
export type DecodedFrame = { frame: SocketFrame; payload?: Uint8Array | undefined };

export class FrameThread {
  readonly #worker: LazyWorker;

  /**
   * `log` hears the worker's deaths (the runtime passes its logger's `frame-thread` child); `worker`: the
   * worker script (tests give one that dies); default frame-thread-worker.mjs.
   */
  constructor(log: WorkerLog, worker?: URL) {
    // Two levels up is the package root both from infra/transport/ (sources) and from dist/<x>/ (the bundle).
    const url = worker ?? new URL('../../infra/transport/frame-thread-worker.mjs', import.meta.url);
    this.#worker = new LazyWorker(url, log, { restarts: FRAME_THREAD_RESTARTS });
  }

  /**
   * The frame in `pieces` (as line-frames.ts gives a big one: each piece owns its ArrayBuffer, which is moved
   * to the worker), or `undefined` when it is not a valid frame. Rejects with `FrameLostError` when the worker
   * died holding the pieces.
   */
  async decode(pieces: Uint8Array[]): Promise<DecodedFrame | undefined> {
    if (!this.#worker.broken) {
      const head = frameHead(pieces[0]);
      const bytes = pieces.reduce((n, p) => n + p.byteLength, 0);
      let answer: Record<string, unknown>;
      try {
        answer = await this.#worker.request(
          { pieces },
          pieces.map((p) => p.buffer as ArrayBuffer),
        );
      } catch (err) {
        // Moved, not copied: the frame is gone with the worker (unless it never started: then decode here).
        if (!this.#worker.broken || pieces.every((p) => p.buffer.byteLength === 0)) {
          throw new FrameLostError(head, bytes, err);
        }
        return this.#inline(pieces);
      }
      if (answer['failed']) return undefined;
      const parsed = SocketFrame.safeParse(answer['frame']);
      if (!parsed.success) return undefined;
      return { frame: parsed.data, payload: answer['payload'] as Uint8Array | undefined };
    }
    return this.#inline(pieces);
  }

  #inline(pieces: Uint8Array[]): DecodedFrame | undefined {
    try {
      const bytes = Buffer.concat(pieces);
      const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
      return { frame: decodeFrame(bytes.toString('utf8', 0, end)) };
    } catch {
      return undefined;
    }
  }

  /** Whether a worker thread is running (for tests). */
  get running(): boolean {
    return this.#worker.running;
  }

  close(): Promise<void> {
    return this.#worker.close();
  }
}
