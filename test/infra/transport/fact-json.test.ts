import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeFact, encode } from '../../../infra/transport/codec.ts';
import { DIRECT_TEXT_CHARS, encodeFact } from '../../../infra/transport/fact-json.ts';
import type { Fact } from '../../../schemas/index.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();
const SUBJECT = 'skein.out.main.t1';

function outputFact(data: string, plainText?: string): Fact {
  return {
    id: 'f-1',
    type: 'terminal.output.received',
    at: '2026-12-02T00:00:00.000Z',
    agentId: 'main',
    causationId: 'c-1',
    data: {
      terminalId: 't1',
      offset: 12,
      bytes: Buffer.byteLength(data),
      data,
      ...(plainText === undefined ? {} : { plainText }),
      sequences: [],
      sequenceCount: 0,
      isInteractive: false,
    },
  } as Fact;
}

/** What a reader of the log gets: the payload parsed and validated, as JSON.stringify's payload would be. */
function expectSameFact(fact: Fact) {
  const bytes = encodeFact(fact);
  expect(decodeFact(SUBJECT, bytes)).toEqual(decodeFact(SUBJECT, encode(fact)));
  expect(JSON.parse(Buffer.from(bytes).toString('utf8'))).toEqual(JSON.parse(JSON.stringify(fact)));
}

const big = (unit: string) => unit.repeat(Math.ceil((DIRECT_TEXT_CHARS + 7) / unit.length));

describe('encodeFact: the JSON of a fact, its big output text written once', () => {
  it('writes printable ASCII without escapes straight into the payload', () => {
    const text = big('a');
    const fact = outputFact(text);
    const bytes = encodeFact(fact);
    expect(bytes.length).toBe(encode(fact).length);
    expectSameFact(fact);
  });

  it('skips the scan when the caller knows the text needs no escaping', () => {
    const fact = outputFact(big('plain text, no quotes '));
    expect(Buffer.compare(encodeFact(fact, true), encodeFact(fact))).toBe(0);
    expectSameFact(fact);
  });

  it('escapes what JSON escapes: quotes, backslashes, CR LF, other control bytes', () => {
    expectSameFact(outputFact(big('say "hi" \\ back\r\n'), big('say "hi" \\ back\n')));
    expectSameFact(outputFact(big('\x1b[1mbold\x1b[0m\t\x00\x07\x7f')));
  });

  it('leaves non-ASCII text, lone surrogates and small facts to encode, byte for byte', () => {
    for (const fact of [
      outputFact(big('é😀')),
      outputFact(big('\ud800x')),
      outputFact('short'),
      outputFact(big('ÿ')),
    ]) {
      expect(Buffer.compare(encodeFact(fact), encode(fact))).toBe(0);
    }
  });

  it('keeps every other field, whatever the fact (fields before and after the text, no causation)', () => {
    const { causationId: _c, ...noCause } = outputFact(big('x'));
    expectSameFact(noCause as Fact);
    const other = { ...outputFact(''), data: { data: big('b'), zz: 'after', n: 1, nested: { data: 'inner' } } };
    expect(JSON.parse(Buffer.from(encodeFact(other as never)).toString('utf8'))).toEqual(other);
  });

  it(`decodes to the same fact for any text (seed ${seed})`, () => {
    const piece = fc.oneof(
      fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
      fc.constantFrom('\r\n', '"', '\\', '\x1b[0m', '\t', 'é', '\ud83d'),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 50 }), fc.nat(3), (pieces, filler) => {
        const text = pieces.join('') + 'abc'.repeat(filler === 0 ? 0 : DIRECT_TEXT_CHARS / 3);
        const fact = outputFact(text);
        expect(JSON.parse(Buffer.from(encodeFact(fact)).toString('utf8'))).toEqual(JSON.parse(JSON.stringify(fact)));
      }),
      { seed, numRuns: 60 },
    );
  });
});
