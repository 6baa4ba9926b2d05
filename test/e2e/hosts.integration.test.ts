/**
 * Past one machine (issue 16), with real processes on loopback: a 3-node NATS cluster, host `a` (in this
 * process) and host `b` (`skein up --host b`, a child process), each with its own workspace. A fleet spread
 * over both; a NATS node SIGKILLed mid-run loses no acknowledged fact; host b SIGKILLed is declared lost in
 * time while a keeps serving, and restores its agents when it comes back.
 */
import { mkdirSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EVENTS_STREAM, HOSTS_BUCKET, HostRecord, type AgentNode, type StoredFact } from '../../schemas/index.ts';
import { call } from '../../infra/transport/client.ts';
import type { NatsBus } from '../../infra/transport/nats-bus.ts';
import { runCli, type LongRunning } from '../support/cli.ts';
import { startNamedHost, startTestCluster, stopNamedHost, type TestCluster } from '../support/nats-cluster.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { tempDir } from '../support/temp-dir.ts';

// Short enough for a quick test, long enough that a loaded CI machine (2 cores, other jobs) does not make a
// live host miss it: a false loss is healed (agent.restored) but would spoil the timing checks below.
const HOSTS = { heartbeatMs: 250, lostAfterMs: 4_000 };
const ON_A = Array.from({ length: 8 }, (_, i) => `fa${i}`);
const ON_B = Array.from({ length: 8 }, (_, i) => `fb${i}`);

