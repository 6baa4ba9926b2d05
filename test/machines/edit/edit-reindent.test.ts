import fc from 'fast-check';
import {
  computeIndentDelta,
  computeRestIndentDelta,
  type IndentDelta,
  convertIndent,
  indentConversion,
  lineIndent,
  Reindenter,
  reindent,
} from '../../../machines/edit/edit-reindent.ts';
import { feeds, seeds } from '../../support/edit-random.ts';
import { propertySeed } from '../../support/seed.ts';

const SEEDS = seeds(10);
const sp = (delta: number) => ({ kind: 'spaces' as const, delta });
const tb = (delta: number) => ({ kind: 'tabs' as const, delta });

function streamed(chunks: readonly string[], first: IndentDelta, rest: IndentDelta): string {
  const r = new Reindenter(first, rest);
  return chunks.map((c) => r.push(c)).join('') + r.finish();
}

describe('indent deltas', () => {
  it('uses tabs when the buffer line has tabs, spaces otherwise', () => {
    expect(computeIndentDelta(lineIndent('\t\tx'), lineIndent('x'))).toEqual(tb(2));
    expect(computeIndentDelta(lineIndent('    x'), lineIndent('  x'))).toEqual(sp(2));
    expect(computeIndentDelta(lineIndent('x'), lineIndent('    x'))).toEqual(sp(-4));
  });
  it('rest delta: the agreed delta of non-blank pairs, else the fallback', () => {
    const pairs = (xs: Array<[string, string]>) =>
      xs.map(
        ([b, q]) => [lineIndent(b), lineIndent(q)] as [ReturnType<typeof lineIndent>, ReturnType<typeof lineIndent>],
      );
    expect(
      computeRestIndentDelta(
        sp(4),
        pairs([
          ['    a', 'a'],
          ['      b', '  b'],
          ['', '   '],
        ]),
      ),
    ).toEqual(sp(4));
    expect(
      computeRestIndentDelta(
        sp(0),
        pairs([
          ['    a', 'a'],
          ['      b', '  b'],
        ]),
      ),
    ).toEqual(sp(4));
    expect(
      computeRestIndentDelta(
        sp(1),
        pairs([
          ['    a', 'a'],
          ['   b', ' b'],
        ]),
      ),
    ).toEqual(sp(1));
    expect(computeRestIndentDelta(sp(3), [])).toEqual(sp(3));
  });
});

const TABLE: Array<[string, string, IndentDelta, IndentDelta, string]> = [
  ['adds indent to every line', 'a\n  b\nc', sp(4), sp(4), '    a\n      b\n    c'],
  ['removes indent, clamped at zero', '    a\n  b\n      c', sp(-4), sp(-4), 'a\nb\n  c'],
  ['first line separate from the rest', 'a\n    b', sp(0), sp(4), 'a\n        b'],
  ['blank and whitespace-only lines untouched', 'a\n\n   \nb\n', sp(2), sp(2), '  a\n\n   \n  b\n'],
  ['tab delta', 'x\n\ty', tb(1), tb(1), '\tx\n\t\ty'],
];

describe.each(TABLE)('Reindenter: %s', (_n, input, first, rest, expected) => {
  it.each(feeds(input, SEEDS).map((f) => [f.name, f.chunks] as const))('fed %s', (_f, chunks) => {
    expect(streamed(chunks, first, rest)).toBe(expected);
  });
});

describe('indent style conversion', () => {
  it('converts a space-indented query to a tab-indented buffer', () => {
    const conv = indentConversion(['\tif x {', '\t\ty()', '\t}'], ['    if x {', '        y()', '    }']);
    expect(conv).toEqual({ to: 'tabs', width: 4 });
    expect(convertIndent('    a\n        b\n      c', conv!)).toBe('\ta\n\t\tb\n\t  c');
    expect(reindent('    if x {\n        z()\n    }', tb(0), tb(0), conv)).toBe('\tif x {\n\t\tz()\n\t}');
  });
  it("converts tabs to the buffer's space width", () => {
    const conv = indentConversion(['  a', '    b'], ['\ta', '\t\tb']);
    expect(conv).toEqual({ to: 'spaces', width: 2 });
  });
  it('no conversion when styles agree', () => {
    expect(indentConversion(['  a'], ['    a'])).toBeUndefined();
  });
});

const seed = propertySeed();
describe(`reindent properties (seed ${seed})`, () => {
  it('indenting by d then by -d round-trips', () => {
    const line = fc.tuple(fc.nat(12), fc.stringMatching(/^[a-z(){}]{0,12}$/)).map(([n, s]) => ' '.repeat(n) + s);
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 8 }),
        (ls, d1, d2) => {
          const text = ls.join('\n');
          const there = reindent(text, sp(d1), sp(d2));
          expect(reindent(there, sp(-d1), sp(-d2))).toBe(text);
        },
      ),
      { seed, numRuns: 300 },
    );
  });
  it('streaming equals whole for any chunking', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(' ', '\t', '\n', 'a', 'b') }),
        fc.integer({ min: -4, max: 4 }),
        fc.array(fc.nat(5)),
        (text, d, cuts) => {
          const chunks: string[] = [];
          let at = 0;
          for (const c of cuts) {
            chunks.push(text.slice(at, at + c));
            at += c;
          }
          chunks.push(text.slice(at));
          expect(streamed(chunks, sp(d), sp(d))).toBe(reindent(text, sp(d), sp(d)));
        },
      ),
      { seed, numRuns: 300 },
    );
  });
});
