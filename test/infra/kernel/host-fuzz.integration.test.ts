/**
 * Thousands of random and mutated payloads thrown at the host over real
 * NATS: every one is answered with a well-formed reply, nothing crashes, and
 * the host still works afterwards.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeReply } from '../../../infra/transport/codec.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';
import { propertySeed } from '../../support/seed.ts';

const seed = propertySeed();

const VALID = [
  { subject: 'skein.cmd.main.agent.spawn', body: { id: 'x', data: { label: 'fuzz' } } },
  { subject: 'skein.cmd.main.agent.get', body: { data: {} } },
  { subject: 'skein.cmd.main.runtime.ping', body: { data: {} } },
];

/** Random JSON-ish values, sometimes in the right shape, mostly not. */
const jsonValue = fc.jsonValue({ maxDepth: 3 });
const mutatedBody = fc.record({
  id: fc.oneof(fc.string(), fc.integer(), fc.constant(undefined)),
  type: fc.oneof(fc.constantFrom('agent.spawn', 'agent.get', 'AGENT', ''), fc.string()),
  agentId: fc.oneof(fc.constantFrom('main', 'other', ''), fc.string()),
  data: fc.oneof(
    jsonValue,
    fc.record({ label: fc.oneof(fc.string(), jsonValue), agentId: fc.oneof(fc.string(), jsonValue) }),
  ),
});
const subject = fc.oneof(
  fc.constantFrom(
    ...VALID.map((v) => v.subject),
    'skein.cmd.main.agent',
    'skein.cmd.nope.agent.get',
    'skein.cmd.main.agent.spawn.extra',
  ),
  fc
    .tuple(fc.constantFrom('main', 'x', 'a-b_c'), fc.stringMatching(/^[a-z]{1,8}(\.[a-z-]{1,8}){1,2}$/))
    .map(([agent, type]) => `skein.cmd.${agent}.${type}`),
);
const payload = fc.oneof(
  fc.uint8Array({ maxLength: 300 }),
  fc.string({ maxLength: 300 }),
  mutatedBody.map((b) => JSON.stringify(b)),
  fc.tuple(fc.constantFrom(...VALID), fc.nat(60)).map(([v, cut]) => JSON.stringify(v.body).slice(0, cut)),
  jsonValue.map((v) => JSON.stringify(v)),
);

describe(`host fuzz over real NATS (seed ${seed})`, () => {
  let nats: TestNats;
  let rt: TestRuntime;
  beforeAll(async () => {
    nats = await startTestNats();
    rt = await startTestRuntime({ mode: 'networked', natsUrl: nats.url });
  });
  afterAll(async () => {
    await rt?.dispose();
    await nats?.dispose();
  });

  it('answers every payload with { ok: true, … } or { ok: false, error: { code, message, retryable } }', async () => {
    let answered = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(subject, payload), { minLength: 1, maxLength: 25 }), async (batch) => {
        // A batch in flight at once, like many clients.
        const replies = await Promise.all(
          batch.map(async ([s, p]) => decodeReply(s, await rt.bus.request(s, p, { timeoutMs: 10_000 }))),
        );
        for (const reply of replies) {
          if (!reply.ok) {
            expect(typeof reply.error.code).toBe('string');
            expect(reply.error.message.length).toBeGreaterThan(10);
          }
          answered++;
        }
      }),
      { seed, numRuns: 200 },
    );
    expect(answered).toBeGreaterThan(1000);
    expect(await rt.call('runtime.ping')).toEqual({ ok: true, pong: true });
    const status = await rt.call('runtime.status');
    expect(status.ok).toBe(true);
  });
});
