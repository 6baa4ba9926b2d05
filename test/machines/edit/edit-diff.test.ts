import fc from 'fast-check';
import {
  applyCharOperations,
  type CharOperation,
  MAX_STEP_CELLS,
  StreamingDiff,
} from '../../../machines/edit/edit-diff.ts';
import { randomChunks, seeded, seeds } from '../../support/edit-random.ts';
import { propertySeed } from '../../support/seed.ts';

function streamOps(old: string, chunks: readonly string[]): { batches: CharOperation[][]; all: CharOperation[] } {
  const d = new StreamingDiff(old);
  const batches = chunks.map((c) => d.pushNew(c));
  batches.push(d.finish());
  return { batches, all: batches.flat() };
}

describe('streaming char diff', () => {
  it('inserts new text as it streams and deletes old text only at finish', () => {
    const { batches } = streamOps('hello world\n', ['goodbye ', 'world\n']);
    // Deleting "hello " (-120) to keep "world\n" (+8.4) loses to inserting it (-6): zed's bias.
    expect(batches).toEqual([
      [{ op: 'insert', text: 'goodbye ' }],
      [{ op: 'insert', text: 'world\n' }],
      [{ op: 'delete', length: 12 }],
    ]);
  });

  it('keeps long equal runs; at a push the tail is inserted, the old tail deleted at finish', () => {
    const old = 'function add(a, b) {\n  return a + b;\n}\n';
    const neu = 'function add(a, b) {\n  return a - b;\n}\n';
    const { batches, all } = streamOps(old, [neu]);
    expect(batches).toEqual([
      [
        { op: 'keep', length: 32 },
        { op: 'insert', text: '- b;\n}\n' },
      ],
      [{ op: 'delete', length: 7 }],
    ]);
    expect(applyCharOperations(old, all)).toBe(neu);
  });

  it('counts multi-byte characters in UTF-16 units', () => {
    const { all } = streamOps('a🦀b', ['a', '🦀', 'c']);
    expect(applyCharOperations('a🦀b', all)).toBe('a🦀c');
    const kept = all.filter((o) => o.op === 'keep').reduce((n, o) => n + (o as { length: number }).length, 0);
    expect(kept).toBe(3);
  });

  it.each(seeds(10))('ops always turn old into new, for random chunkings (seed %i)', (seed) => {
    const random = seeded(seed);
    const words = ['foo', 'bar', ' ', '\n', 'baz(', ')', '{', '}', 'é', '🦀'];
    const pick = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join('');
    const old = pick(40);
    const neu = pick(40);
    expect(applyCharOperations(old, streamOps(old, randomChunks(neu, random, 6)).all)).toBe(neu);
  });

  const seed = propertySeed();
  it('aligns a chunk too big for one step a slice at a time, as if it had come in those slices', () => {
    // 40,000 old characters: a step holds MAX_STEP_CELLS / 40,001 = 24 new ones.
    const old = Array.from({ length: 4_000 }, (_, i) => `line ${i % 97}\n`)
      .join('')
      .slice(0, 40_000);
    const step = Math.floor(MAX_STEP_CELLS / (old.length + 1));
    const chunk = old.slice(100, 100 + 10 * step).replace(/line/g, 'LINE');
    const whole = streamOps(old, [chunk]);
    const slices = Array.from({ length: 10 }, (_, k) => chunk.slice(k * step, (k + 1) * step));
    expect(whole.batches[0]).toEqual(streamOps(old, slices).batches.slice(0, -1).flat());
    expect(applyCharOperations(old, whole.all)).toBe(chunk);
    // What one push holds: a step's columns (before, all 240 of them: 115 MB for this chunk).
    const d = new StreamingDiff(old);
    d.pushNew(chunk);
    expect(d.peakCells).toBeLessThanOrEqual(MAX_STEP_CELLS + 2 * (old.length + 1));
  });

  it(`property: ops reproduce the new text (fast-check seed ${seed})`, () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 60 }),
        fc.array(fc.string({ maxLength: 8 }), { maxLength: 8 }),
        (old, chunks) => {
          expect(applyCharOperations(old, streamOps(old, chunks).all)).toBe(chunks.join(''));
        },
      ),
      { seed, numRuns: 200 },
    );
  });
});
