/**
 * Per-agent identities in embedded mode: every connection to the runtime's
 * unix socket presents a token, and the socket refuses what the broker
 * refuses in the other modes (the same permission lists), with the same
 * attacks as identity.integration.test.ts tries on nats-server.
 */
import { createConnection } from 'node:net';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintSocketToken, socketKey } from '../../../../infra/transport/auth/socket-tokens.ts';
import { call } from '../../../../infra/transport/client.ts';
import { decodeFact, encode } from '../../../../infra/transport/codec.ts';
import { SocketBus } from '../../../../infra/transport/socket-bus.ts';
import { runCli } from '../../../support/cli.ts';
import { ok } from '../../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../../support/runtime.ts';

type Agent = { bus: SocketBus; errors: string[]; token: string };

describe('per-agent identities on the embedded socket', () => {
  let rt: TestRuntime;
  let dataDir: string;
  let socket: string;
  const agents: Agent[] = [];

  async function withToken(token: string): Promise<Agent> {
    const errors: string[] = [];
    const bus = await SocketBus.connect(socket, { token, onError: (m) => errors.push(m) });
    const agent = { bus, errors, token };
    agents.push(agent);
    return agent;
  }

  const as = (agentId: string) => withToken(mintSocketToken(socketKey(dataDir), { kind: 'agent', agentId }));

  /** Whatever reached the host's in-process bus on `pattern`. */
  async function hostSees(pattern: string, act: () => Promise<void>): Promise<string[]> {
    const seen: string[] = [];
    const sub = rt.bus.subscribe(pattern, (m) => seen.push(m.subject));
    await act();
    await new Promise((r) => setTimeout(r, 200));
    sub.unsubscribe();
    return seen;
  }

  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      policy: { default: 'allow', tools: { write_file: { always_confirm: [{ pattern: '^docs/' }] } } },
    });
    dataDir = join(rt.dir, 'data');
    socket = rt.info.socketPath!;
    mkdirSync(join(rt.workspace, 'docs'));
    ok(await rt.call('agent.spawn', { label: 'a', agentId: 'a' }));
    ok(await rt.call('agent.spawn', { label: 'b', agentId: 'b' }));
  }, 60_000);
  afterAll(async () => {
    for (const a of agents) await a.bus.close().catch(() => undefined);
    await rt?.dispose();
  });

  it('refuses a connection without a token, with a forged one, or with one of another runtime', async () => {
    // A raw client that sends a command first: refused before anything reaches the host.
    const raw = createConnection(socket);
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      raw.on('data', (d) => (text += d.toString()));
      raw.on('close', () => resolve(text));
      raw.write(`${JSON.stringify({ op: 'pub', subject: 'skein.cmd.main.agent.get', data: '' })}\n`);
    });
    expect(JSON.parse(answer)).toMatchObject({ op: 'err', code: 'auth', message: /first frame must present a token/ });
    const genuine = mintSocketToken(socketKey(dataDir), { kind: 'agent', agentId: 'a' });
    // The same token claiming to be the operator, or agent b: the signature no longer matches.
    const forged = genuine.replace('.agent.a.', '.agent.b.');
    await expect(withToken(forged)).rejects.toThrow(/refused this client: Authorization Violation: .*bad signature/);
    await expect(withToken(genuine.replace('skt1.agent.a', 'skt1.operator.-'))).rejects.toThrow(/bad signature/);
    const otherKey = Buffer.alloc(32, 7);
    await expect(withToken(mintSocketToken(otherKey, { kind: 'operator' }))).rejects.toThrow(/bad signature/);
    await expect(withToken('operator')).rejects.toThrow(/not a skein socket token/);
  });

  it("refuses A's publish to B's and main's command subjects (policy.set, decide); its own still work", async () => {
    const a = await as('a');
    const seen = await hostSees('skein.cmd.>', async () => {
      a.bus.publish('skein.cmd.b.agent.get', encode({ id: 'x1', data: {} }));
      a.bus.publish('skein.cmd.main.policy.set', encode({ id: 'x2', data: { layer: 'project', policy: {} } }));
      await expect(
        call(a.bus, 'main', 'policy.set', { layer: 'project', policy: { default: 'allow' } }),
      ).rejects.toThrow('Permissions Violation for Publish to "skein.cmd.main.policy.set"');
      await a.bus.flush();
    });
    expect(seen).toEqual([]);
    expect(a.errors).toEqual([
      'Permissions Violation for Publish to "skein.cmd.b.agent.get"',
      'Permissions Violation for Publish to "skein.cmd.main.policy.set"',
      'Permissions Violation for Publish to "skein.cmd.main.policy.set"',
    ]);
    expect(ok(await call(a.bus, 'a', 'agent.get', {}))).toMatchObject({ agentId: 'a', parentId: 'main' });
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
    a.bus.publish(
      'skein.cmd.main.permission.decide',
      encode({ id: 'x3', data: { requestId, decision: 'allow_once' } }),
    );
    await expect(call(a.bus, 'main', 'permission.decide', { requestId, decision: 'allow_always' })).rejects.toThrow(
      /Permissions Violation/,
    );
    await a.bus.flush();
    expect(a.errors).toContain('Permissions Violation for Publish to "skein.cmd.main.permission.decide"');
    const still = ok(await rt.call('permission.pending', {}));
    expect((still['requests'] as Array<{ requestId: string }>).map((r) => r.requestId)).toEqual([requestId]);
    ok(await rt.call('permission.decide', { requestId, decision: 'deny_once' }));
    expect((await write).ok).toBe(false);
    expect(existsSync(join(rt.workspace, 'docs/self.md'))).toBe(false);
  });

  it("refuses A's subscriptions outside its subtree and delivers nothing on them", async () => {
    const a = await as('a');
    const got: string[] = [];
    for (const subject of ['skein.out.b.>', 'skein.ask.>', 'skein.ask.main.>', 'skein.evt.>', '>', 'skein.*.b.>']) {
      a.bus.subscribe(subject, (m) => got.push(m.subject));
    }
    await a.bus.flush();
    expect(a.errors).toEqual(
      ['skein.out.b.>', 'skein.ask.>', 'skein.ask.main.>', 'skein.evt.>', '>', 'skein.*.b.>'].map(
        (s) => `Permissions Violation for Subscription to "${s}"`,
      ),
    );
    ok(await rt.call('agent.get', {}, { agentId: 'b' }));
    ok(await rt.call('terminal.open', {}, { agentId: 'b' }));
    await new Promise((r) => setTimeout(r, 200));
    expect(got).toEqual([]);
  });

  it('A cannot publish facts: a forged fact reaches neither the log nor anyone listening', async () => {
    const a = await as('a');
    const before = await rt.log.lastSeq();
    const forged = { id: 'forged', type: 'agent.completed', at: new Date().toISOString(), agentId: 'main' };
    const seen = await hostSees('skein.evt.>', async () => {
      a.bus.publish('skein.evt.main.agent.a', encode({ ...forged, data: { agentId: 'a', result: 'canary-forged' } }));
      a.bus.publish('skein.out.b.t1', 'canary-forged-output');
      a.bus.publish('$JS.API.STREAM.DELETE.SKEIN_EVENTS', '');
      await a.bus.flush();
    });
    expect(seen).toEqual([]);
    expect(a.errors).toEqual([
      'Permissions Violation for Publish to "skein.evt.main.agent.a"',
      'Permissions Violation for Publish to "skein.out.b.t1"',
      'Permissions Violation for Publish to "$JS.API.STREAM.DELETE.SKEIN_EVENTS"',
    ]);
    expect(await rt.log.lastSeq()).toBe(before);
    // The forged payloads only: an earlier case's denied write puts its own canary in an ask's shown `detail`.
    expect(readFileSync(join(dataDir, 'events.jsonl'), 'utf8')).not.toContain('canary-forged');
  });

  it("a parent receives its grandchild's ask on its own subjects and answers it", async () => {
    ok(await rt.call('agent.spawn', { label: 'lead', agentId: 'lead' }));
    const lead = await as('lead');
    ok(await call(lead.bus, 'lead', 'agent.spawn', { label: 'mid', agentId: 'mid' }));
    const mid = await as('mid');
    ok(await call(mid.bus, 'mid', 'agent.spawn', { label: 'leaf', agentId: 'leaf' }));
    const leaf = await as('leaf');
    const asks: Array<{ type: string; requestId: string }> = [];
    lead.bus.subscribe('skein.ask.lead.>', (m) => {
      const fact = decodeFact(m.subject, m.data);
      asks.push({ type: fact.type, requestId: (fact.data as { requestId: string }).requestId });
    });
    await lead.bus.flush();
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

  it("a cancelled agent's connections are closed (its subtree's too) and its tokens refused", async () => {
    ok(await rt.call('agent.spawn', { label: 'doomed', agentId: 'doomed' }));
    const doomed = await as('doomed');
    ok(await call(doomed.bus, 'doomed', 'agent.spawn', { label: 'kid', agentId: 'doomed-kid' }));
    const kid = await as('doomed-kid');
    ok(await rt.call('agent.cancel', { agentId: 'doomed' }));
    await expect.poll(() => doomed.errors).toContain('User Authentication Revoked');
    await expect.poll(() => kid.errors).toContain('User Authentication Revoked');
    await expect(call(doomed.bus, 'doomed', 'agent.get', {})).rejects.toThrow(/User Authentication Revoked/);
    await expect(withToken(doomed.token)).rejects.toThrow(/agent 'doomed' has finished; its tokens are revoked/);
    await expect(withToken(kid.token)).rejects.toThrow(/agent 'doomed-kid' has finished/);
  });

  it('a worker gets its own token only (0600, outside the workspace), removed when it exits', async () => {
    const script =
      'env > w-env.txt; cat "$SKEIN_SOCKET_TOKEN" > w-token.txt; stat -c %a "$SKEIN_SOCKET_TOKEN" > w-mode.txt; true';
    ok(await rt.call('agent.spawn', { label: 'w', agentId: 'wkr', worker: { command: 'sh', args: ['-c', script] } }));
    await expect
      .poll(async () => ok(await rt.call('agent.get', {}, { agentId: 'wkr' }))['status'], { timeout: 20_000 })
      .toBe('failed');
    const env = readFileSync(join(rt.workspace, 'w-env.txt'), 'utf8');
    const tokenPath = /^SKEIN_SOCKET_TOKEN=(.*)$/m.exec(env)?.[1];
    expect(tokenPath).toMatch(new RegExp(`^${join(dataDir, 'auth', 'workers')}/wkr-[0-9a-f]{8}\\.creds$`));
    expect(env).not.toMatch(/operator\.token|socket\.key|skt1\./);
    expect(readFileSync(join(rt.workspace, 'w-mode.txt'), 'utf8').trim()).toBe('600');
    const token = readFileSync(join(rt.workspace, 'w-token.txt'), 'utf8').trim();
    expect(token).toMatch(/^skt1\.agent\.wkr\./);
    expect(existsSync(tokenPath!)).toBe(false);
    // The worker's agent failed when it exited: the token is refused from now on.
    await expect(withToken(token)).rejects.toThrow(/agent 'wkr' has finished/);
    expect(statSync(join(dataDir, 'auth', 'socket.key')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dataDir, 'auth', 'operator.token')).mode & 0o777).toBe(0o600);
  });

  it('`skein creds` writes a token file that acts as exactly that agent', async () => {
    const out = join(rt.dir, 'b.token');
    const written = await runCli(['creds', 'b', '--out', out, '--data', dataDir]);
    expect(written.code, written.stderr).toBe(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const b = await withToken(readFileSync(out, 'utf8').trim());
    expect(ok(await call(b.bus, 'b', 'agent.get', {}))).toMatchObject({ agentId: 'b' });
    await expect(call(b.bus, 'a', 'agent.get', {})).rejects.toThrow(/Permissions Violation/);
    expect(b.errors).toEqual(['Permissions Violation for Publish to "skein.cmd.a.agent.get"']);
  });
});
