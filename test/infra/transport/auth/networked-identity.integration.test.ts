/**
 * Networked mode with identities against a NATS deployment skein did not
 * start: `skein auth init` writes the JWTs, keys and config snippet; a
 * nats-server is started from that snippet alone; `skein up --nats --creds
 * --signing-key` mints a worker's creds, and the broker holds that worker to
 * its own subjects (permissions violations) and closes it when its agent is
 * cancelled, as on the private broker.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inboxPrefixFor } from '../../../../infra/transport/auth/permissions.ts';
import { call } from '../../../../infra/transport/client.ts';
import { encode } from '../../../../infra/transport/codec.ts';
import { NatsBus } from '../../../../infra/transport/nats-bus.ts';
import { freePort, startNatsServer, type NatsServerHandle } from '../../../../infra/transport/nats-server.ts';
import { cleanEnv, runCli, startCli, type LongRunning } from '../../../support/cli.ts';
import { ok } from '../../../support/replies.ts';
import { tempDir } from '../../../support/temp-dir.ts';

describe('networked mode: skein auth init, then skein up --nats --creds --signing-key', () => {
  const temp = tempDir('skein-netauth-');
  const auth = join(temp.path, 'auth');
  const data = join(temp.path, 'data');
  const workspace = join(temp.path, 'ws');
  let server: NatsServerHandle | undefined;
  let up: LongRunning | undefined;
  let worker: NatsConnection | undefined;

  beforeAll(async () => {
    mkdirSync(join(workspace, '.skein'), { recursive: true });
    writeFileSync(join(workspace, '.skein', 'policy.json'), JSON.stringify({ default: 'allow' }));
    // The sandbox hides the data dir, where a worker's creds file is (see README, Known limits).
    writeFileSync(
      join(workspace, '.skein', 'config.json'),
      JSON.stringify({ domains: { terminal: { sandbox: false } } }),
    );
  });
  afterAll(async () => {
    await worker?.close().catch(() => undefined);
    if (up && up.child.exitCode === null) {
      up.child.kill('SIGTERM');
      await up.exited;
    }
    await server?.stop();
    temp.dispose();
  });

  it('auth init writes the JWTs, the signing key, host creds and a server snippet, all 0600', async () => {
    const init = await runCli(['auth', 'init', '--out', auth]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`next: skein up --nats <url> --creds ${join(auth, 'host.creds')}`);
    for (const file of ['operator.jwt', 'account.jwt', 'system.jwt', 'account.nk', 'host.creds', 'nats-server.conf']) {
      expect(statSync(join(auth, file)).mode & 0o777, file).toBe(0o600);
    }
    expect(statSync(auth).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(auth, 'account.nk'), 'utf8')).toMatch(/^SA[A-Z2-7]{56}\n$/);
    const conf = readFileSync(join(auth, 'nats-server.conf'), 'utf8');
    expect(conf).toContain(`operator: "${readFileSync(join(auth, 'operator.jwt'), 'utf8').trim()}"`);
    expect(conf).not.toMatch(/websocket|SA[A-Z2-7]{56}|SO[A-Z2-7]{56}/);
  });

  it('a nats-server started from the snippet alone lets nothing in without credentials', async () => {
    server = await startNatsServer({
      storeDir: join(temp.path, 'js'),
      port: await freePort(),
      configFile: join(auth, 'nats-server.conf'),
    });
    await expect(connect({ servers: server.url, maxReconnectAttempts: 0 })).rejects.toThrow(/Authorization Violation/);
  });

  it('refuses --creds without --signing-key, saying which is missing', async () => {
    const r = await runCli(
      ['up', '--nats', server!.url, '--creds', join(auth, 'host.creds'), '--data', join(temp.path, 'd2')],
      { cwd: workspace },
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/needs both --creds and --signing-key \(got only --creds\)/);
  });

  it("skein up mints a worker's own creds, and the broker refuses it everything else", async () => {
    up = startCli(
      [
        'up',
        '--nats',
        server!.url,
        '--creds',
        join(auth, 'host.creds'),
        '--signing-key',
        join(auth, 'account.nk'),
        '--data',
        data,
        '--workspace',
        workspace,
      ],
      { env: cleanEnv(), cwd: workspace },
    );
    await up.waitFor(/mode networked/, 30_000);
    // The CLI on this machine acts as the operator with the creds the host wrote into the data dir.
    const script = 'cat "$SKEIN_NATS_CREDS" > w.creds; sleep 30';
    const spawned = await runCli([
      'call',
      'agent.spawn',
      JSON.stringify({ label: 'w', agentId: 'w', worker: { command: 'sh', args: ['-c', script] } }),
      '--data',
      data,
    ]);
    expect(spawned.code, spawned.stderr).toBe(0);
    await expect
      .poll(() => existsSync(join(workspace, 'w.creds')) && readFileSync(join(workspace, 'w.creds'), 'utf8'), {
        timeout: 20_000,
      })
      .toMatch(/BEGIN NATS USER JWT/);
    const creds = readFileSync(join(workspace, 'w.creds'), 'utf8');
    worker = await connect({
      servers: server!.url,
      authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
      inboxPrefix: inboxPrefixFor('w'),
      maxReconnectAttempts: 0,
    });
    const errors: string[] = [];
    void (async () => {
      for await (const s of worker!.status())
        if (s.type === 'error') errors.push(String((s as { error?: Error }).error?.message));
    })();
    expect(ok(await call(new NatsBus(worker), 'w', 'agent.get', {}))).toMatchObject({ agentId: 'w', parentId: 'main' });
    worker.publish('skein.cmd.main.policy.set', encode({ id: 'x1', data: { layer: 'project', policy: {} } }));
    worker.publish('skein.evt.main.agent.w', encode({ id: 'forged' }));
    worker.publish('$JS.API.STREAM.DELETE.SKEIN_EVENTS', '');
    worker.subscribe('skein.ask.>');
    await worker.flush();
    await expect.poll(() => errors.length).toBe(4);
    expect(errors).toEqual([
      'Permissions Violation for Publish to "skein.cmd.main.policy.set"',
      'Permissions Violation for Publish to "skein.evt.main.agent.w"',
      'Permissions Violation for Publish to "$JS.API.STREAM.DELETE.SKEIN_EVENTS"',
      'Permissions Violation for Subscription to "skein.ask.>"',
    ]);
    const status = await runCli(['call', 'agent.get', '{}', '--agent', 'w', '--data', data]);
    expect(status.code, status.stderr).toBe(0);
    expect(statSync(join(data, 'auth', 'operator.creds')).mode & 0o777).toBe(0o600);

    // The operator keys sit beside account.nk (auth init's dir): cancelling the agent revokes its user.
    const cancelled = await runCli(['call', 'agent.cancel', '{"agentId":"w"}', '--data', data]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    await expect.poll(() => errors, { timeout: 5_000 }).toContain('User Authentication Revoked');
    await expect(
      connect({
        servers: server!.url,
        authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
        maxReconnectAttempts: 0,
      }),
    ).rejects.toThrow(/Authorization Violation/);
  }, 90_000);
});
