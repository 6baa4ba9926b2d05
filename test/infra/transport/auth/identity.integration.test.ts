/**
 * Per-agent identities on a real private broker (operator-mode JWTs on
 * nats-server): what an agent's credentials let it do is enforced by the
 * broker (a permissions violation), not by skein's code; a parent answers a
 * grandchild's ask; a cancelled agent's connection is closed and its creds
 * refused; a worker gets its own creds and nothing broader.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import { decode, type User } from '@nats-io/jwt';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENTS_STREAM } from '../../../../schemas/index.ts';
import { AGENT_MAX_SUBS, inboxPrefixFor } from '../../../../infra/transport/auth/permissions.ts';
import { call } from '../../../../infra/transport/client.ts';
import { decodeFact, encode } from '../../../../infra/transport/codec.ts';
import { NatsBus } from '../../../../infra/transport/nats-bus.ts';
import { runCli } from '../../../support/cli.ts';
import { ok } from '../../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../../support/runtime.ts';

const run = promisify(execFile);

type Agent = { nc: NatsConnection; bus: NatsBus; errors: string[]; creds: string };

function connectWith(url: string, creds: string, agentId?: string): Promise<NatsConnection> {
  return connect({
    servers: url,
    authenticator: credsAuthenticator(new TextEncoder().encode(creds)),
    ...(agentId ? { inboxPrefix: inboxPrefixFor(agentId) } : {}),
    maxReconnectAttempts: 0,
  });
}

/** Errors the broker sent this connection (permission violations, revocation). */
function watchErrors(nc: NatsConnection): string[] {
  const errors: string[] = [];
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'error') errors.push(String((s as { error?: Error }).error?.message));
    }
  })();
  return errors;
}