/** Every file under `root` but `.skein`, with its bytes: what "byte for byte" compares. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (name === '.skein') continue;
      if (statSync(path).isDirectory()) walk(path);
      else out[relative(root, path)] = readFileSync(path).toString('base64');
    }
  };
  walk(root);
  return out;
}

describe('several hosts on a NATS cluster', () => {
  let cluster: TestCluster;
  let a: TestRuntime;
  let b: LongRunning | undefined;
  const dir = tempDir('skein-hosts-');
  const wsB = join(dir.path, 'ws-b');
  const dataB = join(dir.path, 'data-b');

  const startB = () => startNamedHost({ url: cluster.url, host: 'b', workspace: wsB, data: dataB, cwd: dir.path });
  const tree = async () => (ok(await a.call('agent.tree')) as { agents: AgentNode[] }).agents;
  const facts = async (type: string, since = 0) => {
    const out: StoredFact[] = [];
    for await (const f of a.log.read({ fromSeq: since + 1 })) if (f.type === type) out.push(f);
    return out;
  };

  beforeAll(async () => {
    cluster = await startTestCluster(3);
    mkdirSync(join(wsB, '.skein'), { recursive: true });
    // Host b's own project policy: `make` asks first (the lost-host test leaves an ask pending).
    writeFileSync(
      join(wsB, '.skein', 'policy.json'),
      JSON.stringify({ default: 'allow', tools: { terminal: { always_confirm: [{ pattern: '^make\\b' }] } } }),
    );
    writeFileSync(
      join(dir.path, 'skein.config.json'),
      JSON.stringify({ hosts: HOSTS, domains: { terminal: { sandbox: false } } }),
    );
    writeFileSync(join(wsB, 'base-b.txt'), 'b before\n');
    for (const id of ON_B) mkdirSync(join(wsB, id));
    a = await startTestRuntime({ mode: 'networked', natsUrl: cluster.url, flags: { host: 'a', hosts: HOSTS } });
    writeFileSync(join(a.workspace, 'base-a.txt'), 'a before\n');
    b = await startB();
  }, 120_000);
  afterAll(async () => {
    await stopNamedHost(b);
    await a?.dispose();
    await cluster?.dispose();
    dir.dispose();
  });

  it('runs 16 agents on 2 hosts; the root reviews every change; reject-all restores both workspaces', async () => {
    const beforeA = snapshot(a.workspace);
    const beforeB = snapshot(realpathSync(wsB));
    await Promise.all(
      [...ON_A, ...ON_B].map(async (id) => {
        // On b each agent gets a directory of its own: shell side effects of commands running at once in one
        // directory cannot be told apart (README, known limits), and each b agent's review is its own.
        const placement = ON_B.includes(id) ? { host: 'b', workspace: join(realpathSync(wsB), id) } : {};
        ok(await a.call('agent.spawn', { label: id, agentId: id, ...placement }));
        const { terminalId } = ok(await a.call('terminal.open', {}, { agentId: id }));
        const run = ok(
          await a.call('terminal.exec', { terminalId, command: `echo ${id} > ${id}-sh.txt` }, { agentId: id }),
        );
        expect(run).toMatchObject({ status: 'exited', exitCode: 0 });
        ok(await a.call('file.write', { path: `${id}.txt`, content: `${id} wrote this\n` }, { agentId: id }));
      }),
    );
    expect((await tree()).map((n) => [n.agentId, n.host])).toEqual([
      ['main', 'a'],
      ...[...ON_A, ...ON_B].map((id) => [id, ON_A.includes(id) ? 'a' : 'b']),
    ]);
    // `skein agents --tree` (the CLI, given the cluster's URLs) shows where each agent lives.
    const cli = await runCli(['agents', '--tree', '--nats', cluster.url], { cwd: dir.path });
    expect(cli.stdout).toContain('main "root" [running] @a');
    expect(cli.stdout).toContain('  fa0 "fa0" [running] @a');
    expect(cli.stdout).toContain('  fb7 "fb7" [running] @b');
    // The root reviews every change: its host's from its own log, host b's through b (each placed agent's log).
    const rootFiles = (ok(await a.call('review.list')) as { files: { path: string }[] }).files.map((f) => f.path);
    expect(rootFiles.sort()).toEqual(
      [
        ...ON_A.flatMap((id) => [join(a.workspace, `${id}-sh.txt`), join(a.workspace, `${id}.txt`)]),
        ...ON_B.flatMap((id) => [
          join(realpathSync(wsB), id, `${id}-sh.txt`),
          join(realpathSync(wsB), id, `${id}.txt`),
        ]),
      ].sort(),
    );
    const fb0 = (ok(await a.call('review.list', {}, { agentId: 'fb0' })) as { files: { path: string }[] }).files;
    expect(fb0.map((f) => relative(realpathSync(wsB), f.path)).sort()).toEqual(['fb0/fb0-sh.txt', 'fb0/fb0.txt']);
    // Reject-all from the root restores both workspaces.
    const rejected = ok(await a.call('review.reject', {}));
    expect((rejected['deleted'] as string[]).length).toBe(32);
    expect(snapshot(a.workspace)).toEqual(beforeA);
    expect(snapshot(realpathSync(wsB))).toEqual(beforeB);
  }, 120_000);

  it('loses no acknowledged fact when a NATS node is SIGKILLed mid-run, and the fleet completes', async () => {
    const acked: string[] = [];
    const write = async (agentId: string, n: number) => {
      let id = `w-${agentId}-${n}`;
      // Retried with the same id until answered: the command runs once, whatever the failover did.
      let last: unknown;
      for (let attempt = 0; attempt < 100; attempt++) {
        const reply = await call(
          a.bus,
          agentId,
          'file.write',
          { path: `n-${n}.txt`, content: `${n}\n` },
          { id, timeoutMs: 3_000 },
        ).catch((err: unknown) => ({ ok: false, error: String(err) }));
        if (reply.ok) return void acked.push(id);
        last = reply;
        // Cut off mid-command by the failover (in_doubt, or an append that failed for good): not acknowledged;
        // the caller sends it again with a new id. A retryable error keeps the id (the command runs once).
        if ((reply as { error?: { retryable?: boolean } }).error?.retryable === false) id = `${id}-again`;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`${id} never answered: ${JSON.stringify(last)}`);
    };
    const jsm = await jetstreamManager((a.bus as NatsBus).nc);
    const leader = (await jsm.streams.info(EVENTS_STREAM)).cluster?.leader;
    const victim = Math.max(
      0,
      cluster.nodes.findIndex((n) => n.name === leader),
    );
    const writers = ['na0', 'na1', 'nb0', 'nb1'];
    for (const id of writers)
      ok(await a.call('agent.spawn', { label: id, agentId: id, ...(id.startsWith('nb') ? { host: 'b' } : {}) }));
    const work = Promise.all(
      writers.map(async (agentId) => {
        for (let n = 0; n < 15; n++) await write(agentId, n);
      }),
    );
    await vi.waitFor(() => expect(acked.length).toBeGreaterThanOrEqual(8), { timeout: 20_000 });
    await cluster.kill(victim);
    await work.finally(() => cluster.restart(victim));
    expect(acked).toHaveLength(60);
    // Read until the restarted node has caught up (a reader's consumer may sit on any replica).
    await vi.waitFor(
      async () => {
        const stored = new Set<string>();
        for await (const f of a.log.read()) if (f.causationId) stored.add(f.causationId);
        expect(acked.filter((id) => !stored.has(id))).toEqual([]);
      },
      { timeout: 30_000, interval: 1_000 },
    );
  }, 120_000);

  it('declares host b lost in time after a SIGKILL; a keeps serving; b restores its agents on return', async () => {
    // The failover before may have cut b off long enough to be declared lost (lostAfterMs is short here); it
    // restores its agents once its heartbeat is through again. Start from a healthy b.
    await vi.waitFor(
      async () => expect((await tree()).filter((n) => n.host === 'b').every((n) => n.status === 'running')).toBe(true),
      { timeout: 20_000, interval: 200 },
    );
    const { terminalId } = ok(await a.call('terminal.open', {}, { agentId: 'fb2' }));
    // An ask left pending on b, and a parent on a waiting for a child on b.
    const asked = await a.log.lastSeq();
    void call(a.bus, 'fb2', 'terminal.exec', { terminalId, command: 'make all' }, { timeoutMs: 30_000 }).catch(
      () => undefined,
    );
    await vi.waitFor(async () => expect(await facts('permission.requested', asked)).toHaveLength(1), {
      timeout: 10_000,
    });
    const waiting = a.call('agent.wait', { agentId: 'fb3', timeoutMs: 30_000 });

    // The facts from here on are this test's (a cluster failover earlier may have cut b off for a while).
    const since = await a.log.lastSeq();
    b!.child.kill('SIGKILL');
    await b!.exited;
    const killedAt = Date.now();
    await vi.waitFor(
      async () => expect((await tree()).filter((n) => n.host === 'b').every((n) => n.status === 'lost')).toBe(true),
      { timeout: HOSTS.lostAfterMs + 5_000, interval: 100 },
    );
    // When a declared it: its first `agent.lost` (stamped by a, on this machine's clock), not when this poll saw
    // every agent lost (in CI under load the sweep's appends and the poll added ~1 s: 8.4 s after the kill).
    const lost = await facts('agent.lost', since);
    const declaredAt = Math.min(...lost.map((f) => Date.parse(f.at)));
    const declaredAfterMs = declaredAt - killedAt;
    // b's last beat that reached the registry (both hosts share this machine's wall clock). Usually at most one
    // heartbeat before the kill, but not always: once in CI, with the cluster still settling after the failover
    // above, b's beats had stalled 1.4 s before the kill and b was (rightly) declared lost 2.6 s after it.
    const kv = await new Kvm((a.bus as NatsBus).nc).open(HOSTS_BUCKET);
    const lastBeatAt = HostRecord.parse((await kv.get('b'))!.json()).heartbeatAt;
    const silentMs = declaredAt - lastBeatAt;
    console.log(
      `host b declared lost ${declaredAfterMs} ms after SIGKILL, ${silentMs} ms after its last beat ` +
        `(hosts.lostAfterMs ${HOSTS.lostAfterMs})`,
    );
    // Never before b had been silent lostAfterMs (a beat is seen only after it was written; one heartbeat of slack
    // for the two clocks a reads), and in time after the kill: 3.9-4.4 s alone; 6.3 s once in CI beside a test
    // that blocks its loop on 9,000 new files (2 cores), so the bound leaves 3 s for a's sweep under load.
    expect(silentMs).toBeGreaterThan(HOSTS.lostAfterMs - HOSTS.heartbeatMs);
    expect(declaredAfterMs).toBeLessThan(HOSTS.lostAfterMs + 2 * HOSTS.heartbeatMs + 3_000);
    const onB = ['nb0', 'nb1', ...ON_B].sort();
    expect(lost.map((f) => (f.data as { agentId: string }).agentId).sort()).toEqual(onB);
    expect(ok(await waiting)).toMatchObject({ agentId: 'fb3', status: 'lost', done: false });
    // Denied by the same sweep that declared the agents lost, or a later one (appends may be slow under load).
    await vi.waitFor(
      async () => {
        // From the ask on: if b was (wrongly) declared lost while it asked, that denial counts too.
        const denied = await facts('permission.denied', asked);
        expect(denied.map((f) => (f.data as { reason: string }).reason)).toEqual([
          expect.stringContaining('host_lost'),
        ]);
      },
      { timeout: 45_000, interval: 100 },
    );
    // a serves its own agents, and answers for b's only with unavailable.
    ok(await a.call('file.write', { path: 'still-here.txt', content: 'a serves\n' }, { agentId: 'fa2' }));
    expect(await a.call('agent.get', {}, { agentId: 'fb1' })).toMatchObject({
      ok: false,
      error: { code: 'unavailable', message: expect.stringMatching(/^agent 'fb1' lives on host 'b', which is lost/) },
    });

    b = await startB();
    // b's agents restored (their facts, followed by a), and a routing to b again: b's new heartbeat can reach
    // a's registry view a beat after b restored them, and until then a answers a retryable `unavailable`.
    await vi.waitFor(
      async () => {
        expect((await tree()).filter((n) => n.host === 'b').every((n) => n.status === 'running')).toBe(true);
        expect(await a.call('agent.get', {}, { agentId: 'fb2' })).toMatchObject({ ok: true });
      },
      { timeout: 10_000 },
    );
    expect((await facts('agent.restored', since)).map((f) => (f.data as { agentId: string }).agentId).sort()).toEqual(
      onB,
    );
    const lostTerminals = (await facts('terminal.lost', since)).map((f) => f.agentId);
    expect(lostTerminals).toContain('fb2');
    expect(lostTerminals.filter((id) => !id.startsWith('fb') && !id.startsWith('nb'))).toEqual([]);
    const again = ok(await a.call('terminal.open', {}, { agentId: 'fb2' }));
    const run = ok(
      await a.call(
        'terminal.exec',
        { terminalId: again['terminalId'], command: 'cat ../base-b.txt' },
        { agentId: 'fb2' },
      ),
    );
    expect(run['output']).toContain('b before');
  }, 120_000);
});
