/**
 * Named hosts on a 3-node cluster (issue 16): the first host serves the root, a second joins for placed
 * agents, the registry shows both, a second root and a second holder of a name are refused, and a command
 * for the root is answered only by its host, or with `unavailable` from another while that host is away.
 */
import { createInbox } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentNode } from '../../../schemas/index.ts';
import { NatsBus } from '../../../infra/transport/nats-bus.ts';
import { startTestCluster, type TestCluster } from '../../support/nats-cluster.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

const HOSTS = { heartbeatMs: 200, lostAfterMs: 1_500 };

describe('named hosts', () => {
  let cluster: TestCluster;
  let a: TestRuntime;
  let b: TestRuntime | undefined;
  const started: TestRuntime[] = [];

  const host = async (name: string, flags: Record<string, unknown> = {}) => {
    const rt = await startTestRuntime({
      mode: 'networked',
      natsUrl: cluster.url,
      flags: { host: name, hosts: HOSTS, ...flags },
    });
    started.push(rt);
    return rt;
  };

  beforeAll(async () => {
    cluster = await startTestCluster(3);
    a = await host('a');
    b = await host('b');
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
      await new Promise((r) => setTimeout(r, 600));
      sub.unsubscribe();
      expect(replies).toHaveLength(1);
      expect(JSON.parse(replies[0]!)).toMatchObject({ ok: true, agentId: 'main', host: 'a' });
    } finally {
      await bus.close();
    }
  });

  it('refuses a second root, naming the host that serves it', async () => {
    await expect(host('c', { rootAgentId: 'main' })).rejects.toThrow(
      "root agent 'main' is served by host 'a'; exactly one host serves the root, so host 'c' cannot: " +
        'start it without --root to join as a host for placed agents',
    );
  });

  it('refuses a host name a live host holds', async () => {
    await expect(host('b')).rejects.toThrow(/host name 'b' is taken by a live host \(pid \d+/);
  });

  it('answers unavailable, naming the root host, while that host is stopped', async () => {
    await a.dispose();
    const bus = await NatsBus.connect(cluster.url);
    try {
      const reply = await bus.nc.request('skein.cmd.main.agent.get', JSON.stringify({ id: 'away', data: {} }), {
        timeout: 5_000,
      });
      expect(JSON.parse(reply.string())).toEqual({
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
