import fc from 'fast-check';
import { OutputRing } from '../../../actors/terminal/output-ring.ts';
import { propertySeed } from '../../support/seed.ts';

/** The model: every byte ever appended, kept whole. */
function model() {
  const parts: Buffer[] = [];
  return {
    append: (data: string) => parts.push(Buffer.from(data, 'utf8')),
    bytes: () => Buffer.concat(parts),
  };
}

const text = fc.string({ unit: fc.constantFrom('a', 'b', '\r\n', '\x1b[1m', 'é', '€', '😀'), maxLength: 300 });

describe('OutputRing', () => {
  it('keeps the last maxBytes of the stream (whole characters), any range of them read as the stream had it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 700 }),
        fc.array(fc.tuple(text, fc.nat(), fc.nat()), { maxLength: 60 }),
        (max, steps) => {
          const ring = new OutputRing(max);
          const all = model();
          for (const [data, x, y] of steps) {
            ring.append(data, Buffer.byteLength(data, 'utf8'));
            all.append(data);
            const bytes = all.bytes();
            expect(ring.end).toBe(bytes.length);
            // Only the oldest bytes leave, at most the limit stays, and no more is dropped than a character's tail.
            expect(ring.size).toBeLessThanOrEqual(max);
            expect(ring.size).toBeGreaterThanOrEqual(Math.min(bytes.length, max) - 3);
            if (ring.start < ring.end) expect(bytes[ring.start]! & 0xc0).not.toBe(0x80);
            const from = bytes.length === 0 ? 0 : x % (bytes.length + 1);
            const to = from + (y % (bytes.length - from + 1));
            const a = Math.max(from, ring.start);
            expect(ring.read(from, to)).toBe(a >= to ? '' : bytes.subarray(a, to).toString('utf8'));
            expect(ring.read(0)).toBe(bytes.subarray(ring.start).toString('utf8'));
          }
        },
      ),
      { seed: propertySeed(), numRuns: 300 },
    );
  });

  it('starts small and grows only as output comes (an idle terminal holds no 8 MiB buffer)', () => {
    const ring = new OutputRing(8 * 1024 * 1024);
    ring.append('$ ', 2);
    expect(ring.read(0)).toBe('$ ');
    const big = 'x'.repeat(100_000);
    ring.append(big, big.length);
    expect(ring.read(0)).toBe(`$ ${big}`);
    expect(ring.start).toBe(0);
  });
});