describe('per-agent identities on the private broker', () => {
  let rt: TestRuntime;
  let url: string;
  const agents: Agent[] = [];

  async function as(agentId: string): Promise<Agent> {
    const minted = await rt.auth!.authority.mintAgent(agentId);
    const nc = await connectWith(url, minted.creds, agentId);
    const agent = { nc, bus: new NatsBus(nc), errors: watchErrors(nc), creds: minted.creds };
    agents.push(agent);
    return agent;
  }

  /** Whatever reached the host's side on `pattern` (the host's user may see everything). */
  async function hostSees(pattern: string, act: () => Promise<void>): Promise<string[]> {
    const seen: string[] = [];
    const sub = rt.bus.subscribe(pattern, (m) => seen.push(m.subject));
    await rt.bus.flush();
    await act();
    await new Promise((r) => setTimeout(r, 200));
    sub.unsubscribe();
    return seen;
  }

  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'private',
      policy: { default: 'allow', tools: { write_file: { always_confirm: [{ pattern: '^docs/' }] } } },
    });
    url = rt.info.natsUrl!;
    mkdirSync(join(rt.workspace, 'docs'));
    ok(await rt.call('agent.spawn', { label: 'a', agentId: 'a' }));
    ok(await rt.call('agent.spawn', { label: 'b', agentId: 'b' }));
  }, 60_000);
  afterAll(async () => {
    for (const a of agents) await a.nc.close().catch(() => undefined);
    await rt?.dispose();
  });

  it('nothing connects without credentials', async () => {
    await expect(connect({ servers: url, maxReconnectAttempts: 0 })).rejects.toThrow(/Authorization Violation/);
  });

  it("refuses, at the broker, A's publish to B's and main's command subjects (policy.set, decide)", async () => {
    const a = await as('a');
    const seen = await hostSees('skein.cmd.>', async () => {
      a.nc.publish('skein.cmd.b.agent.get', encode({ id: 'x1', data: {} }));
      a.nc.publish('skein.cmd.main.policy.set', encode({ id: 'x2', data: { layer: 'project', policy: {} } }));
      await a.nc.flush();
    });
    expect(seen).toEqual([]);
    await expect.poll(() => a.errors.length).toBe(2);
    expect(a.errors).toEqual([
      'Permissions Violation for Publish to "skein.cmd.b.agent.get"',
      'Permissions Violation for Publish to "skein.cmd.main.policy.set"',
    ]);
    // Its own subjects still work: the connection is not dropped for trying.
    expect(ok(await call(a.bus, 'a', 'agent.get', {}))).toMatchObject({ agentId: 'a', parentId: 'main' });
  });

  it(`refuses an agent's subscriptions past ${AGENT_MAX_SUBS}, and keeps its connection`, async () => {
    const a = await as('a');
    const subs = Array.from({ length: AGENT_MAX_SUBS + 3 }, () => a.nc.subscribe('skein.out.a.>'));
    await a.nc.flush().catch(() => undefined);
    await expect
      .poll(() => a.errors.filter((e) => /maximum subscriptions exceeded/i.test(e)).length)
      .toBeGreaterThan(0);
    for (const sub of subs) sub.unsubscribe();
    await a.nc.flush().catch(() => undefined);
    expect(ok(await call(a.bus, 'a', 'agent.get', {}))).toMatchObject({ agentId: 'a' });
  });

  it('A cannot approve its own pending request through main', async () => {
    const a = await as('a');
    const write = call(a.bus, 'a', 'file.write', { path: 'docs/self.md', content: 'canary-self-approve\n' });
    let requestId = '';
    await expect
      .poll(async () => {
        const pending = ok(await rt.call('permission.pending', {}));
        requestId = (pending['requests'] as Array<{ requestId: string }>)[0]?.requestId ?? '';
        return requestId;
      })
      .not.toBe('');
    a.nc.publish('skein.cmd.main.permission.decide', encode({ id: 'x3', data: { requestId, decision: 'allow_once' } }));
    await a.nc.flush();
    await expect
      .poll(() => a.errors)
      .toContain('Permissions Violation for Publish to "skein.cmd.main.permission.decide"');
    const still = ok(await rt.call('permission.pending', {}));
    expect((still['requests'] as Array<{ requestId: string }>).map((r) => r.requestId)).toEqual([requestId]);
    ok(await rt.call('permission.decide', { requestId, decision: 'deny_once' }));
    expect((await write).ok).toBe(false);
    expect(existsSync(join(rt.workspace, 'docs/self.md'))).toBe(false);
  });

  it("refuses A's subscriptions to B's output and to asks outside its subtree", async () => {
    const a = await as('a');
    for (const subject of ['skein.out.b.>', 'skein.ask.>', 'skein.ask.main.>', 'skein.evt.>', '>']) {
      a.nc.subscribe(subject);
    }
    await a.nc.flush();
    await expect.poll(() => a.errors.length).toBe(5);
    expect(a.errors.every((e) => e.startsWith('Permissions Violation for Subscription to'))).toBe(true);
  });

  it('A cannot publish facts or call any $JS.API subject; the audit log is intact', async () => {
    const a = await as('a');
    const before = await rt.log.lastSeq();
    const forged = { id: 'forged', type: 'agent.completed', at: new Date().toISOString(), agentId: 'main' };
    a.nc.publish('skein.evt.main.agent.a', encode({ ...forged, data: { agentId: 'a', result: 'canary' } }));
    a.nc.publish('$JS.API.STREAM.DELETE.SKEIN_EVENTS', '');
    a.nc.publish('$JS.API.STREAM.UPDATE.SKEIN_EVENTS', JSON.stringify({ name: EVENTS_STREAM, max_msgs: 5 }));
    a.nc.publish('$JS.API.STREAM.INFO.SKEIN_EVENTS', '');
    await a.nc.flush();
    await expect.poll(() => a.errors.length).toBe(4);
    expect(a.errors.every((e) => e.startsWith('Permissions Violation for Publish to'))).toBe(true);
    const info = await (await jetstreamManager((rt.bus as NatsBus).nc)).streams.info(EVENTS_STREAM);
    expect(info.config.max_msgs).toBe(-1);
    expect(info.config.deny_delete).toBe(true);
    expect(info.state.last_seq).toBe(before);
  });

  it("a parent receives its grandchild's ask on its own subjects and answers it", async () => {
    ok(await rt.call('agent.spawn', { label: 'lead', agentId: 'lead' }));
    const lead = await as('lead');
    ok(await call(lead.bus, 'lead', 'agent.spawn', { label: 'mid', agentId: 'mid' }));
    const mid = await as('mid');
    ok(await call(mid.bus, 'mid', 'agent.spawn', { label: 'leaf', agentId: 'leaf' }));
    const leaf = await as('leaf');
    const asks: Array<{ type: string; requestId: string }> = [];
    lead.nc.subscribe('skein.ask.lead.>', {
      callback: (_err, m) => {
        const fact = decodeFact(m.subject, m.data);
        asks.push({ type: fact.type, requestId: (fact.data as { requestId: string }).requestId });
      },
    });
    await lead.nc.flush();
    const write = call(leaf.bus, 'leaf', 'file.write', { path: 'docs/leaf.md', content: 'leaf\n' });
    await expect.poll(() => asks.length, { timeout: 10_000 }).toBe(1);
    expect(asks[0]!.type).toBe('permission.requested');
    const decided = ok(
      await call(lead.bus, 'lead', 'permission.decide', { requestId: asks[0]!.requestId, decision: 'allow_once' }),
    );
    expect(decided).toMatchObject({ outcome: 'granted' });
    ok(await write);
    expect(readFileSync(join(rt.workspace, 'docs/leaf.md'), 'utf8')).toBe('leaf\n');
    expect(lead.errors).toEqual([]);
  });

  it("a cancelled agent's connections are closed within 1 s (its subtree's too) and its creds refused", async () => {
    ok(await rt.call('agent.spawn', { label: 'doomed', agentId: 'doomed' }));
    const doomed = await as('doomed');
    ok(await call(doomed.bus, 'doomed', 'agent.spawn', { label: 'kid', agentId: 'doomed-kid' }));
    const kid = await as('doomed-kid');
    // The broker closes a revoked user's connection with this error (the client's own retries come after).
    const revoked = async (a: Agent) => {
      await expect.poll(() => a.errors, { timeout: 5_000, interval: 5 }).toContain('User Authentication Revoked');
      return performance.now();
    };
    const doomedRevoked = revoked(doomed);
    const kidRevoked = revoked(kid);
    ok(await rt.call('agent.cancel', { agentId: 'doomed' }));
    const cancelledAt = performance.now();
    const [d, k] = await Promise.all([doomedRevoked, kidRevoked]);
    console.log(`revocation: connection closed ${(d - cancelledAt).toFixed(1)} ms after the cancel reply`);
    expect(d - cancelledAt).toBeLessThan(1_000);
    expect(k - cancelledAt).toBeLessThan(1_000);
    await expect(connectWith(url, doomed.creds, 'doomed')).rejects.toThrow(/Authorization Violation/);
    await expect(connectWith(url, kid.creds, 'doomed-kid')).rejects.toThrow(/Authorization Violation/);
    await expect(rt.auth!.authority.mintAgent('doomed')).rejects.toThrow(/revoked/);
  });

  it("a worker's environment and files hold its own creds only, 0600, removed when it exits", async () => {
    const script =
      'grep -rls "NKEY SEED" . > w-found.txt; env > w-env.txt; cat "$SKEIN_NATS_CREDS" > w-creds.txt; ' +
      'stat -c %a "$SKEIN_NATS_CREDS" > w-mode.txt; true';
    ok(
      await rt.call('agent.spawn', {
        label: 'w',
        agentId: 'wkr',
        worker: { command: 'sh', args: ['-c', script] },
      }),
    );
    await expect
      .poll(async () => ok(await rt.call('agent.get', {}, { agentId: 'wkr' }))['status'], { timeout: 20_000 })
      .toBe('failed');
    const env = readFileSync(join(rt.workspace, 'w-env.txt'), 'utf8');
    const credsPath = /^SKEIN_NATS_CREDS=(.*)$/m.exec(env)?.[1];
    expect(credsPath).toMatch(new RegExp(`^${join(rt.dir, 'data', 'auth', 'workers')}/wkr-[0-9a-f]{8}\\.creds$`));
    expect(credsPath!.startsWith(rt.workspace)).toBe(false);
    expect(env).not.toMatch(/operator\.creds|keys\.json|SU[A-Z0-9]{50,}/);
    expect(readFileSync(join(rt.workspace, 'w-mode.txt'), 'utf8').trim()).toBe('600');
    const creds = readFileSync(join(rt.workspace, 'w-creds.txt'), 'utf8');
    const jwt = /NATS USER JWT-----\s*(\S+)/.exec(creds)![1]!;
    const claims = decode<User>(jwt);
    expect(claims.name).toBe('wkr');
    expect(claims.nats.pub?.allow).toEqual(['skein.cmd.wkr.>']);
    expect(readFileSync(join(rt.workspace, 'w-found.txt'), 'utf8').trim()).toBe('');
    // Gone once the worker exited, and revoked with its agent.
    expect(existsSync(credsPath!)).toBe(false);
    await expect(connectWith(url, creds, 'wkr')).rejects.toThrow(/Authorization Violation/);
  });

  it('`skein creds` writes a .creds file that acts as exactly that agent, and refuses unknown agents', async () => {
    const data = join(rt.dir, 'data');
    const out = join(rt.dir, 'b.creds');
    const written = await runCli(['creds', 'b', '--out', out, '--data', data]);
    expect(written.code, written.stderr).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const creds = readFileSync(out, 'utf8');
    const nc = await connectWith(url, creds, 'b');
    const b = { nc, bus: new NatsBus(nc), errors: watchErrors(nc), creds };
    agents.push(b);
    expect(ok(await call(b.bus, 'b', 'agent.get', {}))).toMatchObject({ agentId: 'b' });
    nc.publish('skein.cmd.a.agent.get', encode({ id: 'x9', data: {} }));
    await nc.flush();
    await expect.poll(() => b.errors).toEqual(['Permissions Violation for Publish to "skein.cmd.a.agent.get"']);
    const unknown = await runCli(['creds', 'nobody', '--data', data]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/agent 'nobody'.*does not exist/);
    expect(unknown.stdout).toBe('');
    const bad = await runCli(['creds', 'no/such', '--data', data]);
    expect(bad.stderr).toMatch(/agent id 'no\/such' is not valid/);
  });

  it('the websocket listener is on loopback and applies the same permissions', async () => {
    expect(rt.info.websocketUrl).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const credsFile = join(rt.dir, 'ws-b.creds');
    writeFileSync(credsFile, (await rt.auth!.authority.mintAgent('b')).creds, { mode: 0o600 });
    const probe = fileURLToPath(new URL('../../../support/ws-probe.mjs', import.meta.url));
    const { stdout } = await run(
      process.execPath,
      ['--experimental-websocket', probe, rt.info.websocketUrl!, credsFile, 'b'],
      {
        timeout: 20_000,
      },
    );
    const [first, second] = stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(first.reply).toMatchObject({ ok: true, agentId: 'b' });
    expect(second.errors).toEqual(['Permissions Violation for Publish to "skein.cmd.main.agent.get"']);
  });

  it('a terminal that is not a worker gets no credentials', async () => {
    const opened = ok(await rt.call('terminal.open', {}, { agentId: 'b' }));
    ok(
      await rt.call(
        'terminal.exec',
        { terminalId: opened['terminalId'], command: 'env > t-env.txt', yieldMs: 10_000 },
        { agentId: 'b' },
      ),
    );
    await expect.poll(() => existsSync(join(rt.workspace, 't-env.txt'))).toBe(true);
    const env = readFileSync(join(rt.workspace, 't-env.txt'), 'utf8');
    expect(env).not.toMatch(/SKEIN_NATS_CREDS|SKEIN_NATS_URL|creds/);
    expect(statSync(join(rt.dir, 'data', 'auth', 'keys.json')).mode & 0o777).toBe(0o600);
    expect(statSync(join(rt.dir, 'data', 'auth', 'operator.creds')).mode & 0o777).toBe(0o600);
  });
});
