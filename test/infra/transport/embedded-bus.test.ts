import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NoRespondersError, RequestTimeoutError, subjectMatches } from '../../../infra/transport/bus.ts';
import { propertySeed } from '../../support/seed.ts';
import { EmbeddedBus } from '../../../infra/transport/embedded-bus.ts';

const text = (d: Uint8Array) => new TextDecoder().decode(d);
const seed = propertySeed();

const literal = fc.constantFrom('skein', 'out', 'evt', 'a', 'b', 't1', '');
const subjectArb = fc.array(literal, { minLength: 1, maxLength: 6 }).map((t) => t.join('.'));
const patternArb = fc
  .tuple(fc.array(fc.oneof(literal, fc.constant('*')), { minLength: 1, maxLength: 6 }), fc.boolean())
  .map(([tokens, tail]) => (tail ? [...tokens, '>'] : tokens).join('.'));

describe('EmbeddedBus', () => {
  it('delivers by NATS wildcard semantics, asynchronously', async () => {
    const bus = new EmbeddedBus();
    const got: string[] = [];
    bus.subscribe('skein.evt.*.agent.>', (m) => got.push(`star:${m.subject}`));
    bus.subscribe('skein.evt.>', (m) => got.push(`gt:${m.subject}`));
    bus.subscribe('skein.evt.main', (m) => got.push(`exact:${m.subject}`));
    bus.publish('skein.evt.main.agent.a1', 'x');
    bus.publish('skein.evt.main', 'y');
    expect(got).toEqual([]);
    await bus.flush();
    expect(got).toEqual([
      'star:skein.evt.main.agent.a1',
      'gt:skein.evt.main.agent.a1',
      'gt:skein.evt.main',
      'exact:skein.evt.main',
    ]);
  });

  it('does request/reply, fails fast without responders, and times out', async () => {
    const bus = new EmbeddedBus();
    bus.subscribe('svc.echo', (m) => m.respond(`echo:${text(m.data)}`));
    bus.subscribe('svc.silent', () => undefined);
    expect(text(await bus.request('svc.echo', 'hi', { timeoutMs: 1000 }))).toBe('echo:hi');
    await expect(bus.request('svc.none', 'x', { timeoutMs: 1000 })).rejects.toBeInstanceOf(NoRespondersError);
    await expect(bus.request('svc.silent', 'x', { timeoutMs: 30 })).rejects.toBeInstanceOf(RequestTimeoutError);
  });

  it('stops delivering after unsubscribe and keeps going when a subscriber throws', async () => {
    const bus = new EmbeddedBus();
    const got: string[] = [];
    const sub = bus.subscribe('a', () => got.push('removed'));
    bus.subscribe('a', () => {
      throw new Error('boom');
    });
    bus.subscribe('a', () => got.push('kept'));
    sub.unsubscribe();
    bus.publish('a', '');
    await bus.flush();
    expect(got).toEqual(['kept']);
  });

  // The wildcard subscriptions are kept by their first literal tokens (an agent's inside its own subjects), so
  // that a publish is matched against its prefix's and the wider ones only: still every match, in order.
  it(`delivers to exactly the matching subscriptions, in order, however they are kept (seed ${seed})`, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.oneof(patternArb, subjectArb), fc.boolean()), { minLength: 1, maxLength: 12 }),
        fc.array(subjectArb, { minLength: 1, maxLength: 6 }),
        fc.array(literal, { minLength: 3, maxLength: 3 }),
        async (subs, random, fill) => {
          // Subjects that match the patterns (each wildcard filled in) as well as random ones.
          const instances = subs.map(([pattern]) =>
            pattern
              .split('.')
              .map((t, i) => (t === '*' ? fill[i % 3] : t === '>' ? fill.slice(0, 1 + (i % 2)).join('.') : t))
              .join('.'),
          );
          const subjects = [...instances, ...random];
          const bus = new EmbeddedBus();
          const got: string[] = [];
          const kept: string[] = [];
          subs.forEach(([pattern, stays], i) => {
            const sub = bus.subscribe(pattern, (m) => got.push(`${i}:${m.subject}`));
            if (stays) kept.push(`${i}:${pattern}`);
            else sub.unsubscribe();
          });
          for (const subject of subjects) bus.publish(subject, '');
          await bus.flush();
          const expected = subjects.flatMap((subject) =>
            kept
              .filter((k) => subjectMatches(k.slice(k.indexOf(':') + 1), subject))
              .map((k) => `${k.slice(0, k.indexOf(':'))}:${subject}`),
          );
          expect(got).toEqual(expected);
          for (const subject of subjects) {
            expect(bus.hasSubscriber(subject)).toBe(
              kept.some((k) => subjectMatches(k.slice(k.indexOf(':') + 1), subject)),
            );
          }
        },
      ),
      { seed },
    );
  });

  // Security review: an agent's subscriptions under its reply inbox (`_INBOX_<id>.*`, one literal token) were
  // matched against every publish on the bus; 64 agents' 1,024 each took a sibling's exec from 19 to 318 ms.
  it("matches a publish against no subscription kept under another agent's subjects", async () => {
    const bus = new EmbeddedBus();
    let got = 0;
    bus.subscribe('skein.cmd.>', () => got++);
    for (let i = 0; i < 1_000; i++) {
      bus.subscribe(`_INBOX_a.x${i}.*`, () => undefined);
      bus.subscribe('_INBOX_a.*', () => undefined);
      bus.subscribe(`skein.out.a.*.y${i}`, () => undefined);
      bus.subscribe(`skein.evt.a.*.${i}`, () => undefined);
    }
    const before = bus.matchAttempts;
    bus.publish('skein.cmd.b.terminal.exec', '');
    await bus.flush();
    expect(got).toBe(1);
    // The host's one, not the 4,000 of agent a.
    expect(bus.matchAttempts - before).toBe(1);
  });
});
