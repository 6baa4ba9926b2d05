/**
 * Workers on a named host with per-host credentials (issue 16), real processes on loopback: `skein auth init
 * --host a --host b` writes each host its own creds; a 3-node cluster runs from auth init's server config (no
 * connection without credentials); host a runs in this process, host b is `skein up --host b --creds
 * host-b.creds --signing-key account.nk`. A worker spawned from a with `host: b` runs on b with an identity b
 * minted, streams its output live, completes, is cancelled, and is lost with b; a hostile worker on b cannot
 * act as another agent or outside its subtree.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode, type User } from '@nats-io/jwt';
import { connect, credsAuthenticator } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredFact } from '../../schemas/index.ts';
import { isAlive } from '../../infra/transport/nats-server.ts';
import type { NatsBus } from '../../infra/transport/nats-bus.ts';
import { call } from '../../infra/transport/client.ts';
import { runCli, SKEIN_BIN, type LongRunning } from '../support/cli.ts';
import { startNamedHost, startTestCluster, stopNamedHost, type TestCluster } from '../support/nats-cluster.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { tempDir } from '../support/temp-dir.ts';

const HOSTS = { heartbeatMs: 250, lostAfterMs: 4_000 };

/** A worker's `skein call` as itself: its creds come from SKEIN_NATS_CREDS, its id from SKEIN_AGENT_ID. */
const skeinCall = (type: string, json: string, as = '"$SKEIN_AGENT_ID"') =>
  `node ${SKEIN_BIN} call ${type} '${json}' --agent ${as} --nats "$SKEIN_NATS_URL" --timeout 3000`;

