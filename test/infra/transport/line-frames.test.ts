/**
 * readLineFrames splits a byte stream into newline-delimited frames whatever the chunking (property test,
 * seed printed), decodes UTF-8 split across chunks, drops a trailing CR, and stops at the first frame
 * longer than its limit: exactly `maxBytes` passes, one byte more ends the stream's reading.
 */
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readLineFrames } from '../../../infra/transport/line-frames.ts';
import { propertySeed } from '../../support/seed.ts';

function feed(chunks: Buffer[], maxBytes: number) {
  const stream = new PassThrough();
  const lines: string[] = [];
  const oversize: number[] = [];
  readLineFrames(stream, { maxBytes, onLine: (l) => lines.push(l), onOversize: (b) => oversize.push(b) });
  for (const c of chunks) stream.write(c);
  return { lines, oversize };
}

/** Cuts `bytes` at the given (sorted, deduplicated) offsets. */
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

describe('readLineFrames', () => {
  it('gives the same frames however the stream is chunked (seed printed)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.string({ unit: 'grapheme', maxLength: 40 }).map((s) => s.replace(/[\r\n]/g, '')),
          {
            maxLength: 12,
          },
        ),
        fc.array(fc.nat(), { maxLength: 30 }),
        (frames, at) => {
          const bytes = Buffer.from(frames.map((f) => `${f}\n`).join(''), 'utf8');
          const { lines, oversize } = feed(cut(bytes, at), 1_000);
          expect(lines).toEqual(frames);
          expect(oversize).toEqual([]);
        },
      ),
      { seed: propertySeed(), numRuns: 300 },
    );
  });

  it('drops a trailing CR, and keeps a frame without its newline until the newline comes', () => {
    const { lines } = feed([Buffer.from('a\r\nb'), Buffer.from('c\n'), Buffer.from('tail')], 100);
    expect(lines).toEqual(['a', 'bc']);
  });

  it('accepts a frame of exactly maxBytes and stops at one byte more, with nothing read after', () => {
    const exact = feed([Buffer.from(`${'x'.repeat(10)}\n`), Buffer.from('ok\n')], 10);
    expect(exact).toEqual({ lines: ['x'.repeat(10), 'ok'], oversize: [] });
    const over = feed([Buffer.from('x'.repeat(6)), Buffer.from('x'.repeat(5)), Buffer.from('\nlater\n')], 10);
    expect(over.lines).toEqual([]);
    expect(over.oversize).toEqual([11]);
  });

  it('stops on a frame with no newline at all, without buffering more than the limit', () => {
    const chunks = Array.from({ length: 50 }, () => Buffer.alloc(64 * 1024, 0x61));
    const { lines, oversize } = feed(chunks, 1024 * 1024);
    expect(lines).toEqual([]);
    expect(oversize).toHaveLength(1);
    expect(oversize[0]).toBeGreaterThan(1024 * 1024);
    expect(oversize[0]).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
  });
});
