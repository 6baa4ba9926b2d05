/**
 * A named host's heartbeat against a broker that stops answering (SIGSTOP): each beat and each read of the
 * registry can wait its whole request timeout, and a tick must not start another beside the one still
 * waiting (before, every tick did: requests piled up, one beat and one read per heartbeat, for as long as
 * the broker was away).
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostRegistry } from '../../../infra/kernel/host-registry.ts';
import { HostsConfig } from '../../../schemas/index.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';

describe('host registry heartbeat on a stopped broker', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  beforeAll(async () => {
    nats = await startTestNats();
    nc = await connect({ servers: nats.url });
  });
  afterAll(async () => {
    await nc?.close().catch(() => undefined);
    await nats?.dispose();
  });

  it('keeps one beat and one read in flight while the broker is stopped, and beats again after', async () => {
    const registry = await HostRegistry.open({
      nc,
      name: 'a',
      hostId: 'h-test',
      workspace: '/w',
      config: HostsConfig.parse({ heartbeatMs: 100, lostAfterMs: 1_000 }),
      replicas: 1,
      logger: pino({ level: 'silent' }),
    });
    await registry.join();
    await new Promise((r) => setTimeout(r, 300));
    const revisionBefore = registry.revision('a') ?? 0;
    process.kill(nats.pid, 'SIGSTOP');
    const sentBefore = nc.stats().outMsgs;
    try {
      // 20 heartbeats, all within the requests' 5 s timeout.
      await new Promise((r) => setTimeout(r, 2_000));
      const sent = nc.stats().outMsgs - sentBefore;
      expect(sent, `${sent} requests sent while the broker was stopped`).toBeLessThanOrEqual(4);
    } finally {
      process.kill(nats.pid, 'SIGCONT');
    }
    await expect.poll(() => registry.revision('a') ?? 0, { timeout: 15_000 }).toBeGreaterThan(revisionBefore);
    await registry.leave();
  }, 30_000);
});
