/**
 * The host over a real connection, in both modes: the pipeline end to end
 * (command → fact → log → reply) and every bad input of the foundation issue.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subjectFor } from '../../../schemas/index.ts';
import { decodeReply, encode } from '../../../infra/transport/codec.ts';
import type { Bus } from '../../../infra/transport/bus.ts';
import { replay } from '../../../infra/kernel/replay.ts';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

const MODES = ['embedded', 'networked'] as const;

describe.each(MODES)('host (%s)', (mode) => {
  let nats: TestNats | undefined;
  let rt: TestRuntime;

  beforeAll(async () => {
    if (mode === 'networked') nats = await startTestNats();
    rt = await startTestRuntime({
      mode,
      ...(nats ? { natsUrl: nats.url } : {}),
      flags: { limits: { maxPayloadBytes: 64 * 1024 } },
    });
  });
  afterAll(async () => {
    await rt?.dispose();
    await nats?.dispose();
  });

  const raw = async (bus: Bus, subject: string, payload: Uint8Array | string) =>
    decodeReply(subject, await bus.request(subject, payload, { timeoutMs: 10_000 }));

  it('keeps no reply over the limit for retries: the error that was sent is what a retry gets', async () => {
    // Found by a review: each file.read of a file too big to send kept its full reply for retries (14 MB per
    // command id for a 7 MiB file, up to limits.commandCacheSize ids), though only the error could be sent.
    writeFileSync(join(rt.workspace, 'wide.txt'), `${'w'.repeat(200_000)}\n`);
    const before = rt.host.replyCacheBytes;
    for (let i = 0; i < 20; i++) {
      const id = `wide-${mode}-${i}`;
      const first = await rt.call('file.read', { path: 'wide.txt' }, { id });
      expect(first).toMatchObject({ ok: false, error: { code: 'payload_too_large' } });
      expect(await rt.call('file.read', { path: 'wide.txt' }, { id })).toEqual(first);
    }
    expect(rt.host.replyCacheBytes - before).toBeLessThan(20 * 1024);
  });

  it('spawns a child and a grandchild; agent.get folds their facts', async () => {
    const child = await rt.call('agent.spawn', { label: 'a' });
    expect(child).toMatchObject({ ok: true, parentId: 'main', workspace: rt.workspace });
    const childId = (child as unknown as { agentId: string }).agentId;
    const grandchild = await rt.call('agent.spawn', { label: 'b' }, { agentId: childId });
    expect(grandchild).toMatchObject({ ok: true, parentId: childId });
    const got = await rt.call('agent.get', {}, { agentId: childId });
    expect(got).toEqual({
      ok: true,
      agentId: childId,
      parentId: 'main',
      label: 'a',
      workspace: rt.workspace,
      status: 'running',
      task: null,
      error: null,
      children: [(grandchild as unknown as { agentId: string }).agentId],
    });
  });

  it('replies only after the fact is in the log: a replay right after the reply sees it', async () => {
    const reply = await rt.call('agent.spawn', { label: 'durable' });
    const agentId = (reply as unknown as { agentId: string }).agentId;
    const seen: string[] = [];
    await replay(rt.log.read(), AGGREGATES, {
      onFact: (f) => seen.push((f.data as { agentId?: string }).agentId ?? ''),
    });
    expect(seen).toContain(agentId);
  });

  it('live digest equals the digest of a replay of its log', async () => {
    const status = await rt.call('runtime.status');
    const replayed = await replay(rt.log.read(), AGGREGATES);
    expect(status).toMatchObject({ ok: true, digest: replayed.digest, facts: replayed.facts });
  });

  describe('bad input: a clear error naming the field or value, nothing appended', () => {
    const cases: Array<[string, string, string | Uint8Array, string, RegExp]> = [
      ['malformed JSON', 'skein.cmd.main.agent.spawn', '{"data":', 'invalid_json', /not JSON/],
      ['not UTF-8', 'skein.cmd.main.agent.spawn', new Uint8Array([0xff, 0xfe, 0x7b]), 'invalid_json', /UTF-8/],
      [
        'schema failure reports the path',
        'skein.cmd.main.agent.spawn',
        '{"data":{"label":""}}',
        'invalid_message',
        /data\.label: must not be empty/,
      ],
      ['wrong type of a field', 'skein.cmd.main.agent.spawn', '{"data":{"label":7}}', 'invalid_message', /data\.label/],
      ['unknown field', 'skein.cmd.main.agent.spawn', '{"data":{"label":"x","colour":1}}', 'invalid_message', /colour/],
      [
        'unknown command type',
        'skein.cmd.main.agent.explode',
        '{"data":{}}',
        'unknown_command',
        /unknown command type 'agent\.explode'/,
      ],
      [
        'agent id not a token',
        'skein.cmd.ma%in.agent.get',
        '{"data":{}}',
        'invalid_subject',
        /agent id 'ma%in' is not valid/,
      ],
      ['unknown agent', 'skein.cmd.nobody.agent.get', '{"data":{}}', 'unknown_agent', /agent 'nobody' does not exist/],
      [
        'agentId disagrees with the subject',
        'skein.cmd.main.agent.get',
        '{"agentId":"other","data":{}}',
        'agent_mismatch',
        /'other'.*'main'/,
      ],
      [
        'type disagrees with the subject',
        'skein.cmd.main.agent.get',
        '{"type":"agent.spawn","data":{}}',
        'invalid_message',
        /disagrees/,
      ],
      [
        'payload over the limit',
        'skein.cmd.main.agent.spawn',
        JSON.stringify({ data: { label: 'x'.repeat(70 * 1024) } }),
        'payload_too_large',
        /over the limit of 65536 bytes/,
      ],
      ['envelope id of the wrong type', 'skein.cmd.main.agent.get', '{"id":42,"data":{}}', 'invalid_message', /^.*id/],
    ];
    it.each(cases)('%s', async (_name, subject, payload, code, message) => {
      const before = await rt.log.lastSeq();
      const reply = await raw(rt.bus, subject, payload);
      expect(reply.ok).toBe(false);
      if (reply.ok) return;
      expect(reply.error.code).toBe(code);
      expect(reply.error.message).toMatch(message);
      expect(reply.error.retryable).toBe(false);
      expect(await rt.log.lastSeq()).toBe(before);
      // The host is still serving.
      expect(await rt.call('runtime.ping')).toEqual({ ok: true, pong: true });
    });

    it('a duplicate command id gets the same reply and appends once', async () => {
      const id = `dup-${mode}-${Date.now()}`;
      const first = await rt.call('agent.spawn', { label: 'once' }, { id });
      const afterFirst = await rt.log.lastSeq();
      const second = await rt.call('agent.spawn', { label: 'once' }, { id });
      expect(second).toEqual(first);
      expect(await rt.log.lastSeq()).toBe(afterFirst);
      const caused: string[] = [];
      for await (const f of rt.log.read()) if (f.causationId === id) caused.push(f.type);
      expect(caused).toEqual(['permission.granted', 'agent.spawned']);
    });

    it('concurrent duplicates also append once', async () => {
      const id = `dup2-${mode}-${Date.now()}`;
      const replies = await Promise.all([1, 2, 3].map(() => rt.call('agent.spawn', { label: 'race' }, { id })));
      expect(new Set(replies.map((r) => JSON.stringify(r))).size).toBe(1);
      const caused: string[] = [];
      for await (const f of rt.log.read()) if (f.causationId === id) caused.push(f.type);
      expect(caused).toEqual(['permission.granted', 'agent.spawned']);
    });
  });

  it('publishes self-describing facts on skein.evt.> (raw subscriber)', async () => {
    // Networked: a separate NATS connection; embedded: a plain subscription on the in-process bus. Both
    // see the bytes a client would, decoded here with JSON.parse rather than the codec.
    type Seen = { subject: string; body: Record<string, unknown> };
    let stop: () => Promise<void>;
    let got: Promise<Seen | undefined>;
    if (mode === 'networked') {
      const nc = await connect({ servers: nats!.url });
      const sub = nc.subscribe('skein.evt.>');
      got = (async () => {
        for await (const m of sub) {
          const body = JSON.parse(m.string()) as Record<string, unknown>;
          if (body['type'] === 'agent.spawned') return { subject: m.subject, body };
        }
        return undefined;
      })();
      await nc.flush();
      stop = () => nc.close();
    } else {
      expect(rt.bus.kind).toBe('embedded');
      let resolve!: (seen: Seen) => void;
      got = new Promise<Seen>((r) => (resolve = r));
      const sub = rt.bus.subscribe('skein.evt.>', (m) => {
        const body = JSON.parse(new TextDecoder().decode(m.data)) as Record<string, unknown>;
        if (body['type'] === 'agent.spawned') resolve({ subject: m.subject, body });
      });
      stop = async () => sub.unsubscribe();
    }
    const reply = await rt.call('agent.spawn', { label: 'watched' });
    const msg = await got;
    await stop();
    const agentId = (reply as unknown as { agentId: string }).agentId;
    expect(msg?.subject).toBe(subjectFor({ kind: 'evt', agentId: 'main', aggregate: 'agent', aggregateId: agentId }));
    expect(msg?.body).toMatchObject({
      type: 'agent.spawned',
      agentId: 'main',
      data: { agentId, parentId: 'main', label: 'watched' },
    });
    expect(typeof msg?.body['id']).toBe('string');
    expect(typeof msg?.body['at']).toBe('string');
    expect(typeof msg?.body['causationId']).toBe('string');
  });

  it('answers raw bytes sent to the command subject without crashing (encode helper)', async () => {
    const reply = await raw(rt.bus, 'skein.cmd.main.runtime.ping', encode({ data: {} }));
    expect(reply).toEqual({ ok: true, pong: true });
  });
});
