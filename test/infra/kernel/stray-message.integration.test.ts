/**
 * A message that is no fact, stored on a fact subject (a networked runtime without credentials lets any client
 * publish there; the reply-subject hole let an agent have the host do it). Every read skips it, but it holds a
 * sequence of the subject: the writer never learned it, and every later append to that aggregate failed its
 * sequence check, retries and restarts included (the agent could never be cancelled). Now the append that meets
 * it fails once (`conflict`, retryable) and the re-read learns its sequence: the retry is stored.
 */
import { connect } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../support/replies.ts';
import { startNetworkedRuntime, type TestRuntime } from '../../support/runtime.ts';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startNetworkedRuntime();
}, 30_000);
afterAll(async () => {
  await rt?.dispose();
});

describe('a stray message on a fact subject', () => {
  it('costs one retryable conflict, not the aggregate', async () => {
    ok(await rt.call('agent.spawn', { label: 'k', agentId: 'k' }));
    const nc = await connect({ servers: rt.info.natsUrl! });
    try {
      const ack = await nc.request('skein.evt.main.agent.k', 'not a fact', { timeout: 5_000 });
      expect(JSON.parse(ack.string())).toMatchObject({ stream: 'SKEIN_EVENTS' });
    } finally {
      await nc.close();
    }
    const first = await rt.call('agent.cancel', { agentId: 'k' });
    if (!first.ok) expect(first.error).toMatchObject({ code: 'conflict', retryable: true });
    const settled = first.ok ? first : await rt.call('agent.cancel', { agentId: 'k' });
    expect(settled).toMatchObject({ ok: true });
    expect(ok(await rt.call('agent.get', {}, { agentId: 'k' }))).toMatchObject({ status: 'cancelled' });
    // And the aggregate takes further appends as usual.
    expect(await rt.call('agent.spawn', { label: 'k2', agentId: 'k2' })).toMatchObject({ ok: true });
  });
});
