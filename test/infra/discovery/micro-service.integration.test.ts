/**
 * NATS service discovery over a real nats-server: a plain nats.js client
 * (no skein code) pings, gets INFO with every command as an endpoint and its
 * JSON Schemas, and STATS that count the calls handlers served. Commands
 * still reach the host's wildcard subscription (they are answered), and the
 * same subjects answer on an embedded runtime's socket.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../schemas/catalog.ts';
import { operatorSocket } from '../../support/socket.ts';
import { startNetworkedRuntime, startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

type Info = {
  type: string;
  name: string;
  id: string;
  version: string;
  endpoints: Array<{ name: string; subject: string; metadata: Record<string, string> }>;
};
type Stats = { type: string; endpoints: Array<{ name: string; num_requests: number; num_errors: number }> };

describe('$SRV discovery over a real nats-server', () => {
  let rt: TestRuntime;
  let nc: NatsConnection;
  const ask = async <T>(subject: string) =>
    JSON.parse(new TextDecoder().decode((await nc.request(subject, '', { timeout: 5_000 })).data)) as T;

  beforeAll(async () => {
    rt = await startNetworkedRuntime();
    nc = await connect({ servers: rt.info.natsUrl! });
  });
  afterAll(async () => {
    await nc?.close();
    await rt?.dispose();
  });

  it('answers $SRV.PING, by name and by id', async () => {
    for (const subject of ['$SRV.PING', '$SRV.PING.skein', `$SRV.PING.skein.${rt.info.hostId}`]) {
      const ping = await ask<{ type: string; name: string; id: string }>(subject);
      expect(ping).toMatchObject({ type: 'io.nats.micro.v1.ping_response', name: 'skein', id: rt.info.hostId });
    }
  });

  it('answers $SRV.INFO with every command as an endpoint and its schemas', async () => {
    const info = await ask<Info>('$SRV.INFO');
    expect(info).toMatchObject({ type: 'io.nats.micro.v1.info_response', name: 'skein', version: '0.1.0' });
    expect(info.endpoints.map((e) => e.name).sort()).toEqual(COMMANDS.map((c) => c.type).sort());
    const exec = info.endpoints.find((e) => e.name === 'terminal.exec')!;
    expect(exec.subject).toBe('skein.cmd.*.terminal.exec');
    const request = JSON.parse(exec.metadata['request_schema']!) as { properties: Record<string, unknown> };
    expect(Object.keys(request.properties)).toContain('command');
    const response = JSON.parse(exec.metadata['response_schema']!) as { properties: Record<string, unknown> };
    expect(Object.keys(response.properties)).toContain('exitCode');
    // The micro protocol caps nothing, but NATS does: INFO must fit the default 1 MiB max payload.
    expect(JSON.stringify(info).length).toBeLessThan(1024 * 1024);
  });

  it('counts served calls in $SRV.STATS while the wildcard path keeps answering', async () => {
    const before = await ask<Stats>('$SRV.STATS.skein');
    const pings = before.endpoints.find((e) => e.name === 'runtime.ping')!.num_requests;
    for (let i = 0; i < 3; i++) expect(await rt.call('runtime.ping')).toMatchObject({ ok: true, pong: true });
    const refused = await rt.call('agent.get', {}, { agentId: 'nobody' });
    expect(refused.ok).toBe(false);
    const after = await ask<Stats>('$SRV.STATS.skein');
    expect(after.type).toBe('io.nats.micro.v1.stats_response');
    expect(after.endpoints.find((e) => e.name === 'runtime.ping')!.num_requests).toBe(pings + 3);
  });
});

describe('$SRV discovery on an embedded runtime', () => {
  it('answers $SRV.INFO through the unix socket', async () => {
    const rt = await startTestRuntime({ mode: 'embedded' });
    try {
      const bus = await operatorSocket(rt.info.dataDir, rt.info.socketPath!);
      try {
        const bytes = await bus.request('$SRV.INFO.skein', '', { timeoutMs: 5_000 });
        const info = JSON.parse(new TextDecoder().decode(bytes)) as Info;
        expect(info.name).toBe('skein');
        expect(info.endpoints.length).toBe(COMMANDS.length);
      } finally {
        await bus.close();
      }
    } finally {
      await rt.dispose();
    }
  });
});
