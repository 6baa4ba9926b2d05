/**
 * Liveness without synchronised clocks (issue 16): host c's wall clock is an hour behind (its heartbeats look
 * an hour old) and host b's an hour ahead (they look fresh for an hour). Judged by how long ago each observer
 * saw a record's revision change, on its own monotonic clock, c stays live and b, SIGKILLed, is declared lost
 * within `lostAfterMs`, as with agreeing clocks.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTS_BUCKET, type HostRecord, type StoredFact } from '../../../schemas/index.ts';
import type { NatsBus } from '../../../infra/transport/nats-bus.ts';
import { cleanEnv, startCli, type LongRunning } from '../../support/cli.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';
import { ok } from '../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';
import { tempDir } from '../../support/temp-dir.ts';

const HOUR = 3_600_000;
const HOSTS = { heartbeatMs: 200, lostAfterMs: 2_000 };

describe('liveness with skewed clocks', () => {
  const dir = tempDir('skein-skew-');
  let nats: TestNats;
  let a: TestRuntime;
  let c: TestRuntime;
  let b: LongRunning | undefined;

  const lostFacts = async (agentId: string) => {
    const out: StoredFact[] = [];
    for await (const f of a.log.read()) {
      if (f.type === 'agent.lost' && (f.data as { agentId: string }).agentId === agentId) out.push(f);
    }
    return out;
  };
  const record = async (name: string) => {
    const kv = await new Kvm((a.bus as NatsBus).nc).open(HOSTS_BUCKET);
    return (await kv.get(name))!.json<HostRecord>();
  };

  beforeAll(async () => {
    nats = await startTestNats();
    a = await startTestRuntime({ mode: 'networked', natsUrl: nats.url, flags: { host: 'a', hosts: HOSTS } });
    c = await startTestRuntime({
      mode: 'networked',
      natsUrl: nats.url,
      flags: { host: 'c', hosts: { ...HOSTS, clockOffsetMs: -HOUR } },
    });
    const wsB = join(dir.path, 'ws-b');
    mkdirSync(join(wsB, '.skein'), { recursive: true });
    writeFileSync(join(wsB, '.skein', 'policy.json'), JSON.stringify({ default: 'allow' }));
    writeFileSync(
      join(dir.path, 'skein.config.json'),
      JSON.stringify({ hosts: { ...HOSTS, clockOffsetMs: HOUR }, domains: { terminal: { sandbox: false } } }),
    );
    b = startCli(['up', '--nats', nats.url, '--host', 'b', '--workspace', wsB, '--data', join(dir.path, 'data-b')], {
      cwd: dir.path,
      env: cleanEnv(),
    });
    await b.waitFor(/host 'b', workspace/, 60_000);
  }, 90_000);
  afterAll(async () => {
    if (b && b.child.exitCode === null) {
      b.child.kill('SIGTERM');
      await b.exited;
    }
    await c?.dispose();
    await a?.dispose();
    await nats?.dispose();
    dir.dispose();
  });

  it('keeps a host whose clock is an hour behind live, and finds one an hour ahead lost when it dies', async () => {
    // The skew is real: the records carry clocks an hour apart from this one.
    expect(Date.now() - (await record('c')).heartbeatAt).toBeGreaterThan(HOUR - 60_000);
    expect((await record('b')).heartbeatAt - Date.now()).toBeGreaterThan(HOUR - 60_000);
    ok(await a.call('agent.spawn', { label: 'on-c', agentId: 'onc', host: 'c' }));
    ok(await a.call('agent.spawn', { label: 'on-b', agentId: 'onb', host: 'b' }));
    // Three lost-after spans: c's heartbeats, an hour "old" by a's clock, keep it live all along.
    await new Promise((r) => setTimeout(r, 3 * HOSTS.lostAfterMs));
    expect(await lostFacts('onc')).toEqual([]);
    expect(ok(await a.call('agent.get', {}, { agentId: 'onc' }))).toMatchObject({ status: 'running', host: 'c' });
    expect(ok(await a.call('agent.spawn', { label: 'on-c-2', host: 'c' }))).toMatchObject({ status: 'running' });
    // b dies with heartbeats stamped an hour ahead: lost after its record stopped changing, not in an hour.
    b!.child.kill('SIGKILL');
    await b!.exited;
    const killedAt = performance.now();
    await expect.poll(async () => (await lostFacts('onb')).length, { timeout: 15_000, interval: 100 }).toBe(1);
    const lostAfter = performance.now() - killedAt;
    console.log(`host b (clock +1 h) declared lost ${lostAfter.toFixed(0)} ms after SIGKILL (lostAfterMs 2000)`);
    expect(lostAfter).toBeGreaterThan(HOSTS.lostAfterMs - HOSTS.heartbeatMs * 2);
    expect(await lostFacts('onc')).toEqual([]);
  }, 60_000);
});