describe('workers on a named host, with per-host credentials', () => {
  const dir = tempDir('skein-rworkers-');
  const auth = join(dir.path, 'auth');
  const wsB = join(dir.path, 'ws-b');
  const dataB = join(dir.path, 'data-b');
  let cluster: TestCluster;
  let a: TestRuntime;
  let b: LongRunning | undefined;
  let bus: NatsBus;

  const startB = () =>
    startNamedHost({
      url: cluster.url,
      host: 'b',
      workspace: wsB,
      data: dataB,
      cwd: dir.path,
      extra: ['--creds', join(auth, 'host-b.creds'), '--signing-key', join(auth, 'account.nk')],
    });
  const factsOf = async (subject: string) => {
    const out: StoredFact[] = [];
    for await (const f of a.log.read({ subject })) out.push(f);
    return out;
  };

  beforeAll(async () => {
    const init = await runCli(['auth', 'init', '--out', auth, '--host', 'a', 'b']);
    expect(init.code, init.stderr).toBe(0);
    const conf = readFileSync(join(auth, 'nats-server.conf'), 'utf8');
    cluster = await startTestCluster(3, {
      // Each node its own resolver dir; the accounts come preloaded from the snippet.
      configFor: (name, nodeDir) => {
        const path = join(nodeDir, `${name}.conf`);
        writeFileSync(path, conf.replace(JSON.stringify(join(auth, 'resolver')), JSON.stringify(join(nodeDir, 'res'))));
        return path;
      },
      probeCreds: readFileSync(join(auth, 'host-a.creds'), 'utf8'),
    });
    mkdirSync(join(wsB, '.skein'), { recursive: true });
    writeFileSync(join(wsB, '.skein', 'policy.json'), JSON.stringify({ default: 'allow' }));
    // The sandbox hides the data dir, where a worker's creds file is (README, Known limits).
    writeFileSync(
      join(dir.path, 'skein.config.json'),
      JSON.stringify({ hosts: HOSTS, domains: { terminal: { sandbox: false } } }),
    );
    a = await startTestRuntime({
      mode: 'networked',
      natsUrl: cluster.url,
      flags: {
        host: 'a',
        hosts: HOSTS,
        natsCreds: join(auth, 'host-a.creds'),
        signingKey: join(auth, 'account.nk'),
      },
    });
    bus = a.bus as NatsBus;
    b = await startB();
  }, 120_000);
  afterAll(async () => {
    await stopNamedHost(b);
    await a?.dispose();
    await cluster?.dispose();
    dir.dispose();
  });

  it('auth init gives each named host its own creds (0600), and the cluster lets nothing in without', async () => {
    const user = (file: string) => {
      const creds = readFileSync(join(auth, file), 'utf8');
      return decode<User>(/NATS USER JWT-----\s*(\S+)/.exec(creds)![1]!);
    };
    expect(statSync(join(auth, 'host-a.creds')).mode & 0o777).toBe(0o600);
    expect(statSync(join(auth, 'host-b.creds')).mode & 0o777).toBe(0o600);
    expect([user('host-a.creds').name, user('host-b.creds').name]).toEqual(['skein-host-a', 'skein-host-b']);
    expect(user('host-a.creds').sub).not.toBe(user('host-b.creds').sub);
    await expect(
      connect({ servers: cluster.nodes[1]!.url, maxReconnectAttempts: 0, reconnect: false }),
    ).rejects.toThrow(/Authorization Violation/);
    const bad = await runCli(['auth', 'init', '--out', join(dir.path, 'auth2'), '--host', 'no/pe']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--host 'no/pe' is not a valid host name");
  });

  it('runs a worker placed on b there, with an identity b minted; its output is live; it completes', async () => {
    const output: string[] = [];
    const sub = bus.subscribe('skein.out.w1.>', (m) => void output.push(new TextDecoder().decode(m.data)));
    const script =
      'pwd > w1-pwd.txt; cat "$SKEIN_NATS_CREDS" > w1.creds; echo progress-one; sleep 0.5; echo progress-two; ' +
      skeinCall('agent.complete', '{"result":{"on":"b"}}');
    const t0 = performance.now();
    const spawned = ok(
      await a.call('agent.spawn', {
        label: 'w1',
        agentId: 'w1',
        host: 'b',
        worker: { command: 'sh', args: ['-c', script] },
      }),
    );
    const spawnMs = performance.now() - t0;
    expect(spawned).toMatchObject({ agentId: 'w1', workspace: realpathSync(wsB), status: 'running' });
    const waited = ok(await a.call('agent.wait', { agentId: 'w1', timeoutMs: 30_000 }));
    sub.unsubscribe();
    expect(waited, JSON.stringify({ waited, output })).toMatchObject({
      status: 'completed',
      done: true,
      result: { on: 'b' },
    });
    expect(readFileSync(join(wsB, 'w1-pwd.txt'), 'utf8').trim()).toBe(realpathSync(wsB));
    expect(existsSync(join(a.workspace, 'w1-pwd.txt'))).toBe(false);
    // The identity was minted by b for w1 alone, and its creds file lives in b's data dir.
    const claims = decode<User>(/NATS USER JWT-----\s*(\S+)/.exec(readFileSync(join(wsB, 'w1.creds'), 'utf8'))![1]!);
    expect(claims.name).toBe('w1');
    expect(claims.nats.pub?.allow).toEqual(['skein.cmd.w1.>']);
    // Live progress: the worker's terminal output reached a subscriber on the other host's side as it ran.
    expect(JSON.stringify(output)).toContain('progress-one');
    // The facts: spawned by a, the worker started by b, completed by b.
    const facts = await factsOf('skein.evt.main.agent.w1');
    expect(facts.map((f) => f.type)).toEqual(['agent.spawned', 'agent.worker.started', 'agent.completed']);
    console.log(`remote worker spawn reply: ${spawnMs.toFixed(0)} ms`);
  }, 60_000);

  it('refuses a hostile worker on b everything outside its own subtree: the canaries never appear', async () => {
    const canaryA = join(a.workspace, 'CANARY-A.txt');
    const canaryB = join(realpathSync(wsB), 'CANARY-B.txt');
    ok(await a.call('agent.spawn', { label: 'victim', agentId: 'victim', host: 'b' }));
    // Acting as the root (on a), as a sibling on b, cancelling the sibling, and writing outside its workspace.
    const attempts = [
      skeinCall('file.write', JSON.stringify({ path: canaryA, content: 'x' }), 'main'),
      skeinCall('file.write', JSON.stringify({ path: canaryB, content: 'x' }), 'victim'),
      skeinCall('agent.cancel', '{"agentId":"victim"}'),
      skeinCall('agent.spawn', '{"label":"up","host":"a"}', 'main'),
      skeinCall('file.write', JSON.stringify({ path: canaryA, content: 'x' })),
    ];
    const tries = attempts.map((c, i) => `${c} > att-${i}.txt 2>&1; echo "exit $?" >> att-${i}.txt`);
    const script = `${tries.join('; ')}; ${skeinCall('agent.complete', '{"result":"tried"}')}`;
    ok(
      await a.call('agent.spawn', {
        label: 'evil',
        agentId: 'evil',
        host: 'b',
        worker: { command: 'sh', args: ['-c', script] },
      }),
    );
    const waited = ok(
      await call(a.bus, 'main', 'agent.wait', { agentId: 'evil', timeoutMs: 60_000 }, { timeoutMs: 70_000 }),
    );
    expect(waited).toMatchObject({ status: 'completed', result: 'tried' });
    const result = (i: number) => readFileSync(join(wsB, `att-${i}.txt`), 'utf8');
    for (let i = 0; i < attempts.length; i++) expect(result(i)).not.toMatch(/exit 0\s*$/);
    // The broker holds b's worker to its own subjects (its user was minted by b with evil's permissions).
    expect(result(0)).toContain('Permissions Violation for Publish to "skein.cmd.main.file.write"');
    expect(result(1)).toContain('Permissions Violation for Publish to "skein.cmd.victim.file.write"');
    expect(result(3)).toContain('Permissions Violation for Publish to "skein.cmd.main.agent.spawn"');
    expect(result(2)).toContain("agent 'evil' is not 'victim' nor one of its ancestors");
    expect(result(4)).toMatch(/outside|workspace/);
    expect(existsSync(canaryA)).toBe(false);
    expect(existsSync(canaryB)).toBe(false);
    expect(ok(await a.call('agent.get', {}, { agentId: 'victim' }))).toMatchObject({ status: 'running' });
    expect(
      (ok(await a.call('agent.tree')) as { agents: { label: string }[] }).agents.map((n) => n.label),
    ).not.toContain('up');
  }, 90_000);

  it("refuses people (operator creds) the hosts' own subjects: no worker start with an env of theirs", async () => {
    const creds = readFileSync(join(a.dir, 'data', 'auth', 'operator.creds'));
    const nc = await connect({ servers: cluster.url.split(','), authenticator: credsAuthenticator(creds) });
    try {
      const errors: string[] = [];
      void (async () => {
        for await (const s of nc.status()) if (s.type === 'error') errors.push(String(s.error?.message));
      })();
      nc.publish('skein.host.b.agent.worker.start', JSON.stringify({ agentId: 'w1', env: { LD_PRELOAD: '/x' } }));
      await nc.flush();
      await expect
        .poll(() => errors)
        .toEqual(['Permissions Violation for Publish to "skein.host.b.agent.worker.start"']);
    } finally {
      await nc.close();
    }
  });

  it('cancels a worker on b from a: its process ends there', async () => {
    const script = 'echo $$ > w2.pid; exec sleep 600';
    ok(
      await a.call('agent.spawn', {
        label: 'w2',
        agentId: 'w2',
        host: 'b',
        worker: { command: 'sh', args: ['-c', script] },
      }),
    );
    // The file exists (the shell's redirection made it) before it holds the pid: wait for the number itself.
    const pidFile = join(wsB, 'w2.pid');
    const written = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) || 0 : 0);
    await expect.poll(written, { timeout: 10_000 }).toBeGreaterThan(0);
    const pid = written();
    expect(isAlive(pid)).toBe(true);
    expect(ok(await a.call('agent.cancel', { agentId: 'w2' }))).toMatchObject({ cancelled: ['w2'] });
    await expect.poll(() => isAlive(pid), { timeout: 10_000 }).toBe(false);
  }, 60_000);

  it('answers a waiting parent `lost` when b dies under its worker, and fails the worker when b returns', async () => {
    const script = 'echo $$ > w3.pid; exec sleep 600';
    ok(
      await a.call('agent.spawn', {
        label: 'w3',
        agentId: 'w3',
        host: 'b',
        worker: { command: 'sh', args: ['-c', script] },
      }),
    );
    await expect.poll(() => existsSync(join(wsB, 'w3.pid')), { timeout: 10_000 }).toBe(true);
    const waiting = a.call('agent.wait', { agentId: 'w3', timeoutMs: 30_000 });
    b!.child.kill('SIGKILL');
    await b!.exited;
    const killedAt = performance.now();
    expect(ok(await waiting)).toMatchObject({ agentId: 'w3', status: 'lost', done: false });
    console.log(`worker agent lost ${(performance.now() - killedAt).toFixed(0)} ms after host b was SIGKILLed`);
    b = await startB();
    const after = ok(await a.call('agent.wait', { agentId: 'w3', timeoutMs: 20_000 }));
    expect(after).toMatchObject({ status: 'failed', done: true, error: expect.stringMatching(/^host_restarted/) });
  }, 120_000);
});
