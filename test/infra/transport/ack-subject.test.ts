import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deliveryOf } from '../../../infra/transport/ack-subject.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();
const name = fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/);
const count = fc.integer({ min: 0, max: 999_999_999_999_999 });

describe('deliveryOf: stream sequence, delivery sequence and pending from a JetStream reply subject', () => {
  it('reads the three numbers of every layout nats-server sends (9, 11 and 12 tokens)', () => {
    fc.assert(
      fc.property(
        fc.record({ stream: name, consumer: name, domain: name, account: name, random: name }),
        fc.record({
          delivered: count,
          seq: count,
          dseq: count,
          ts: fc.bigInt({ min: 0n, max: 10n ** 19n }),
          pending: count,
        }),
        fc.constantFrom(9, 11, 12),
        (names, n, tokens) => {
          const tail = `${names.stream}.${names.consumer}.${n.delivered}.${n.seq}.${n.dseq}.${n.ts}.${n.pending}`;
          const reply =
            tokens === 9
              ? `$JS.ACK.${tail}`
              : `$JS.ACK.${names.domain}.${names.account}.${tail}${tokens === 12 ? `.${names.random}` : ''}`;
          expect(deliveryOf(reply)).toEqual({ seq: n.seq, dseq: n.dseq, pending: n.pending });
        },
      ),
      { seed, numRuns: 500 },
    );
  });

  it.each([
    ['a reply inbox', '_INBOX.abc.def'],
    ['another API subject', '$JS.API.CONSUMER.INFO.S.C'],
    ['10 tokens', '$JS.ACK.S.C.1.2.3.4.5.6'],
    ['13 tokens', '$JS.ACK.d.a.S.C.1.2.3.4.5.r.x'],
    ['a sequence that is not a number', '$JS.ACK.S.C.1.x2.3.4.5'],
    ['an empty pending', '$JS.ACK.S.C.1.2.3.4.'],
    ['a negative delivery sequence', '$JS.ACK.S.C.1.2.-3.4.5'],
    ['a number past 15 digits', '$JS.ACK.S.C.1.1234567890123456.3.4.5'],
    ['the empty string', ''],
  ])('is undefined for %s (the caller asks nats.js then)', (_what, reply) => {
    expect(deliveryOf(reply)).toBeUndefined();
  });
});
