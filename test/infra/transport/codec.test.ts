import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FactEnvelope } from '../../../schemas/index.ts';
import { decodeFact, looksLikeFact } from '../../../infra/transport/codec.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();

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
  it('accepts only what the schema accepts, unchanged', () => {
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
        if (looksLikeFact(value)) {
          const parsed = FactEnvelope.safeParse(value);
          expect(parsed.success).toBe(true);
          expect(parsed.data).toEqual(value);
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
