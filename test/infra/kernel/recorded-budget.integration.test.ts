/**
 * `limits.maxRecordedBytesPerAgent` over JetStream: each fact is charged by its message's payload bytes, live
 * (the publish) and on a start's replay (the read) alike, so the count equals a raw read of the stream and a
 * restart restores it, refusals included. (The embedded log: test/hostile/recorded-budget.integration.test.ts.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LASTING_STATE_BYTES } from '../../../machines/agent/recorded-bytes.ts';
import { CONSUME_PULL } from '../../../infra/transport/jetstream-log.ts';
import { Recount } from '../../support/recorded-recount.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';
import { ok } from '../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

const LIMIT = 128 * 1024;
const AGENTS = ['a', 'a1', 'b', 'main'];

let nats: TestNats;
let dir: string;
let rt: TestRuntime;
const start = async () =>
  (rt = await startTestRuntime({
    mode: 'networked',
    natsUrl: nats.url,
    dir,
    flags: { limits: { maxRecordedBytesPerAgent: LIMIT } },
  }));

beforeAll(async () => {
  nats = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'skein-recorded-js-'));
  await start();
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
  await nats?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

/** The oracle: every message of SKEIN_EVENTS read raw, its payload bytes charged to its agent's tree. */
async function recountFromStream(): Promise<Record<string, number>> {
  const nc = await connect({ servers: nats.url });
  try {
    const js = jetstream(nc);
    const consumer = await js.consumers.get('SKEIN_EVENTS', { deliver_policy: 'all' });
    const messages = await consumer.consume({ ...CONSUME_PULL });
    const recount = new Recount();
    for await (const m of messages) {
      recount.add(JSON.parse(new TextDecoder().decode(m.data)), m.data.byteLength);
      if (m.info.pending === 0) break;
    }
    messages.stop();
    return recount.of(AGENTS);
  } finally {
    await nc.close();
  }
}

const counted = () => Object.fromEntries(AGENTS.map((id) => [id, rt.host.recordedBytes(id)]));

describe('recorded bytes over JetStream', () => {
  it('charges each fact by its payload, to its agent and the ancestors below the root', async () => {
    ok(await rt.call('agent.spawn', { label: 'a', agentId: 'a' }));
    ok(await rt.call('agent.spawn', { label: 'a1', agentId: 'a1', task: 'x'.repeat(10_000) }, { agentId: 'a' }));
    ok(await rt.call('agent.spawn', { label: 'b', agentId: 'b' }));
    ok(await rt.call('file.write', { path: 'a1.txt', content: 'y'.repeat(20_000) }, { agentId: 'a1' }));
    ok(await rt.call('file.write', { path: 'b.txt', content: 'small' }, { agentId: 'b' }));
    const live = counted();
    expect(live['a']).toBeGreaterThan(live['a1']!);
    expect(live['a1']).toBeGreaterThan(20_000 + LASTING_STATE_BYTES['edit.started']!);
    expect(live['main']).toBe(0);
    expect(live).toEqual(await recountFromStream());
  });

  it('refuses past the limit, and a restart reads the same count back', async () => {
    let refused = false;
    for (let i = 0; i < 40 && !refused; i++) {
      const r = await rt.call(
        'file.write',
        { path: `a1-${i}.txt`, content: `${i}`.padEnd(16_000, 'z') },
        { agentId: 'a1' },
      );
      refused = !r.ok && r.error.code === 'limit_exceeded';
    }
    expect(refused).toBe(true);
    const before = counted();
    await rt.dispose();
    await start();
    expect(counted()).toEqual(before);
    expect(counted()).toEqual(await recountFromStream());
    const again = await rt.call('terminal.open', {}, { agentId: 'a' });
    expect(again).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    ok(await rt.call('file.write', { path: 'b-2.txt', content: 'b is its own tree' }, { agentId: 'b' }));
  });
});
