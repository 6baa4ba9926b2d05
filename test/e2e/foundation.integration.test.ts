/**
 * The foundation's acceptance, through the real `skein` executable:
 * private-broker mode seen by a raw NATS subscriber and `skein tail`, live
 * digest = replay digest, the same workload in embedded mode giving the same
 * facts and digest, export format, and SIGKILL + restart losing nothing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts, isAlive } from '../../infra/transport/nats-server.ts';
import { rawSubscribe } from '../support/raw-nats.ts';
import { runCli, startCli, type LongRunning } from '../support/cli.ts';
import { tempDir } from '../support/temp-dir.ts';

const WORKLOAD: Array<[agent: string, data: Record<string, unknown>]> = [
  ['main', { label: 'a', agentId: 'child-a' }],
  ['child-a', { label: 'b', agentId: 'grandchild-b' }],
  ['main', { label: 'c', agentId: 'child-c' }],
];

/** A fact without what legitimately differs between runs: ids, times, causation. */
function comparable(line: string): Record<string, unknown> {
  const fact = JSON.parse(line) as Record<string, unknown>;
  const { id: _id, at: _at, causationId: _c, seq: _s, ...rest } = fact;
  const data = { ...(rest['data'] as Record<string, unknown>) };
  delete data['requestId']; // a generated id, like the fact id
  return { ...rest, data };
}

/**
 * The facts WORKLOAD must produce, in the comparable form, written out: both modes are checked against
 * this list, so neither test reads the other's result and each fails on its own when its mode is wrong.
 */
function expectedFacts(workspace: string): Array<Record<string, unknown>> {
  const spawned = (by: string, agentId: string, parentId: string | null, label: string, depth: number) => ({
    type: 'agent.spawned',
    agentId: by,
    data: { agentId, parentId, label, workspace, depth, task: null, hasPolicy: false, worker: null },
  });
  const granted = (agentId: string, input: string) => ({
    type: 'permission.granted',
    agentId,
    data: { agentId, tool: 'spawn_agent', input, by: 'rule', reason: 'Allowed by the tool default.' },
  });
  return [
    spawned('main', 'main', null, 'root', 0),
    granted('main', 'a'),
    spawned('main', 'child-a', 'main', 'a', 1),
    granted('child-a', 'b'),
    spawned('child-a', 'grandchild-b', 'child-a', 'b', 2),
    granted('main', 'c'),
    spawned('main', 'child-c', 'main', 'c', 1),
  ];
}

