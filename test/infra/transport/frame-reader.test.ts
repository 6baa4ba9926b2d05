/**
 * readFrames with a frame thread: a big frame (over the threshold) is decoded on the worker and arrives equal
 * to the on-thread decode, its payload as bytes, and in order with the small frames around it however the
 * stream is chunked (property test, seed printed); a big frame that is not valid JSON is reported as invalid
 * in its place; a big frame lost with its worker (the thread dies) is reported in its place with its op and id,
 * and the frames after it are read on, the next big one on a new worker. readLineFrames gives a big frame as
 * pieces that each own their ArrayBuffer.
 */
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { readFrames } from '../../../infra/transport/frame-reader.ts';
import { FrameLostError, FrameThread, type DecodedFrame } from '../../../infra/transport/frame-thread.ts';
import { readLineFrames } from '../../../infra/transport/line-frames.ts';
import type { SocketFrame } from '../../../infra/transport/wire.ts';
import { propertySeed } from '../../support/seed.ts';

const frames = new FrameThread(pino({ level: 'silent' }));
afterAll(() => frames.close());

const BIG = 4096;

/** What a frame means once decoded: its op and fields, with the payload as bytes (however it was decoded). */
function meaning(d: DecodedFrame | undefined): unknown {
  if (!d) return 'invalid';
  const { frame, payload } = d;
  if (!('data' in frame)) return frame;
  return { ...frame, data: Buffer.from(payload ?? Buffer.from(frame.data, 'base64')).toString('utf8') };
}

/** Feeds `chunks` to readFrames and resolves with the meaning of the first `count` frames, in arrival order. */
function read(chunks: Buffer[], count: number): Promise<unknown[]> {
  const stream = new PassThrough();
  const got: unknown[] = [];
  return new Promise((resolve) => {
    readFrames(stream, {
      maxBytes: 1024 * 1024,
      frames,
      offThreadBytes: BIG,
      onFrame: (d) => {
        got.push(meaning(d));
        if (got.length === count) resolve(got);
      },
      onOversize: () => resolve(['oversize']),
    });
    for (const c of chunks) stream.write(c);
  });
}

/** Cuts `bytes` at the given offsets. */
function cut(bytes: Buffer, at: number[]): Buffer[] {
  const points = [...new Set(at.map((a) => a % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of [...points, bytes.length]) {
    if (p > prev) out.push(bytes.subarray(prev, p));
    prev = Math.max(prev, p);
  }
  return out;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');
const line = (f: SocketFrame) => `${JSON.stringify(f)}\n`;

describe('readFrames with a frame thread', () => {
  it('decodes big frames on the worker, equal and in order with small frames around them (seed printed)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.boolean(), fc.string({ unit: 'grapheme', maxLength: 20 })), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.array(fc.nat(), { maxLength: 20 }),
        async (shapes, at) => {
          const sent: SocketFrame[] = shapes.map(([big, text], rid) => ({
            op: 'res',
            rid,
            // A big one: its line is well over the threshold; a small one: far under it.
            data: b64(big ? `${text}${'ü'.repeat(BIG)}` : text),
          }));
          // A frame with no payload among them, and a CRLF line end.
          const bytes = Buffer.from(`${sent.map(line).join('')}{"op":"unsub","sid":7}\r\n`, 'utf8');
          const got = await read(cut(bytes, at), sent.length + 1);
          const want = [
            ...sent.map((f) => ({ ...f, data: Buffer.from(f.op === 'res' ? f.data : '', 'base64').toString('utf8') })),
            { op: 'unsub', sid: 7 },
          ];
          expect(got).toEqual(want);
        },
      ),
      { seed: propertySeed(), numRuns: 60 },
    );
    expect(frames.running).toBe(true);
  });

  it('reports a big frame that is not JSON as invalid, in its place', async () => {
    const bad = `{"op":"res","rid":1,"data":"${'A'.repeat(BIG)}"\n`;
    const bytes = Buffer.from(`${line({ op: 'unsub', sid: 1 })}${bad}${line({ op: 'unsub', sid: 2 })}`);
    expect(await read([bytes], 3)).toEqual([{ op: 'unsub', sid: 1 }, 'invalid', { op: 'unsub', sid: 2 }]);
  });

  it('gives a big frame to the worker with its payload decoded to bytes, and `data` emptied', async () => {
    const payload = Buffer.alloc(BIG * 2, 0xfe);
    const stream = new PassThrough();
    const got = new Promise<DecodedFrame | undefined>((resolve) =>
      readFrames(stream, { maxBytes: 1 << 20, frames, offThreadBytes: BIG, onFrame: resolve, onOversize: () => {} }),
    );
    stream.write(line({ op: 'pub', subject: 's', data: payload.toString('base64') }));
    const d = await got;
    expect(d?.frame).toEqual({ op: 'pub', subject: 's', data: '' });
    expect(Buffer.from(d!.payload!)).toEqual(payload);
  });
});

describe('readFrames when the frame thread dies', () => {
  it('reports the lost frame in its place with its op and rid, and reads on (a new worker decodes)', async () => {
    const dying = new FrameThread(
      pino({ level: 'silent' }),
      new URL('../../support/dying-frame-worker.mjs', import.meta.url),
    );
    try {
      const stream = new PassThrough();
      const got: unknown[] = [];
      const done = new Promise<void>((resolve) =>
        readFrames(stream, {
          maxBytes: 1 << 20,
          frames: dying,
          offThreadBytes: BIG,
          onFrame: (d) => {
            got.push(meaning(d));
            if (got.length === 4) resolve();
          },
          onLost: (err) => got.push({ lost: err.head, bytes: err.bytes, isLost: err instanceof FrameLostError }),
          onOversize: () => {},
        }),
      );
      const doomed = line({ op: 'res', rid: 41, data: b64(`die-here${'x'.repeat(BIG)}`) });
      const fine = `${'y'.repeat(BIG)}`;
      stream.write(`${line({ op: 'unsub', sid: 1 })}${doomed}${line({ op: 'res', rid: 42, data: b64(fine) })}`);
      stream.write(line({ op: 'unsub', sid: 2 }));
      await done;
      expect(got).toEqual([
        { op: 'unsub', sid: 1 },
        { lost: { op: 'res', rid: 41 }, bytes: Buffer.byteLength(doomed) - 1, isLost: true },
        { op: 'res', rid: 42, data: fine },
        { op: 'unsub', sid: 2 },
      ]);
      expect(dying.running).toBe(true);
    } finally {
      await dying.close();
    }
  });
});

describe('readLineFrames with a big-frame threshold', () => {
  it('gives frames at or over it as pieces owning their buffers, whose bytes are the frame', () => {
    const stream = new PassThrough();
    const lines: string[] = [];
    const big: Uint8Array[][] = [];
    readLineFrames(stream, {
      maxBytes: 1 << 20,
      onLine: (l) => lines.push(l),
      onOversize: () => {},
      big: { bytes: 10, onFrame: (p) => big.push(p) },
    });
    const text = `short\n${'x'.repeat(25)}\r\nmid\n${'y'.repeat(10)}\n`;
    for (const c of cut(Buffer.from(text), [3, 8, 14, 20, 33, 36])) stream.write(c);
    expect(lines).toEqual(['short', 'mid']);
    expect(big.map((p) => Buffer.concat(p).toString())).toEqual([`${'x'.repeat(25)}\r`, 'y'.repeat(10)]);
    for (const piece of big.flat()) expect(piece.byteLength).toBe(piece.buffer.byteLength);
  });
});
