import { describe, expect, it } from 'vitest';
import { NoRespondersError, RequestTimeoutError } from '../../../infra/transport/bus.ts';
import { EmbeddedBus } from '../../../infra/transport/embedded-bus.ts';

const text = (d: Uint8Array) => new TextDecoder().decode(d);

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
});
