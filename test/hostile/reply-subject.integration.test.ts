/**
 * An agent names the reply subject of its own command, and the broker never checks it: only what a client
 * publishes is in its permissions. The host answers with its unrestricted user, so an answer sent wherever the
 * request said would publish, for the agent, on subjects it may not: a sibling's or the root's command subjects
 * (the host then runs that "command" as them), the log's fact subjects, a sibling's inbox. Each attack below
 * uses agent `a`'s own credentials on a private broker; the canaries are the root's file, the siblings'
 * status, the log's last sequence and anything reaching `b`'s inbox.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_STREAM } from '../../schemas/index.ts';
import { inboxPrefixFor, isReplyInbox } from '../../infra/transport/auth/permissions.ts';
import { encode } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const dec = new TextDecoder();

function connectAs(url: string, creds: string, inboxPrefix?: string): Promise<NatsConnection> {
  return connect({
    servers: url,
    authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
    ...(inboxPrefix ? { inboxPrefix } : {}),
    maxReconnectAttempts: 0,
  });
}

describe("a command's reply subject is not a way to publish as the host", () => {
  let rt: TestRuntime;
  const conns: NatsConnection[] = [];
  let a: NatsConnection;
  /** Everything the host publishes on the attacks' targets (its own user sees every subject). */
  const seen: string[] = [];

  async function lastSeq(): Promise<number> {
    const jsm = await jetstreamManager((rt.bus as unknown as { nc: NatsConnection }).nc);
    return (await jsm.streams.info(EVENTS_STREAM)).state.last_seq;
  }

  /** `a` sends a ping on its own subject with `reply` forged, then an honest one: answered after the forged. */
  async function pingWithReply(...replies: string[]): Promise<void> {
    for (const reply of replies) a.publish('skein.cmd.a.runtime.ping', encode({ data: {} }), { reply });
    const honest = await a.request('skein.cmd.a.runtime.ping', encode({ data: {} }), { timeout: 10_000 });
    expect(JSON.parse(dec.decode(honest.data))).toMatchObject({ ok: true });
    // The forged answers, had they been sent, were sent before the honest one; what they caused, soon after.
    await new Promise((r) => setTimeout(r, 500));
  }

  beforeAll(async () => {
    rt = await startTestRuntime({ mode: 'private', policy: { default: 'allow' } });
    ok(await rt.call('agent.spawn', { label: 'a', agentId: 'a' }));
    ok(await rt.call('agent.spawn', { label: 'b', agentId: 'b' }));
    ok(await rt.call('agent.spawn', { label: 'b1', agentId: 'b1' }, { agentId: 'b' }));
    ok(await rt.call('file.write', { path: 'keep.txt', content: 'the root keeps this\n' }));
    a = await connectAs(rt.info.natsUrl!, (await rt.auth!.authority.mintAgent('a')).creds, inboxPrefixFor('a'));
    conns.push(a);
    for (const pattern of [
      'skein.cmd.b.>',
      'skein.cmd.main.>',
      'skein.evt.main.agent.>',
      '_INBOX_b.>',
      'skein.out.b.>',
    ])
      rt.bus.subscribe(pattern, (m) => seen.push(m.subject));
    await rt.bus.flush();
  }, 60_000);
  afterAll(async () => {
    for (const c of conns) await c.close().catch(() => undefined);
    await rt?.dispose();
  });

  it('runs nothing as a sibling or the root when the reply names their command subjects', async () => {
    seen.length = 0;
    await pingWithReply('skein.cmd.b.agent.cancel', 'skein.cmd.main.review.reject', 'skein.cmd.main.agent.complete');
    expect(seen).toEqual([]);
    const tree = ok(await rt.call('agent.tree', {}));
    const status = Object.fromEntries(
      (tree['agents'] as Array<{ agentId: string; status: string }>).map((n) => [n.agentId, n.status]),
    );
    expect(status).toMatchObject({ main: 'running', a: 'running', b: 'running', b1: 'running' });
    expect(existsSync(join(rt.workspace, 'keep.txt'))).toBe(true);
  });

  it('writes nothing into the log when the reply names a fact subject, and the aggregate stays writable', async () => {
    seen.length = 0;
    const before = await lastSeq();
    await pingWithReply('skein.evt.main.agent.b', 'skein.out.b.t-forged');
    expect(seen).toEqual([]);
    expect(await lastSeq()).toBe(before);
    // Had a forged message landed on b's subject, the host's next append there would fail its sequence check.
    ok(await rt.call('agent.spawn', { label: 'c', agentId: 'c' }));
    const done = await a.request('skein.cmd.a.agent.get', encode({ data: {} }), { timeout: 10_000 });
    expect(JSON.parse(dec.decode(done.data))).toMatchObject({ ok: true, agentId: 'a' });
  });

  it("delivers nothing into a sibling's reply inbox", async () => {
    const b = await connectAs(rt.info.natsUrl!, (await rt.auth!.authority.mintAgent('b')).creds, inboxPrefixFor('b'));
    conns.push(b);
    const got: string[] = [];
    b.subscribe('_INBOX_b.>', { callback: (_e, m) => void got.push(dec.decode(m.data)) });
    await b.flush();
    seen.length = 0;
    await pingWithReply('_INBOX_b.forged', '_INBOX_b.x.y');
    expect(got).toEqual([]);
    expect(seen).toEqual([]);
  });

  it("settles none of the host's appends with a reply copied from a fact it watched", async () => {
    // Every fact published on a's subjects shows the reply subject its JetStream ack goes to.
    const replies: string[] = [];
    a.subscribe('skein.evt.a.>', { callback: (_e, m) => void (m.reply && replies.push(m.reply)) });
    await a.flush();
    ok(await rt.call('agent.spawn', { label: 'watched', agentId: 'watched' }, { agentId: 'a' }));
    await expect.poll(() => replies.length).toBeGreaterThan(0);
    const seen = replies[0]!;
    expect(isReplyInbox(seen)).toBe(false);
    // The next tokens of that inbox are the next appends' acks: answers sent there would settle them.
    const base = seen.slice(0, seen.lastIndexOf('.') + 1);
    const token = Number.parseInt(seen.slice(seen.lastIndexOf('.') + 1), 36);
    const targets = Array.from({ length: 40 }, (_, k) => `${base}${(token + 1 + k).toString(36)}`);
    const pongs: string[] = [];
    for (const pattern of [`${base}>`, '_INBOX.>'])
      rt.bus.subscribe(pattern, (m) => void (dec.decode(m.data).includes('pong') && pongs.push(m.subject)));
    await rt.bus.flush();
    const appends = Array.from({ length: 20 }, (_, i) =>
      rt.call('agent.spawn', { label: `busy ${i}`, agentId: `busy${i}` }, { agentId: 'a' }),
    );
    await pingWithReply(...targets);
    for (const r of await Promise.all(appends)) expect(r).toMatchObject({ ok: true });
    expect(pongs).toEqual([]);
  });

  it("an operator's discovery request cannot have the host write a fact either", async () => {
    const op = await connectAs(rt.info.natsUrl!, await rt.auth!.authority.operatorCreds());
    conns.push(op);
    // Honest first: the host answers discovery.
    const honest = await op.request('$SRV.PING', encode({}), { timeout: 5_000 });
    expect(JSON.parse(dec.decode(honest.data))).toMatchObject({ type: 'io.nats.micro.v1.ping_response' });
    seen.length = 0;
    const before = await lastSeq();
    op.publish('$SRV.PING', encode({}), { reply: 'skein.evt.main.agent.forged' });
    op.publish('$SRV.INFO', encode({}), { reply: 'skein.cmd.b.agent.cancel' });
    await op.flush();
    await op.request('$SRV.PING', encode({}), { timeout: 5_000 });
    await new Promise((r) => setTimeout(r, 500));
    expect(seen).toEqual([]);
    expect(await lastSeq()).toBe(before);
  });
});
