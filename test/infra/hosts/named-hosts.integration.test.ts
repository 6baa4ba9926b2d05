/**
 * Named hosts on a 3-node cluster (issue 16): the first host serves the root, a second joins for placed
 * agents, the registry shows both, a second root and a second holder of a name are refused, and a command
 * for the root is answered only by its host, or with `unavailable` from another while that host is away.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInbox } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AgentNode } from '../../../schemas/index.ts';
import { NatsBus } from '../../../infra/transport/nats-bus.ts';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { replayLog } from '../../../infra/kernel/replay.ts';
import { startTestCluster, type TestCluster } from '../../support/nats-cluster.ts';
import { startTestNats } from '../../support/nats-server.ts';
import { ok } from '../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

const HOSTS = { heartbeatMs: 200, lostAfterMs: 1_500 };

describe('named hosts', () => {
  let cluster: TestCluster;
  let a: TestRuntime;
  let b: TestRuntime | undefined;
  const started: TestRuntime[] = [];

  const host = async (name: string, flags: Record<string, unknown> = {}, policy?: unknown) => {
    const rt = await startTestRuntime({
      mode: 'networked',
      natsUrl: cluster.url,
      flags: { host: name, hosts: HOSTS, ...flags },
      ...(policy ? { policy } : {}),
    });
    started.push(rt);
    return rt;
  };

  beforeAll(async () => {
    cluster = await startTestCluster(3);
    a = await host('a');
    // Host b's project policy asks before `make`.
    b = await host('b', {}, { default: 'allow', tools: { terminal: { always_confirm: [{ pattern: '^make\\b' }] } } });
  }, 60_000);
  afterAll(async () => {
    for (const rt of started.reverse()) await rt.dispose().catch(() => undefined);
    await cluster?.dispose();
  });

  it('lets the first host serve the root and shows each agent with its host', async () => {
    expect(a.info).toMatchObject({ host: 'a', rootHost: 'a' });
    expect(b!.info).toMatchObject({ host: 'b', rootHost: 'a' });
    const spawned = await a.call('agent.spawn', { label: 'helper', agentId: 'h1' });
    expect(spawned).toMatchObject({ ok: true, agentId: 'h1' });
    const tree = await a.call('agent.tree');
    expect((tree as unknown as { agents: AgentNode[] }).agents.map((n) => [n.agentId, n.host])).toEqual([
      ['main', 'a'],
      ['h1', 'a'],
    ]);
  });

  it('answers a command for the root from its host only: one reply, never from the other host', async () => {
    const bus = await NatsBus.connect(cluster.url);
    try {
      const inbox = createInbox();
      const replies: string[] = [];
      const sub = bus.nc.subscribe(inbox, { callback: (_e, m) => void replies.push(m.string()) });
      bus.nc.publish('skein.cmd.main.agent.get', JSON.stringify({ id: 'one-reply', data: {} }), { reply: inbox });
      // The first reply, however slow; then 600 ms more for a second one that must not come.
      await expect.poll(() => replies.length, { timeout: 10_000 }).toBeGreaterThan(0);
      await new Promise((r) => setTimeout(r, 600));
      sub.unsubscribe();
      expect(replies).toHaveLength(1);
      expect(JSON.parse(replies[0]!)).toMatchObject({ ok: true, agentId: 'main', host: 'a' });
    } finally {
      await bus.close();
    }
  });

  it('places a child on the named host: its workspace, terminals and files are there, and only there', async () => {
    const spawned = ok(await a.call('agent.spawn', { label: 'remote', agentId: 'r1', host: 'b' }));
    expect(spawned).toMatchObject({ agentId: 'r1', parentId: 'main', workspace: b!.workspace });
    const { terminalId } = ok(await a.call('terminal.open', {}, { agentId: 'r1' }));
    const run = ok(
      await a.call('terminal.exec', { terminalId, command: 'pwd; echo made > made-on-b.txt' }, { agentId: 'r1' }),
    );
    expect(run).toMatchObject({ status: 'exited', exitCode: 0 });
    expect(run['output']).toContain(b!.workspace);
    ok(await a.call('file.write', { path: 'written.txt', content: 'from r1\n' }, { agentId: 'r1' }));
    expect(readFileSync(join(b!.workspace, 'made-on-b.txt'), 'utf8')).toBe('made\n');
    expect(readFileSync(join(b!.workspace, 'written.txt'), 'utf8')).toBe('from r1\n');
    expect(existsSync(join(a.workspace, 'written.txt'))).toBe(false);
    // Its own children stay on its host.
    ok(await a.call('agent.spawn', { label: 'grandchild', agentId: 'r1c' }, { agentId: 'r1' }));
    const tree = (await a.call('agent.tree')) as unknown as { agents: AgentNode[] };
    expect(tree.agents.map((n) => [n.agentId, n.host])).toEqual([
      ['main', 'a'],
      ['h1', 'a'],
      ['r1', 'b'],
      ['r1c', 'b'],
    ]);
  });

  it('lets the root on one host accept and reject single files and hunks of a child on the other', async () => {
    // r1 (on b) changed written.txt and made-on-b.txt there; the root changes a file on a.
    ok(await a.call('file.write', { path: 'on-a.txt', content: 'root on a\n' }));
    type Files = { files: Array<{ path: string; hunks: Array<{ id: string }> }> };
    const files = (ok(await a.call('review.list')) as unknown as Files).files;
    const onB = (name: string) => files.find((f) => f.path === join(b!.workspace, name))!;
    const written = onB('written.txt');
    const made = onB('made-on-b.txt');
    const onA = files.find((f) => f.path === join(a.workspace, 'on-a.txt'))!;
    expect([written, made, onA].every(Boolean)).toBe(true);
    // One file on b, by path: deleted there (r1 created it), nothing else touched.
    const rejected = ok(await a.call('review.reject', { paths: [written.path] }));
    expect(rejected).toMatchObject({ deleted: [written.path], restored: [], conflicts: [] });
    expect(existsSync(join(b!.workspace, 'written.txt'))).toBe(false);
    expect(readFileSync(join(b!.workspace, 'made-on-b.txt'), 'utf8')).toBe('made\n');
    expect(readFileSync(join(a.workspace, 'on-a.txt'), 'utf8')).toBe('root on a\n');
    // A mixed selection: a hunk of b's file and a's file by path, each accepted on its own host.
    const accepted = ok(await a.call('review.accept', { hunkIds: [made.hunks[0]!.id] }));
    expect((accepted['accepted'] as Array<{ path: string }>).map((x) => x.path)).toEqual([made.path]);
    const acceptedA = ok(await a.call('review.accept', { paths: [onA.path] }));
    expect((acceptedA['accepted'] as Array<{ path: string }>).map((x) => x.path)).toEqual([onA.path]);
    const left = (ok(await a.call('review.list')) as unknown as Files).files.map((f) => f.path);
    expect(left).not.toContain(written.path);
    expect(left).not.toContain(made.path);
    expect(left).not.toContain(onA.path);
    // A path no host holds is refused by name, as on one host.
    const unknown = await a.call('review.reject', { paths: [join(b!.workspace, 'never.txt')] });
    expect(unknown).toMatchObject({ ok: false, error: { code: 'not_found' } });
  });

  it("checks what the root saw of a child's file on the other host: a file changed since is not accepted", async () => {
    type Files = { files: Array<{ path: string; currentHash: string | null }> };
    const listed = async () => (ok(await a.call('review.list')) as unknown as Files).files;
    ok(await a.call('file.write', { path: 'seen-b.txt', content: 'first\n' }, { agentId: 'r1' }));
    ok(await a.call('file.write', { path: 'seen-a.txt', content: 'root\n' }));
    const first = await listed();
    const onB = first.find((f) => f.path === join(b!.workspace, 'seen-b.txt'))!;
    const onA = first.find((f) => f.path === join(a.workspace, 'seen-a.txt'))!;
    ok(await a.call('file.write', { path: 'seen-b.txt', content: 'first\nCANARY-b7 slipped\n' }, { agentId: 'r1' }));
    // What the root saw of b's file is checked on b: refused, and a's file (checked on a) is left as it was.
    const seen = { [onB.path]: onB.currentHash, [onA.path]: onA.currentHash };
    const refused = await a.call('review.accept', { seen });
    expect(refused).toMatchObject({ ok: false, error: { code: 'conflict' } });
    expect(String((refused.error as { message?: string }).message)).toContain(`'${onB.path}' changed since`);
    const now = await listed();
    expect(now.find((f) => f.path === onB.path)?.currentHash).not.toBe(onB.currentHash);
    expect(now.find((f) => f.path === onA.path)?.currentHash).toBe(onA.currentHash);
    // Listed again, the same accept goes through on both hosts.
    const again = Object.fromEntries(
      now.filter((f) => f.path === onB.path || f.path === onA.path).map((f) => [f.path, f.currentHash]),
    );
    const accepted = ok(await a.call('review.accept', { seen: again }));
    expect((accepted['accepted'] as Array<{ path: string }>).map((x) => x.path).sort()).toEqual(
      [onA.path, onB.path].sort(),
    );
  });

  it("applies the parent's narrower spawn policy on the other host at the first command (canary kept)", async () => {
    writeFileSync(join(b!.workspace, 'canary.txt'), 'CANARY-2f9\n');
    ok(
      await a.call('agent.spawn', {
        label: 'narrow',
        agentId: 'r2',
        host: 'b',
        policy: { tools: { terminal: { always_deny: [{ pattern: '\\brm\\b' }] } } },
      }),
    );
    const { terminalId } = ok(await a.call('terminal.open', {}, { agentId: 'r2' }));
    const denied = await a.call('terminal.exec', { terminalId, command: 'rm canary.txt' }, { agentId: 'r2' });
    expect(denied).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(readFileSync(join(b!.workspace, 'canary.txt'), 'utf8')).toBe('CANARY-2f9\n');
  });

  it("wakes a parent's agent.wait on one host when its child on the other completes", async () => {
    ok(await a.call('agent.spawn', { label: 'waited', agentId: 'r3', host: 'b' }));
    const waiting = a.call('agent.wait', { agentId: 'r3', timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 100));
    ok(await a.call('agent.complete', { result: { n: 3 } }, { agentId: 'r3' }));
    expect(ok(await waiting)).toMatchObject({ agentId: 'r3', status: 'completed', done: true, result: { n: 3 } });
  });

  it('closes the terminals of an agent on the other host when its parent cancels it there', async () => {
    ok(await a.call('agent.spawn', { label: 'cancelled', agentId: 'r4', host: 'b' }));
    const { terminalId } = ok(await a.call('terminal.open', {}, { agentId: 'r4' }));
    const running = a.call('terminal.exec', { terminalId, command: 'sleep 30', timeoutMs: 60_000 }, { agentId: 'r4' });
    await new Promise((r) => setTimeout(r, 300));
    expect(ok(await a.call('agent.cancel', { agentId: 'r4' }))).toMatchObject({ cancelled: ['r4'] });
    const closed = async () => {
      for await (const f of a.log.read({ subject: `skein.evt.r4.terminal.${terminalId}` }))
        if (f.type === 'terminal.closed') return true;
      return false;
    };
    await vi.waitFor(async () => expect(await closed()).toBe(true), { timeout: 10_000 });
    expect((await running).ok).toBeDefined();
  });

  it('lets the root on one host list and answer the ask of its child on the other: the call there runs', async () => {
    ok(await a.call('agent.spawn', { label: 'asker', agentId: 'r5', host: 'b' }));
    const { terminalId } = ok(await a.call('terminal.open', {}, { agentId: 'r5' }));
    const exec = a.call(
      'terminal.exec',
      { terminalId, command: 'make --version >/dev/null 2>&1; echo ran-after-ask' },
      { agentId: 'r5' },
    );
    let requestId = '';
    await vi.waitFor(
      async () => {
        for await (const f of a.log.read({ subject: 'skein.evt.r5.permission.>' }))
          if (f.type === 'permission.requested') requestId = (f.data as { requestId: string }).requestId;
        expect(requestId).not.toBe('');
      },
      { timeout: 5_000 },
    );
    // The root's host lists the request waiting on b (what `skein approvals` shows), once.
    const pending = ok(await a.call('permission.pending')) as unknown as { requests: Array<Record<string, unknown>> };
    expect(pending.requests.filter((r) => r['requestId'] === requestId)).toEqual([
      expect.objectContaining({ requestId, agentId: 'r5', tool: 'terminal' }),
    ]);
    const decided = ok(await a.call('permission.decide', { requestId, decision: 'allow_once' }));
    expect(decided).toMatchObject({ requestId, outcome: 'granted', by: 'user' });
    const after = ok(await a.call('permission.pending')) as unknown as { requests: Array<Record<string, unknown>> };
    expect(after.requests.map((r) => r['requestId'])).not.toContain(requestId);
    const run = ok(await exec);
    expect(run).toMatchObject({ status: 'exited', exitCode: 0 });
    expect(run['output']).toContain('ran-after-ask');
  });

  it('runs a worker placed on b there, and takes a cancel from a right after the spawn replies', async () => {
    // b appended the worker's start on the agent's subject; a folds it before replying, so its cancel's append
    // there expects the right last sequence. (Without that, the hosts bench, with a and b on different nodes, got
    // a conflict in 2 runs of 4; here, both hosts on any node, it did not show in 30 spawns.)
    for (let i = 0; i < 10; i++) {
      const agentId = `rw${i}`;
      const worker = { command: 'sleep', args: ['60'] };
      expect(ok(await a.call('agent.spawn', { label: agentId, agentId, host: 'b', worker }))).toMatchObject({
        status: 'running',
      });
      expect(await a.call('agent.cancel', { agentId })).toEqual({ ok: true, cancelled: [agentId] });
    }
  });

  it("refuses a placement on a host that never joined, and a workspace outside the host's", async () => {
    expect(await a.call('agent.spawn', { label: 'x', host: 'nowhere' })).toEqual({
      ok: false,
      error: {
        code: 'unavailable',
        message:
          "host 'nowhere' has never joined, so no agent can be placed on it; place it on a live host (a, b) or " +
          'start that one (skein up --host nowhere …)',
        retryable: true,
      },
    });
    const outside = await a.call('agent.spawn', { label: 'x', host: 'b', workspace: a.workspace });
    expect(outside).toMatchObject({ ok: false, error: { code: 'invalid_message' } });
    expect(JSON.stringify(outside)).toContain(`is not inside host 'b''s workspace ${b!.workspace}`);
  });

  it("keeps a confined agent's subtree confined: none of it is placed on another host's whole workspace", async () => {
    mkdirSync(join(a.workspace, 'sub'), { recursive: true });
    writeFileSync(join(a.workspace, 'root-only.txt'), 'ROOT-ONLY-CANARY\n');
    ok(await a.call('agent.spawn', { label: 'confined', agentId: 'conf', workspace: 'sub' }));
    // Placed on b it would get b's whole workspace; its own child, placed back on a, a's whole workspace.
    for (const data of [
      { label: 'hop', agentId: 'hop1', host: 'b' },
      { label: 'hop', agentId: 'hop2', host: 'b', workspace: b!.workspace },
    ]) {
      const hop = await a.call('agent.spawn', data, { agentId: 'conf' });
      expect(hop).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
      expect(JSON.stringify(hop)).toContain(`it is confined to ${join(a.workspace, 'sub')}`);
    }
    // Its sub-agent on its own host stays inside `sub`, and is refused the hop too.
    ok(await a.call('agent.spawn', { label: 'inner', agentId: 'conf-in' }, { agentId: 'conf' }));
    const deeper = await a.call('agent.spawn', { label: 'hop', agentId: 'hop3', host: 'b' }, { agentId: 'conf-in' });
    expect(JSON.stringify(deeper)).toContain("agent 'conf-in' may not place a sub-agent on another host");
    const read = await a.call('file.read', { path: '../root-only.txt' }, { agentId: 'conf-in' });
    expect(JSON.stringify(read)).not.toContain('ROOT-ONLY-CANARY');
    // An agent with its host's whole workspace still places children elsewhere, and they place theirs back.
    ok(await a.call('agent.spawn', { label: 'whole', agentId: 'whole' }));
    ok(await a.call('agent.spawn', { label: 'there', agentId: 'there', host: 'b' }, { agentId: 'whole' }));
    const back = ok(await a.call('agent.spawn', { label: 'back', agentId: 'back', host: 'a' }, { agentId: 'there' }));
    expect(back['workspace']).toBe(a.workspace);
  });

  it('folds the same state live on each host as a replay of the shared log (one digest from any host)', async () => {
    await vi.waitFor(
      async () => {
        const replayed = await replayLog(a.log, AGGREGATES);
        expect(a.host.digest()).toBe(replayed.digest);
        expect(b!.host.digest()).toBe(replayed.digest);
      },
      { timeout: 10_000, interval: 250 },
    );
  });

  it('refuses a second root, naming the host that serves it', async () => {
    await expect(host('c', { rootAgentId: 'main' })).rejects.toThrow(
      "root agent 'main' is served by host 'a'; exactly one host serves the root, so host 'c' cannot: " +
        'start it without --root to join as a host for placed agents',
    );
  });

  it('refuses a host without a name on a log whose root names its host, before it appends anything', async () => {
    // A live terminal of host a: the refused host took every agent for its own and, reconciling at start,
    // appended terminal.lost for it (and sometimes lost the race to a's own append) before it was refused.
    const { terminalId } = ok(await a.call('terminal.open', {}));
    const before = await a.log.lastSeq('events');
    await expect(host('x', { host: undefined })).rejects.toThrow(
      "root agent 'main' is served by the named host 'a'; a host without a name would answer for every agent: " +
        'join with --host <name>',
    );
    const appended: string[] = [];
    await a.log.scan({ stream: 'events', fromSeq: before + 1 }, (f) => void appended.push(f.type));
    expect(appended.filter((t) => t === 'terminal.lost' || t === 'agent.failed' || t === 'edit.abandoned')).toEqual([]);
    expect(ok(await a.call('terminal.exec', { terminalId, command: 'echo still here' }))['output']).toBe(
      'still here\n',
    );
    ok(await a.call('terminal.close', { terminalId }));
  });

  it('refuses a host name a live host holds', async () => {
    await expect(host('b')).rejects.toThrow(/host name 'b' is taken by a live host \(pid \d+/);
  });

  it('answers unavailable, naming the root host, while that host is stopped', async () => {
    await a.dispose();
    const bus = await NatsBus.connect(cluster.url);
    try {
      // b reads the registry every heartbeat: until it has read that a stopped, nobody answers (a client retries).
      const ask = () =>
        bus.nc
          .request('skein.cmd.main.agent.get', JSON.stringify({ id: 'away', data: {} }), { timeout: 500 })
          .then((m) => JSON.parse(m.string()) as unknown);
      let reply: unknown;
      await vi.waitFor(async () => (reply = await ask()), { timeout: 5_000, interval: 100 });
      expect(reply).toEqual({
        ok: false,
        error: {
          code: 'unavailable',
          message:
            "agent 'main' lives on host 'a', which is stopped; only that host answers for it: start it again " +
            '(skein up --host a …) and retry',
          retryable: true,
        },
      });
    } finally {
      await bus.close();
    }
  });
});

describe('two named hosts starting at once', () => {
  it('create one root between them: the loser of the expected-last-sequence race joins the winner', async () => {
    const nats = await startTestNats();
    const hosts: TestRuntime[] = [];
    try {
      const started = await Promise.all(
        ['p', 'q'].map((name) =>
          startTestRuntime({ mode: 'networked', natsUrl: nats.url, flags: { host: name, hosts: HOSTS } }),
        ),
      );
      hosts.push(...started);
      const [p, q] = started as [TestRuntime, TestRuntime];
      expect(p.info.rootHost).toBe(q.info.rootHost);
      expect(['p', 'q']).toContain(p.info.rootHost);
      const spawned: string[] = [];
      for await (const f of p.log.read({ subject: 'skein.evt.main.agent.main' })) spawned.push(f.type);
      expect(spawned).toEqual(['agent.spawned']);
    } finally {
      for (const rt of hosts) await rt.dispose();
      await nats.dispose();
    }
  }, 60_000);
});
