import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactEnvelope } from '../../../schemas/index.ts';
import { decodeFact, looksLikeFact } from '../../../infra/transport/codec.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();

/** JSON.stringify drops undefined members; the envelope check and the schema both allow them. */
const stripUndefined = (v: unknown): unknown => (v && typeof v === 'object' ? JSON.parse(JSON.stringify(v)) : v);

const good = {
  id: 'c-1:0',
  type: 'agent.spawned',
  at: '2026-11-29T20:00:00.000Z',
  agentId: 'main',
  causationId: 'c-1',
  data: {
    agentId: 'a',
    parentId: 'main',
    label: 'x',
    workspace: '/w',
    depth: 1,
    task: null,
    hasPolicy: false,
    worker: null,
  },
};

describe(`the fast envelope check agrees with FactEnvelope (seed ${seed})`, () => {
  it('accepts exactly what the schema accepts unchanged, in both directions', () => {
    const field = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.constant(undefined),
      fc.constant(null),
      fc.constantFrom('main', 'agent.spawned', '2026-11-29T20:00:00Z', 'a b', ''),
    );
    const candidate = fc.record(
      { id: field, type: field, at: field, agentId: field, causationId: field, data: fc.jsonValue(), extra: field },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(candidate, fc.constant(good), fc.jsonValue()), (value) => {
        const parsed = FactEnvelope.safeParse(value);
        if (looksLikeFact(value)) {
          expect(parsed.success).toBe(true);
          expect(parsed.data).toEqual(value);
        }
        // And the other way: whatever the schema takes unchanged (no key stripped, data present), the fast
        // check takes too. A fast check that refused everything would pass the direction above alone.
        const unchanged = parsed.success && isDeepStrictEqual(stripUndefined(parsed.data), stripUndefined(value));
        if (unchanged && typeof value === 'object' && value !== null && 'data' in value) {
          expect(looksLikeFact(value)).toBe(true);
        }
      }),
      { seed, numRuns: 2000 },
    );
  });

  it('takes a well-formed fact and explains a broken one through the schema', () => {
    expect(looksLikeFact(good)).toBe(true);
    expect(decodeFact('s', JSON.stringify(good))).toEqual(good);
    expect(() => decodeFact('s', JSON.stringify({ ...good, at: 'yesterday' }))).toThrow(
      /at: expected an ISO 8601 UTC timestamp/,
    );
    expect(() => decodeFact('s', JSON.stringify({ ...good, agentId: 'a.b' }))).toThrow(/agentId/);
  });
});

describe('the fast envelope check, field by field', () => {
  it('takes the edge values the schema takes', () => {
    expect(looksLikeFact({ ...good, id: 'x' })).toBe(true);
    expect(looksLikeFact({ ...good, id: 'x'.repeat(256) })).toBe(true);
    expect(looksLikeFact({ ...good, id: '!~' })).toBe(true);
    expect(looksLikeFact({ ...good, causationId: undefined })).toBe(true);
    const { causationId: _c, ...noCause } = good;
    expect(looksLikeFact(noCause)).toBe(true);
    expect(looksLikeFact({ ...good, data: null })).toBe(true);
  });

  it.each([
    ['an empty id', { id: '' }],
    ['an id over 256 characters', { id: 'x'.repeat(257) }],
    ['an id with a space inside', { id: 'a b' }],
    ['an id with a space at the end', { id: 'ab ' }],
    ['an id with a space at the start', { id: ' ab' }],
    ['a numeric id', { id: 7 }],
    ['a numeric type', { type: 7 }],
    ['a type that is not a dotted path', { type: 'Agent Spawned' }],
    ['a numeric at', { at: 7 }],
    ['an at that is not a timestamp', { at: 'yesterday' }],
    ['a numeric agentId', { agentId: 7 }],
    ['an agentId with a dot', { agentId: 'a.b' }],
    ['a numeric causationId', { causationId: 7 }],
    ['an extra key', { extra: 1 }],
    // Arrays whose text form would pass the patterns: the type checks, not the regexes, must refuse them.
    ['a type in an array', { type: ['agent.spawned'] }],
    ['an at in an array', { at: ['2026-11-29T20:00:00.000Z'] }],
    ['an agentId in an array', { agentId: ['main'] }],
  ])('refuses %s', (_name, change) => {
    const value = { ...good, ...change };
    expect(looksLikeFact(value)).toBe(false);
  });

  it.each([[null], [[good]], ['fact'], [7]])('refuses %j', (value) => {
    expect(looksLikeFact(value)).toBe(false);
  });

  it('refuses an envelope without data', () => {
    const { data: _d, ...noData } = good;
    expect(looksLikeFact(noData)).toBe(false);
  });

  it('decodes through the schema what the fast check refuses but the schema takes (an extra key, stripped)', () => {
    expect(decodeFact('s', JSON.stringify({ ...good, extra: 1 }))).toEqual(good);
  });
});
