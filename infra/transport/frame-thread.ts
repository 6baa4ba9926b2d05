/**
 * @module
 * Big socket frames decoded off the event loop. A frame of the embedded socket carries its payload in base64
 * inside JSON: for an 8 MB `file.write` or a big reply, the UTF-8 decode, `JSON.parse` and base64 decode took
 * 100–275 ms of one tick on the host (and as much on a client), so every ping waited. Frames of at least
 * `OFF_THREAD_BYTES` go to one worker thread as the pieces line-frames.ts collected (moved, not copied); the
 * frame comes back with its payload as bytes (moved too), and only the schema check of the small rest runs
 * here. A worker that cannot start or dies leaves the decode to this thread: slower, never different.
 */
import type { Logger } from 'pino';
import { LazyWorker } from '../../actors/common/lazy-worker.ts';
import { decodeFrame, SocketFrame } from './wire.ts';

/** Frame size from which the decode runs on the worker (smaller ones cost less than the round trip). */
export const OFF_THREAD_BYTES = 512 * 1024;

/** A frame with its payload: `payload` holds the decoded `data` when the worker decoded it (`data` is then ''). */
export type DecodedFrame = { frame: SocketFrame; payload?: Uint8Array | undefined };

export class FrameThread {
  readonly #worker: LazyWorker;

  constructor(log: Logger) {
    // Two levels up is the package root both from infra/transport/ (sources) and from dist/<x>/ (the bundle).
    const url = new URL('../../infra/transport/frame-thread-worker.mjs', import.meta.url);
    this.#worker = new LazyWorker(url, log.child({ actor: 'frame-thread' }));
  }

  /**
   * The frame in `pieces` (as line-frames.ts gives a big one: each piece owns its ArrayBuffer, which is moved
   * to the worker), or `undefined` when it is not a valid frame.
   */
  async decode(pieces: Uint8Array[]): Promise<DecodedFrame | undefined> {
    if (!this.#worker.broken) {
      let answer: Record<string, unknown>;
      try {
        answer = await this.#worker.request(
          { pieces },
          pieces.map((p) => p.buffer as ArrayBuffer),
        );
      } catch {
        // The worker died holding the pieces (moved, not copied): the frame is lost, and the caller treats it
        // as invalid (the server closes the connection, so the client learns at once and may resend).
        return undefined;
      }
      if (answer['failed']) return undefined;
      const parsed = SocketFrame.safeParse(answer['frame']);
      if (!parsed.success) return undefined;
      return { frame: parsed.data, payload: answer['payload'] as Uint8Array | undefined };
    }
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
