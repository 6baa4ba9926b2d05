/**
 * @module
 * Reads the embedded socket's frames from a stream, in order, for both ends (socket-server.ts, socket-bus.ts):
 * small frames are decoded at once; a big one is decoded on the frame thread (frame-thread.ts), and the
 * frames read after it wait for it, so each connection's frames are still handled in the order they came;
 * the stream is paused meanwhile, so what waits is at most what one read brought. A
 * big frame lost with its worker is reported in its place (`onLost`), and the frames after it go on.
 */
import type { Readable } from 'node:stream';
import { readLineFrames } from './line-frames.ts';
import { FrameLostError, OFF_THREAD_BYTES, type DecodedFrame, type FrameThread } from './frame-thread.ts';
import { decodeFrame } from './wire.ts';

export type FrameReaderOptions = {
  /** The longest frame accepted, in bytes (a function: read at each frame); a longer one stops the reading. */
  maxBytes: number | (() => number);
  /** Where big frames are decoded; undefined: on this thread. */
  frames: FrameThread | undefined;
  /** Each frame in order; `undefined` for one that is not a valid frame, with why when it is known. */
  onFrame: (decoded: DecodedFrame | undefined, why?: string) => void;
  onOversize: (bytes: number) => void;
  /**
   * A big frame lost with the worker that decoded it (`FrameLostError`: its op and id, read from its first
   * bytes); the frames after it are read on. Undefined: it counts as an invalid frame (`onFrame(undefined)`).
   */
  onLost?: ((err: FrameLostError) => void) | undefined;
  /** Frame size from which `frames` decodes (tests use a small one). */
  offThreadBytes?: number | undefined;
};

export function readFrames(stream: Readable, options: FrameReaderOptions): void {
  /** Frames read while a big one is being decoded: they wait for it. */
  let waiting: Array<() => void> | undefined;
  const now = (line: string) => {
    let decoded: DecodedFrame | undefined;
    let why: string | undefined;
    try {
      decoded = { frame: decodeFrame(line) };
    } catch (err) {
      decoded = undefined;
      why = err instanceof Error ? err.message : String(err);
    }
    options.onFrame(decoded, why);
  };
  const later = (pieces: Uint8Array[]) => {
    waiting = [];
    // No more is read until it is decoded: a client sending big frames faster than they decode had every one
    // of them queued here (600 frames of 1.2 MB in 9 s: +575 MB of the runtime's memory, more for more).
    stream.pause();
    const lost = (err: unknown) => {
      if (err instanceof FrameLostError && options.onLost) options.onLost(err);
      else options.onFrame(undefined);
    };
    void options
      .frames!.decode(pieces)
      .then(options.onFrame, lost)
      .finally(() => {
        const queued = waiting ?? [];
        waiting = undefined;
        for (let i = 0; i < queued.length; i++) {
          queued[i]!();
          // A big frame among the queued ones: the rest wait for it in turn.
          if (waiting) {
            (waiting as Array<() => void>).push(...queued.slice(i + 1));
            return;
          }
        }
        stream.resume();
      });
  };
  readLineFrames(stream, {
    maxBytes: options.maxBytes,
    onLine: (line) => (waiting ? waiting.push(() => now(line)) : now(line)),
    onOversize: options.onOversize,
    big: options.frames
      ? {
          bytes: options.offThreadBytes ?? OFF_THREAD_BYTES,
          onFrame: (pieces) => (waiting ? waiting.push(() => later(pieces)) : later(pieces)),
        }
      : undefined,
  });
}
