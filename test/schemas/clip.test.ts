/**
 * The one text cutter of the messages that quote agent text (schemas/clip.ts): never longer than asked, a
 * prefix of the text, whole when it fits, and never ending in half a surrogate pair.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { clip, clipCounted, clipLine } from '../../schemas/clip.ts';
import { propertySeed } from '../support/seed.ts';

const seed = propertySeed();
const lone = (s: string) => /[\ud800-\udbff]$/.test(s);

describe('clip', () => {
  it('fits in max units, keeps a prefix, is whole when it fits, and never ends in half a pair', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.integer({ min: 1, max: 70 }), (text, max) => {
        const out = clip(text, max);
        expect(out.length).toBeLessThanOrEqual(max);
        if (text.length <= max) expect(out).toBe(text);
        else {
          expect(out.endsWith('…')).toBe(true);
          const kept = out.slice(0, -1);
          expect(text.startsWith(kept)).toBe(true);
          expect(lone(kept)).toBe(false);
          expect(kept.length).toBeGreaterThanOrEqual(max - 2);
        }
      }),
      { seed, numRuns: 2_000 },
    );
  });

  it('steps back over a pair the cut would split', () => {
    const text = `abc${'😀'.repeat(5)}`;
    expect(clip(text, 5)).toBe('abc…');
    expect(clip(text, 6)).toBe('abc😀…');
    expect(clipCounted(text, 4)).toBe('abc… (10 more characters)');
  });

  it('clipCounted says how many units were left out', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), fc.integer({ min: 1, max: 70 }), (text, max) => {
        const out = clipCounted(text, max);
        if (text.length <= max) {
          expect(out).toBe(text);
          return;
        }
        const m = /^([\s\S]*)… \((\d+) more characters\)$/.exec(out)!;
        expect(text.startsWith(m[1]!)).toBe(true);
        expect(m[1]!.length + Number(m[2])).toBe(text.length);
        expect(lone(m[1]!)).toBe(false);
      }),
      { seed, numRuns: 2_000 },
    );
  });

  it('clipLine puts the text on one line first', () => {
    expect(clipLine('  rm -rf\n\t/tmp/x  ', 80)).toBe('rm -rf /tmp/x');
    expect(clipLine('a\nb\nc\nd', 4)).toBe('a b…');
  });
});
