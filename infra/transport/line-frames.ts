/**
 * @module
 * Newline-delimited frames read from a stream, for the embedded socket protocol. Replaces node:readline,
 * which re-scanned its growing string with a regex on every chunk (tens of milliseconds of one event-loop
 * tick for an 8 MB frame) and had no size limit: a client could send gigabytes without a newline and grow
 * the host's memory until it died. Here chunks are kept as Buffers, each frame is decoded once, and a
 * frame longer than `maxBytes` ends the connection (`onOversize`) before it is buffered further. A frame
 * that grows past `big.bytes` is kept as owned pieces and handed over undecoded (`big.onFrame`), so that
 * its decode can run on another thread: neither the concatenation nor the decode of 8 MB lands in one tick.
 */
import type { Readable } from 'node:stream';

export type LineFrameOptions = {
  /** The longest frame accepted, in bytes (without its newline); a function: read at each frame (it may change). */
  maxBytes: number | (() => number);
  onLine: (line: string) => void;
  /** A frame grew past `maxBytes`; nothing more is read from the stream. */
  onOversize: (bytes: number) => void;
  /**
   * Frames of at least `bytes` come to `onFrame` as their raw bytes (a trailing CR kept), in pieces that each
   * own their ArrayBuffer whole, so they may be transferred to a worker. Each piece is copied as it arrives,
   * so the cost is spread over the reads. Undefined: every frame comes to `onLine`.
   */
  big?: { bytes: number; onFrame: (pieces: Uint8Array[]) => void } | undefined;
};

/** A copy of `b` in an ArrayBuffer of its own (a read's Buffer may share one with others). */
const owned = (b: Uint8Array): Uint8Array => new Uint8Array(b);

export function readLineFrames(stream: Readable, options: LineFrameOptions): void {
  const { maxBytes } = options;
  const max = typeof maxBytes === 'function' ? maxBytes : () => maxBytes;
  let parts: Uint8Array[] = [];
  let pending = 0;
  /** The frame being read is big: `parts` are owned copies. */
  let big = false;
  let stopped = false;
  const emit = (last: Buffer) => {
    if (big) {
      parts.push(owned(last));
      const pieces = parts;
      parts = [];
      pending = 0;
      big = false;
      options.big!.onFrame(pieces);
      return;
    }
    parts.push(last);
    const bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, pending + last.length);
    parts = [];
    pending = 0;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
    options.onLine(bytes.toString('utf8', 0, end));
  };
  const keep = (rest: Buffer) => {
    pending += rest.length;
    if (!big && options.big && pending >= options.big.bytes) {
      // Past the threshold: from now on this frame's bytes are copied piece by piece as they come.
      big = true;
      parts = parts.map(owned);
      parts.push(owned(rest));
      return;
    }
    parts.push(big ? owned(rest) : rest);
  };
  stream.on('data', (chunk: Buffer) => {
    if (stopped) return;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      if (pending + (nl - start) > max()) return stop(pending + (nl - start));
      const line = chunk.subarray(start, nl);
      if (!big && options.big && pending + line.length >= options.big.bytes) {
        big = true;
        parts = parts.map(owned);
      }
      emit(line);
      start = nl + 1;
      if (stopped) return;
    }
    const rest = chunk.length - start;
    if (rest === 0) return;
    if (pending + rest > max()) return stop(pending + rest);
    keep(chunk.subarray(start));
  });
  function stop(bytes: number): void {
    stopped = true;
    parts = [];
    pending = 0;
    options.onOversize(bytes);
  }
}