// Each test starts runtimes and several CLI processes: at load 25 one took over 30 s; the limits fit that.
describe('skein up / call / tail / status / replay', { timeout: 120_000 }, () => {
  const dir = tempDir('skein-e2e-');
  const workspace = join(dir.path, 'ws');
  const privateData = join(dir.path, 'private');
  const embeddedData = join(dir.path, 'embedded');
  let up: LongRunning | undefined;

  beforeAll(async () => {
    await runCli(['--version']);
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(join(workspace, '.skein'), { recursive: true });
    // The root may spawn sub-agents without asking (the built-in default would ask a human).
    writeFileSync(
      join(workspace, '.skein', 'policy.json'),
      JSON.stringify({ tools: { spawn_agent: { default: 'allow' } } }),
    );
  });
  afterAll(async () => {
    if (up && up.child.exitCode === null) {
      up.child.kill('SIGTERM');
      await up.exited;
    }
    dir.dispose();
  });

  async function runWorkload(data: string): Promise<void> {
    for (const [agent, body] of WORKLOAD) {
      const r = await runCli(['call', 'agent.spawn', JSON.stringify(body), '--agent', agent, '--data', data]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: true, agentId: body['agentId'], parentId: agent });
    }
  }

  it('private broker: raw subscriber and tail see facts; status digest equals replay digest', async () => {
    up = startCli(['up', '--private', '--data', privateData, '--workspace', workspace]);
    const [, url] = await up.waitFor(/mode private, private broker at (nats:\/\/127\.0\.0\.1:\d+)/);
    // The private broker has identities: a raw client needs the operator's creds from the data dir.
    const raw = await rawSubscribe(
      url!,
      'skein.evt.>',
      readFileSync(join(privateData, 'auth', 'operator.creds'), 'utf8'),
    );
    const tail = startCli(['tail', '--data', privateData]);
    await new Promise((r) => setTimeout(r, 50));
    await tail.waitFor(/^/);
    // tail announces itself on stderr once subscribed
    await new Promise<void>((resolve, reject) => {
      const t0 = Date.now();
      const poll = () =>
        tail.stderr().includes('tailing')
          ? resolve()
          : Date.now() - t0 > 15_000
            ? reject(new Error(tail.stderr()))
            : setTimeout(poll, 25);
      poll();
    });

    await runWorkload(privateData);

    // Each spawn is a tool call: its permission decision is a fact too.
    await expect.poll(() => raw.messages.length, { timeout: 10_000 }).toBe(6);
    raw.close();
    const spawns = raw.messages.filter((m) => (JSON.parse(m.payload) as { type: string }).type === 'agent.spawned');
    const bodies = spawns.map((m) => JSON.parse(m.payload) as Record<string, unknown>);
    expect(
      raw.messages.filter((m) => (JSON.parse(m.payload) as { type: string }).type === 'permission.granted'),
    ).toHaveLength(3);
    expect(spawns.map((m) => m.subject)).toEqual([
      'skein.evt.main.agent.child-a',
      'skein.evt.child-a.agent.grandchild-b',
      'skein.evt.main.agent.child-c',
    ]);
    for (const body of bodies) {
      expect(Object.keys(body).sort()).toEqual(['agentId', 'at', 'causationId', 'data', 'id', 'type']);
      expect(body['type']).toBe('agent.spawned');
    }
    expect(bodies[1]).toMatchObject({
      agentId: 'child-a',
      data: { agentId: 'grandchild-b', parentId: 'child-a', label: 'b', depth: 2 },
    });

    await expect
      .poll(
        () =>
          tail
            .stdout()
            .split('\n')
            .filter((l) => l.includes('agent.spawned')).length,
        { timeout: 10_000 },
      )
      .toBe(3);
    expect(tail.stdout()).toMatch(/child-a agent\.spawned grandchild-b "b" parent=child-a/);
    tail.child.kill('SIGINT');
    expect(await tail.exited).toBe(0);

    const status = await runCli(['status', '--digest', '--data', privateData]);
    const replayed = await runCli(['replay', '--digest', '--data', privateData]);
    expect(status.code, status.stderr).toBe(0);
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(status.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(replayed.stdout).toBe(status.stdout);

    const exported = join(dir.path, 'export.jsonl');
    const exp = await runCli(['replay', '--export', exported, '--data', privateData]);
    expect(exp.code, exp.stderr).toBe(0);
    const lines = readFileSync(exported, 'utf8').trim().split('\n');
    expect(lines.map((l) => comparable(JSON.stringify((JSON.parse(l) as { fact: unknown }).fact)))).toEqual(
      expectedFacts(workspace),
    );
    const fromFile = await runCli(['replay', '--digest', '--from-file', exported]);
    expect(fromFile.stdout).toBe(status.stdout);
  });

  it('SIGKILL after acknowledged commands, then restart: every fact is there, digest equal', async () => {
    const before = (await runCli(['status', '--digest', '--data', privateData])).stdout;
    const info = JSON.parse(readFileSync(join(privateData, 'runtime.json'), 'utf8')) as { natsServerPid: number };
    up!.child.kill('SIGKILL');
    await up!.exited;

    up = startCli(['up', '--private', '--data', privateData, '--workspace', workspace]);
    await up.waitFor(/mode private/);
    expect(isAlive(info.natsServerPid)).toBe(false);
    const after = await runCli(['status', '--digest', '--data', privateData]);
    expect(after.stdout).toBe(before);
    const replayed = await runCli(['replay', '--digest', '--data', privateData]);
    expect(replayed.stdout).toBe(before);
    const again = await runCli(['call', 'agent.get', '{}', '--agent', 'grandchild-b', '--data', privateData]);
    expect(JSON.parse(again.stdout)).toMatchObject({ ok: true, parentId: 'child-a', label: 'b' });

    const restarted = JSON.parse(readFileSync(join(privateData, 'runtime.json'), 'utf8')) as { natsServerPid: number };
    expect(isAlive(restarted.natsServerPid)).toBe(true);
    up.child.kill('SIGINT');
    expect(await up.exited).toBe(0);
    expect(existsSync(join(privateData, 'runtime.json'))).toBe(false);
    expect(isAlive(restarted.natsServerPid)).toBe(false);
  });

  it(
    'embedded mode: the same workload gives the same ' + 'facts, and its JSONL log replays to the same digest',
    async () => {
      up = startCli(['up', '--embedded', '--data', embeddedData, '--workspace', workspace]);
      await up.waitFor(/mode embedded/);
      await runWorkload(embeddedData);
      const status = await runCli(['status', '--digest', '--data', embeddedData]);
      expect(status.code, status.stderr).toBe(0);
      up.child.kill('SIGTERM');
      expect(await up.exited).toBe(0);

      const log = readFileSync(join(embeddedData, 'events.jsonl'), 'utf8').trim().split('\n');
      const facts = log.map((l) => comparable(JSON.stringify((JSON.parse(l) as { fact: unknown }).fact)));
      // The same facts as the private broker's run (each is checked against the same written-out list).
      expect(facts).toEqual(expectedFacts(workspace));
      // Digests include generated ids (permission request ids), so they are compared within a mode:
      // the embedded runtime's live digest equals the digest its JSONL log replays to.
      expect(status.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
      const replayed = await runCli(['replay', '--digest', '--from-file', join(embeddedData, 'events.jsonl')]);
      expect(replayed.stdout).toBe(status.stdout);
      // Export format = embedded log format: {seq, subject, fact} per line; the log's lines also carry their seal.
      for (const line of log)
        expect(Object.keys(JSON.parse(line) as object)).toEqual(['seq', 'subject', 'fact', 'mac']);
    },
  );

  it('client commands say how to start a runtime when none runs', async () => {
    const r = await runCli(['call', 'runtime.ping', '{}', '--data', join(dir.path, 'nothing')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no runtime found for data dir .*skein up/);
  });

  it('names the NATS URL it cannot reach, for skein up and for a client command', async () => {
    const [port] = await freePorts(1);
    const url = `nats://127.0.0.1:${port}`;
    const up = await runCli(['up', '--nats', url, '--workspace', dir.path, '--data', join(dir.path, 'down')]);
    expect(up.code).toBe(1);
    expect(up.stderr).toContain(`cannot connect to NATS at ${url}: `);
    const call = await runCli(['call', 'runtime.ping', '{}', '--nats', url]);
    expect(call.code).toBe(1);
    expect(call.stderr).toContain(`cannot connect to NATS at ${url}: `);
  });

  it('bad usage exits 2 with a message; a missing workspace exits 1, naming it', async () => {
    const r = await runCli(['call', 'agent.spawn', '{not json', '--data', embeddedData]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not JSON/);
    const u = await runCli(['up', '--embedded', '--private']);
    expect(u.code).toBe(2);
    const unknown = await runCli(['frobnicate']);
    expect(unknown.code).toBe(2);
    const missing = join(dir.path, 'no-such-workspace');
    const nowhere = await runCli(['up', '--embedded', '--workspace', missing, '--data', join(dir.path, 'nowhere')]);
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain(`workspace '${missing}' does not exist: create it, or pass --workspace`);
    expect(existsSync(join(dir.path, 'nowhere'))).toBe(false);
  });
});
