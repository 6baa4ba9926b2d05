/**
 * The matcher indexes its buffer only when the fuzzy search needs it (issue 13: a 50k-line file's index held the
 * host ~90 ms for an edit whose old text was there exactly). An exact old text, given whole or streamed, is
 * resolved without the index, with the same ranges and line pairs; a streamed one that stops matching exactly
 * falls back to the line DP and resolves as it always did.
 */
import { describe, expect, it } from 'vitest';
import { StreamingFuzzyMatcher } from '../../../machines/edit/edit-matcher.ts';

const buffer = Array.from({ length: 2_000 }, (_, i) => `export const v${i} = ${i};\n`).join('');
const lines = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `export const v${from + i} = ${from + i};\n`).join('');
const offsetOf = (row: number) => buffer.indexOf(`export const v${row} = `);

describe('StreamingFuzzyMatcher, lazily indexed', () => {
  it('resolves an exact old text given whole without indexing, rows counted as the index counts them', () => {
    const m = new StreamingFuzzyMatcher(buffer);
    expect(m.push(lines(1000, 1003), true)).toBeUndefined();
    const r = m.finish();
    expect(r).toEqual({
      kind: 'exact',
      matches: [
        {
          range: { start: offsetOf(1000), end: offsetOf(1003) - 1 },
          linePairs: [
            [0, 1000],
            [1, 1001],
            [2, 1002],
          ],
          similarity: 1,
        },
      ],
    });
    expect(m.indexed).toBe(false);
  });

  it('gives a streamed exact old text its provisional line ranges without indexing', () => {
    const m = new StreamingFuzzyMatcher(buffer);
    const provisional = [m.push('export const v1500 = 1500;\nexport const v15'), m.push('01 = 1501;\n'), m.push('exp')];
    expect(provisional).toEqual([
      { start: offsetOf(1500), end: offsetOf(1501) - 1 },
      { start: offsetOf(1500), end: offsetOf(1502) - 1 },
      { start: offsetOf(1500), end: offsetOf(1502) - 1 },
    ]);
    expect(m.push('ort const v1502 = 1502;\n')).toEqual({ start: offsetOf(1500), end: offsetOf(1503) - 1 });
    expect(m.finish().kind).toBe('exact');
    expect(m.indexed).toBe(false);
  });

  it('falls back to the line DP once the streamed lines stop matching exactly, as a fresh matcher resolves', () => {
    const query = `${lines(700, 702)}export const v702 = 7O2;\n${lines(703, 705)}`;
    const streamed = new StreamingFuzzyMatcher(buffer);
    for (const line of query.split(/(?<=\n)/)) streamed.push(line);
    expect(streamed.indexed).toBe(true);
    const whole = new StreamingFuzzyMatcher(buffer);
    whole.push(query, true);
    const expected = whole.finish();
    expect(expected.kind).toBe('fuzzy');
    expect(expected.matches.map((x) => x.range)).toEqual([{ start: offsetOf(700), end: offsetOf(705) - 1 }]);
    expect(streamed.finish()).toEqual(expected);
  });

  it('gives the first of several exact occurrences as the provisional range, then the one the lines single out', () => {
    const twice = `a\nb\nc\nx\na\nb\nd\n`;
    const m = new StreamingFuzzyMatcher(twice);
    expect(m.push('a\nb\n')).toEqual({ start: 0, end: 3 });
    expect(m.push('d\n')).toEqual({ start: 8, end: 13 });
    expect(m.finish().matches.map((x) => x.range)).toEqual([{ start: 8, end: 13 }]);
    expect(m.indexed).toBe(false);
  });
});
