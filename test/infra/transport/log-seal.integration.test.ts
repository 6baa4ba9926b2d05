/**
 * The audit log guarded against deletion and alteration, on a real private
 * broker: while the host runs, a deleted or altered SKEIN_EVENTS makes every
 * command `unavailable` (the host and its terminals stay up, nothing is
 * thrown unhandled) and `host.log.lost` is appended where the stream still
 * takes it; after a restart, a stream that is gone, shorter or configured
 * differently stops the start with an error that says what changed.
 */
import { join } from 'node:path';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { EVENTS_STREAM } from '../../../schemas/index.ts';
import { startAuthBroker } from '../../../infra/transport/auth/broker.ts';
import { decodeFact } from '../../../infra/transport/codec.ts';
import { ok } from '../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';
import { tempDir } from '../../support/temp-dir.ts';

/** Someone holding the host's own credentials (the only user the broker lets near the stream). */
async function asHost(url: string, creds: string): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
  const nc = await connect({ servers: url, authenticator: credsAuthenticator(new TextEncoder().encode(creds)) });
  return { nc, jsm: await jetstreamManager(nc) };
}

describe('the audit log guard', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  });

  async function running(dir?: string): Promise<TestRuntime> {
    const rt = await startTestRuntime({ mode: 'private', ...(dir ? { dir } : {}) });
    cleanups.push(() => rt.dispose());
    return rt;
  }

  it('a stream deleted while running: commands get unavailable, the host and its terminal stay up', async () => {
    const rt = await running();
    ok(await rt.call('agent.spawn', { label: 'a', agentId: 'a' }));
    const term = ok(await rt.call('terminal.open', {}, { agentId: 'a' }));
    // Literal words: under the allow-all test policy an expansion would wait for a person (issue 14).
    const command = 'for i in {1..40}; do echo tick; sleep 0.05; done';
    ok(await rt.call('terminal.exec', { terminalId: term['terminalId'], command, yieldMs: 0 }, { agentId: 'a' }));
    const attacker = await asHost(rt.info.natsUrl!, rt.auth!.hostCreds);
    cleanups.push(() => attacker.nc.close());
    await attacker.jsm.streams.delete(EVENTS_STREAM);
    await expect.poll(async () => (await rt.call('runtime.ping')).ok, { timeout: 5_000 }).toBe(false);
    const refused = await rt.call('agent.get', {}, { agentId: 'a' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'unavailable' } });
    if (!refused.ok) expect(refused.error.message).toMatch(/SKEIN_EVENTS was deleted.*restores the stream/);
    // The terminal keeps producing output for a while; none of its failed appends may crash the process.
    await new Promise((r) => setTimeout(r, 2_500));
    expect(rt.bus).toBeDefined();
    expect((await rt.call('runtime.ping')).ok).toBe(false);
  });

  it('a stream altered while running (max_msgs 5): host.log.lost is appended and commands are refused', async () => {
    const rt = await running();
    for (const id of ['a', 'b', 'c']) ok(await rt.call('agent.spawn', { label: id, agentId: id }));
    const attacker = await asHost(rt.info.natsUrl!, rt.auth!.hostCreds);
    cleanups.push(() => attacker.nc.close());
    const lost: string[] = [];
    const sub = rt.bus.subscribe('skein.evt.main.host.>', (m) => {
      const fact = decodeFact(m.subject, m.data);
      if (fact.type === 'host.log.lost') lost.push((fact.data as { change: string }).change);
    });
    await rt.bus.flush();
    const info = await attacker.jsm.streams.info(EVENTS_STREAM);
    await attacker.jsm.streams.update(EVENTS_STREAM, { ...info.config, max_msgs: 5 });
    await expect.poll(() => lost, { timeout: 5_000 }).toEqual([expect.stringMatching(/^max_msgs 5 \(was -1\)/)]);
    sub.unsubscribe();
    expect(await rt.call('agent.get', {}, { agentId: 'a' })).toMatchObject({
      ok: false,
      error: { code: 'unavailable' },
    });
  });

  it('stream advisories while facts are appended raise no alarm (a fact acked while the info was asked)', async () => {
    // Found in a full run: another host's start touched the stream, and this host compared the stream's info,
    // asked before its last append was acked, with a seal that already held it: "shorter", commands refused.
    const rt = await running();
    const operator = await asHost(rt.info.natsUrl!, rt.auth!.hostCreds);
    cleanups.push(() => operator.nc.close());
    const info = await operator.jsm.streams.info(EVENTS_STREAM);
    let appending = true;
    const appends = (async () => {
      // Each child cancelled after its spawn: appends for as long as the updates last, never at maxChildren (64).
      for (let i = 0; appending; i++) {
        ok(await rt.call('agent.spawn', { label: `s${i}`, agentId: `s${i}` }));
        ok(await rt.call('agent.cancel', { agentId: `s${i}` }));
      }
    })();
    // The same settings written back: an UPDATED advisory each time, and nothing changed.
    for (let i = 0; i < 60; i++) await operator.jsm.streams.update(EVENTS_STREAM, info.config);
    appending = false;
    await appends;
    expect(await rt.call('runtime.ping')).toMatchObject({ ok: true });
  });

  describe('after a restart', () => {
    async function stoppedWithLog(): Promise<string> {
      const temp = tempDir('skein-seal-');
      cleanups.push(async () => temp.dispose());
      const rt = await startTestRuntime({ mode: 'private', dir: temp.path });
      for (const id of ['a', 'b', 'c']) ok(await rt.call('agent.spawn', { label: id, agentId: id }));
      await rt.stop();
      return temp.path;
    }

    /** Opens the stopped runtime's broker alone and lets `tamper` act on its stream with the host's creds. */
    async function tamper(dir: string, act: (jsm: JetStreamManager, nc: NatsConnection) => Promise<void>) {
      const broker = await startAuthBroker({ dataDir: join(dir, 'data'), logger: pino({ level: 'silent' }) });
      try {
        const { nc, jsm } = await asHost(broker.url, broker.hostCreds);
        await act(jsm, nc);
        await nc.close();
      } finally {
        await broker.stop();
      }
    }

    it('refuses to start on a deleted stream, saying what changed and how to recover', async () => {
      const dir = await stoppedWithLog();
      await tamper(dir, async (jsm) => void (await jsm.streams.delete(EVENTS_STREAM)));
      await expect(running(dir)).rejects.toThrow(
        new RegExp(
          'SKEIN_EVENTS is not the one this data dir sealed.*deleted \\(it held facts up to sequence \\d+\\)' +
            '.*Restore the JetStream store',
        ),
      );
    });

    it('refuses to start on an altered stream (max_msgs, max_age)', async () => {
      const dir = await stoppedWithLog();
      await tamper(dir, async (jsm) => {
        const info = await jsm.streams.info(EVENTS_STREAM);
        // (JetStream itself refuses to turn deny_delete off.)
        await jsm.streams.update(EVENTS_STREAM, { ...info.config, max_msgs: 2, max_age: 3_600_000_000_000 });
      });
      await expect(running(dir)).rejects.toThrow(/max_msgs 2 \(was -1\); max_age 3600000000000 \(was 0\)/);
    });

    it('refuses to start on a shorter stream recreated under the same name', async () => {
      const dir = await stoppedWithLog();
      await tamper(dir, async (jsm, nc) => {
        const info = await jsm.streams.info(EVENTS_STREAM);
        await jsm.streams.delete(EVENTS_STREAM);
        await jsm.streams.add(info.config);
        await (await import('@nats-io/jetstream')).jetstream(nc).publish('skein.evt.main.x.y', '{}');
      });
      await expect(running(dir)).rejects.toThrow(/shorter: last sequence 1 \(was \d+\)/);
    });

    it('starts again on an untouched stream', async () => {
      const dir = await stoppedWithLog();
      const rt = await running(dir);
      expect(ok(await rt.call('agent.get', {}, { agentId: 'c' }))).toMatchObject({ agentId: 'c' });
    });
  });
});
