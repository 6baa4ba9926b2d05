/**
 * @module
 * Newline-delimited frames read from a stream, for the embedded socket protocol. Replaces node:readline,
 * which re-scanned its growing string with a regex on every chunk (tens of milliseconds of one event-loop
 * tick for an 8 MB frame) and had no size limit: a client could send gigabytes without a newline and grow
 * the host's memory until it died. Here chunks are kept as Buffers, each frame is decoded once, and a
 * frame longer than `maxBytes` ends the connection (`onOversize`) before it is buffered further.
 */
import type { Readable } from 'node:stream';

export type LineFrameOptions = {
  /** The longest frame accepted, in bytes (without its newline). */
  maxBytes: number;
  onLine: (line: string) => void;
  /** A frame grew past `maxBytes`; nothing more is read from the stream. */
  onOversize: (bytes: number) => void;
};

export function readLineFrames(stream: Readable, options: LineFrameOptions): void {
  let parts: Buffer[] = [];
  let pending = 0;
  let stopped = false;
  const emit = (last: Buffer) => {
    parts.push(last);
    const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, pending + last.length);
    parts = [];
    pending = 0;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 13 ? bytes.length - 1 : bytes.length;
    options.onLine(bytes.toString('utf8', 0, end));
  };
  stream.on('data', (chunk: Buffer) => {
    if (stopped) return;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      if (pending + (nl - start) > options.maxBytes) return stop(pending + (nl - start));
      emit(chunk.subarray(start, nl));
      start = nl + 1;
      if (stopped) return;
    }
    const rest = chunk.length - start;
    if (rest === 0) return;
    if (pending + rest > options.maxBytes) return stop(pending + rest);
    parts.push(chunk.subarray(start));
    pending += rest;
  });
  function stop(bytes: number): void {
    stopped = true;
    parts = [];
    pending = 0;
    options.onOversize(bytes);
  }
}
