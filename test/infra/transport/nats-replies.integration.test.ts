/**
 * Requests with replies matched on one inbox (infra/transport/nats-replies.ts, behind `NatsBus.request`), against
 * a real nats-server: each of many requests in flight gets its own reply, answered in any order; a subject nobody
 * serves fails at once, one nobody answers at its timeout (its late answer going to no one); a closed connection
 * fails the requests left; a publish the broker refuses fails its own request at once, with the broker's words.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ClosedConnectionError,
  connect,
  PermissionViolationError,
  type Msg,
  type NatsConnection,
} from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NoRespondersError, RequestTimeoutError } from '../../../infra/transport/bus.ts';
import { NatsReplies } from '../../../infra/transport/nats-replies.ts';
import { startNatsServer } from '../../../infra/transport/nats-server.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('NatsReplies', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let server: NatsConnection;
  let replies: NatsReplies;

  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connect({ servers: nats.url });
    server = await connect({ servers: nats.url });
    replies = new NatsReplies(nc);
  });
  afterAll(async () => {
    await nc?.close();
    await server?.close();
    await nats?.dispose();
  });

  it('gives each of many requests in flight its own reply, answered in reverse order', async () => {
    const held: Msg[] = [];
    const sub = server.subscribe('svc.echo', {
      callback: (_e, m) => {
        held.push(m);
        if (held.length === 40) for (const h of held.reverse()) h.respond(bytes(`re:${text(h.data)}`));
      },
    });
    await server.flush();
    const asked = Array.from({ length: 40 }, (_, i) => replies.request('svc.echo', bytes(`q${i}`), 5_000));
    const answers = (await Promise.all(asked)).map(text);
    expect(answers).toEqual(Array.from({ length: 40 }, (_, i) => `re:q${i}`));
    sub.unsubscribe();
  });

  it('fails a subject nobody serves at once, naming it', async () => {
    const t = performance.now();
    const err = await replies.request('svc.nobody', bytes('x'), 10_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoRespondersError);
    expect((err as Error).message).toContain("'svc.nobody'");
    expect(performance.now() - t).toBeLessThan(5_000);
  });

  it('times out a request nobody answers, sends its late answer to no one, and serves the next', async () => {
    let held: Msg[] = [];
    const silent = server.subscribe('svc.silent', { callback: (_e, m) => void held.push(m) });
    const echo = server.subscribe('svc.next', { callback: (_e, m) => void m.respond(bytes('next')) });
    await server.flush();
    const err = await replies.request('svc.silent', bytes('x'), 150).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequestTimeoutError);
    expect((err as Error).message).toContain("'svc.silent' within 150 ms");
    for (const m of held) m.respond(bytes('late'));
    held = [];
    await server.flush();
    expect(text(await replies.request('svc.next', bytes('y'), 5_000))).toBe('next');
    silent.unsubscribe();
    echo.unsubscribe();
  });

  it('fails the requests left when its connection closes', async () => {
    const own = await connect({ servers: nats.url });
    const ownReplies = new NatsReplies(own);
    const silent = server.subscribe('svc.never', { callback: () => {} });
    await server.flush();
    const pending = ownReplies.request('svc.never', bytes('x'), 30_000).catch((e: unknown) => e);
    await own.flush();
    await own.close();
    expect(await pending).toBeInstanceOf(ClosedConnectionError);
    silent.unsubscribe();
  });

  it('fails a request the broker refuses (publish or inbox) at once, with its words, and no other', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skein-replies-'));
    const config = join(dir, 'nats.conf');
    writeFileSync(
      config,
      `authorization { users = [
        { user: limited, password: pw, permissions: { publish: ["svc.ok"], subscribe: ["_INBOX.>"] } }
        { user: deaf, password: pw, permissions: { publish: ["svc.ok"], subscribe: ["other.>"] } }
        { user: srv, password: pw }
      ] }\n`,
    );
    const guarded = await startNatsServer({ storeDir: join(dir, 'js'), configFile: config });
    const srv = await connect({ servers: guarded.url, user: 'srv', pass: 'pw' });
    const limited = await connect({ servers: guarded.url, user: 'limited', pass: 'pw' });
    try {
      let answer: (() => void) | undefined;
      srv.subscribe('svc.ok', { callback: (_e, m) => void (answer = () => m.respond(bytes('fine'))) });
      await srv.flush();
      const own = new NatsReplies(limited);
      const ok = own.request('svc.ok', bytes('x'), 10_000);
      const t = performance.now();
      const refused = await own.request('svc.denied', bytes('x'), 10_000).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(PermissionViolationError);
      expect((refused as Error).message).toContain('Permissions Violation for Publish to "svc.denied"');
      expect(performance.now() - t).toBeLessThan(5_000);
      // The request in flight on an allowed subject is still answered.
      while (!answer) await new Promise((r) => setTimeout(r, 5));
      answer();
      expect(text(await ok)).toBe('fine');
      // A user who may not subscribe to its inbox: the request fails with the broker's refusal, not at its timeout.
      const deaf = await connect({ servers: guarded.url, user: 'deaf', pass: 'pw' });
      try {
        const started = performance.now();
        const err = await new NatsReplies(deaf).request('svc.ok', bytes('x'), 10_000).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(PermissionViolationError);
        expect((err as Error).message).toContain('Permissions Violation for Subscription to');
        expect(performance.now() - started).toBeLessThan(5_000);
      } finally {
        await deaf.close();
      }
    } finally {
      await limited.close();
      await srv.close();
      await guarded.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
