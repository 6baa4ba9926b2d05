/**
 * The agent lifecycle over the host (embedded mode): spawn with limits and
 * sub-workspaces, complete/fail/wait, cancel of a subtree bottom-up with
 * siblings untouched, scope checks, and every bad input of the issue.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { replay } from '../../../infra/kernel/replay.ts';
import { decodeReply } from '../../../infra/transport/codec.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';
import { ok } from '../../support/replies.ts';

describe('agents (embedded)', () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime({ mode: 'embedded', flags: { domains: { agents: { maxDepth: 3, maxChildren: 5 } } } });
    mkdirSync(join(rt.workspace, 'pkg', 'inner'), { recursive: true });
    symlinkSync('/tmp', join(rt.workspace, 'escape'));
  });
  afterAll(async () => rt?.dispose());

  it('spawns into a sub-workspace, completes, and agent.wait returns the result', async () => {
    const spawned = ok(
      await rt.call('agent.spawn', { label: 'pkg', agentId: 'pkg', workspace: 'pkg', task: 'build pkg' }),
    );
    expect(spawned).toMatchObject({
      agentId: 'pkg',
      parentId: 'main',
      workspace: join(rt.workspace, 'pkg'),
      status: 'running',
    });
    const waiting = rt.call('agent.wait', { agentId: 'pkg', timeoutMs: 10_000 });
    ok(await rt.call('agent.complete', { result: { built: true } }, { agentId: 'pkg' }));
    expect(ok(await waiting)).toMatchObject({
      agentId: 'pkg',
      status: 'completed',
      done: true,
      result: { built: true },
      error: null,
    });
    expect(ok(await rt.call('agent.get', {}, { agentId: 'pkg' }))).toMatchObject({
      status: 'completed',
      task: 'build pkg',
      result: { built: true },
    });
  });

  it('times out a wait without failing the agent', async () => {
    ok(await rt.call('agent.spawn', { label: 'slow', agentId: 'slow' }));
    expect(ok(await rt.call('agent.wait', { agentId: 'slow', timeoutMs: 50 }))).toMatchObject({
      status: 'running',
      done: false,
    });
    ok(await rt.call('agent.fail', { error: 'gave up' }, { agentId: 'slow' }));
    expect(ok(await rt.call('agent.wait', { agentId: 'slow', timeoutMs: 50 }))).toMatchObject({
      status: 'failed',
      done: true,
      error: 'gave up',
    });
  });

  it('cancels a middle agent and its subtree bottom-up, leaving siblings running', async () => {
    ok(await rt.call('agent.spawn', { label: 'mid', agentId: 'mid' }));
    ok(await rt.call('agent.spawn', { label: 'leaf1', agentId: 'leaf1' }, { agentId: 'mid' }));
    ok(await rt.call('agent.spawn', { label: 'leaf2', agentId: 'leaf2' }, { agentId: 'mid' }));
    ok(await rt.call('agent.spawn', { label: 'sibling', agentId: 'sibling' }));
    const cancelled = ok(await rt.call('agent.cancel', { agentId: 'mid', reason: 'change of plan' }));
    expect(cancelled['cancelled']).toEqual(['leaf2', 'leaf1', 'mid']);
    const tree = ok(await rt.call('agent.tree', {}))['agents'] as Array<{ agentId: string; status: string }>;
    const status = Object.fromEntries(tree.map((a) => [a.agentId, a.status]));
    expect(status).toMatchObject({
      main: 'running',
      mid: 'cancelled',
      leaf1: 'cancelled',
      leaf2: 'cancelled',
      sibling: 'running',
    });
    expect(ok(await rt.call('agent.get', {}, { agentId: 'leaf1' }))).toMatchObject({
      status: 'cancelled',
      error: 'change of plan',
    });
    // Cancelling again is a no-op.
    expect(ok(await rt.call('agent.cancel', { agentId: 'mid' }))['cancelled']).toEqual([]);
  });

  describe('bad input', () => {
    it.each([
      [
        'spawn under a cancelled parent',
        'leaf1',
        { label: 'x' },
        'permission_denied',
        /leaf1' is cancelled; a finished agent can no longer use tools/,
      ],
      ['spawn under a completed parent', 'pkg', { label: 'x' }, 'permission_denied', /'pkg' is completed/],
      ['spawn under an unknown parent', 'ghost', { label: 'x' }, 'unknown_agent', /'ghost' does not exist/],
      [
        'an id that exists (no re-parenting, no cycles)',
        'sibling',
        { label: 'x', agentId: 'main' },
        'conflict',
        /'main' is taken/,
      ],
      [
        'a workspace outside the parent',
        'main',
        { label: 'x', workspace: '/etc' },
        'permission_denied',
        /outside the parent's workspace/,
      ],
      [
        'a workspace escaping through a symlink',
        'main',
        { label: 'x', workspace: 'escape' },
        'permission_denied',
        /outside the parent's workspace/,
      ],
      [
        'a workspace that does not exist',
        'main',
        { label: 'x', workspace: 'nope' },
        'invalid_message',
        /'nope' does not exist/,
      ],
      [
        'a worker command not found',
        'main',
        { label: 'x', worker: { command: 'no-such-program-xyz' } },
        'invalid_message',
        /'no-such-program-xyz' was not found/,
      ],
      [
        'a policy that does not validate',
        'main',
        { label: 'x', policy: { tools: { terminal: { always_allow: [{ patern: 'x' }] } } } },
        'invalid_message',
        /data\.policy/,
      ],
    ] as const)('%s', async (_name, agentId, data, code, message) => {
      const before = await rt.log.lastSeq();
      const reply = await rt.call('agent.spawn', data, { agentId });
      expect(reply).toMatchObject({ ok: false, error: { code } });
      if (!reply.ok) expect(reply.error.message).toMatch(message);
      // Only the permission decision may have been recorded; no agent appeared.
      const after: string[] = [];
      for await (const f of rt.log.read({ fromSeq: before + 1 })) after.push(f.type);
      expect(after.filter((t) => t.startsWith('agent.'))).toEqual([]);
    });

    it('enforces depth and children limits', async () => {
      ok(await rt.call('agent.spawn', { label: 'd1', agentId: 'd1' }));
      ok(await rt.call('agent.spawn', { label: 'd2', agentId: 'd2' }, { agentId: 'd1' }));
      ok(await rt.call('agent.spawn', { label: 'd3', agentId: 'd3' }, { agentId: 'd2' }));
      expect(await rt.call('agent.spawn', { label: 'd4' }, { agentId: 'd3' })).toMatchObject({
        ok: false,
        error: { code: 'limit_exceeded', message: expect.stringMatching(/maxDepth/) },
      });
      // Only live children count (finished ones hold nothing): fill main up to five live children.
      let tooMany: Awaited<ReturnType<typeof rt.call>> | undefined;
      for (let i = 0; i < 6 && !tooMany; i++) {
        const r = await rt.call('agent.spawn', { label: `fill ${i}` });
        if (!r.ok) tooMany = r;
      }
      expect(tooMany).toMatchObject({
        ok: false,
        error: {
          code: 'limit_exceeded',
          message: expect.stringMatching(/has 5 live .*domains\.agents\.maxChildren = 5/),
        },
      });
    });

    it('refuses to wait for or cancel an agent outside the sender subtree', async () => {
      expect(await rt.call('agent.cancel', { agentId: 'sibling' }, { agentId: 'd1' })).toMatchObject({
        ok: false,
        error: { code: 'permission_denied' },
      });
      expect(await rt.call('agent.wait', { agentId: 'main', timeoutMs: 0 }, { agentId: 'd1' })).toMatchObject({
        ok: false,
        error: { code: 'permission_denied' },
      });
      expect(await rt.call('agent.complete', { result: 1 }, { agentId: 'pkg' })).toMatchObject({
        ok: false,
        error: { code: 'invalid_state' },
      });
    });
  });

  it("holds every agent's live snapshot equal to the one replayed from the log", async () => {
    const replayed = await replay(rt.log.read(), AGGREGATES);
    const live = rt.host.fold.states();
    const agents = Object.entries(live).filter(([, state]) => state.aggregate === 'agent');
    expect(agents.length).toBeGreaterThan(5);
    for (const [subject, state] of agents) {
      const again = replayed.fold.states()[subject];
      expect({ subject, value: again?.value, context: again?.context }).toEqual({
        subject,
        value: state.value,
        context: state.context,
      });
    }
    expect(new Set(agents.map(([, s]) => String(s.value)))).toEqual(
      new Set(['running', 'completed', 'cancelled', 'failed']),
    );
  });

  it("holds every live agent actor's snapshot equal to the one replayed from the log", async () => {
    const replayed = (await replay(rt.log.read(), AGGREGATES)).fold.states();
    const subjects = Object.keys(replayed).filter((s) => replayed[s]?.aggregate === 'agent');
    expect(subjects.length).toBeGreaterThan(5);
    // One live actor per agent in the log, no more.
    expect(rt.agents.ids().sort()).toEqual(subjects.map((s) => s.split('.').at(-1)).sort());
    for (const subject of subjects) {
      const agentId = subject.split('.').at(-1)!;
      const snap = rt.agents.snapshot(agentId);
      expect({ agentId, value: snap?.value, context: snap?.context }).toEqual({
        agentId,
        value: replayed[subject]?.value,
        context: replayed[subject]?.context,
      });
    }
  });

  it('replays agent trees to the live digest', async () => {
    const status = ok(await rt.call('runtime.status'));
    expect((await replay(rt.log.read(), AGGREGATES)).digest).toBe(status['digest']);
  });
});

describe('agents (embedded): a result nested too deep', () => {
  it('refuses a result nested past the limit, naming it; the agent then completes and the log replays', async () => {
    const rt = await startTestRuntime({ mode: 'embedded' });
    try {
      ok(await rt.call('agent.spawn', { label: 'deep', agentId: 'deep' }));
      // 3,000 levels were stored and broke every later digest; 6,000 overflowed the log's encoder and left this
      // agent's subject (and its parent's spawns) waiting forever.
      // Sent as text: the client's own JSON.stringify cannot write such a value either.
      const subject = 'skein.cmd.deep.agent.complete';
      for (const levels of [100, 3_000, 6_000]) {
        const body = `{"data":{"result":${'['.repeat(levels)}1${']'.repeat(levels)}}}`;
        const reply = await rt.bus.request(subject, new TextEncoder().encode(body), { timeoutMs: 10_000 });
        expect(decodeReply(subject, reply)).toMatchObject({
          ok: false,
          error: {
            code: 'invalid_message',
            message: expect.stringMatching(/data\.result\[0\].*: nested more than 64 levels of objects and arrays/),
          },
        });
      }
      ok(await rt.call('agent.complete', { result: { nested: [[{ fine: true }]] } }, { agentId: 'deep' }));
      expect(ok(await rt.call('agent.get', {}, { agentId: 'deep' }))).toMatchObject({
        status: 'completed',
        result: { nested: [[{ fine: true }]] },
      });
      ok(await rt.call('agent.spawn', { label: 'after' }));
      const status = ok(await rt.call('runtime.status'));
      expect((await replay(rt.log.read(), AGGREGATES)).digest).toBe(status['digest']);
    } finally {
      await rt.dispose();
    }
  });
  it('never finishes the root: its cancel cancels the agents below it, and it goes on working', async () => {
    // A person's `skein cancel main` left the data dir refusing every tool call, after a restart too.
    const rt2 = await startTestRuntime({ mode: 'embedded' });
    try {
      ok(await rt2.call('agent.spawn', { label: 'k', agentId: 'k' }));
      ok(await rt2.call('agent.spawn', { label: 'g', agentId: 'g' }, { agentId: 'k' }));
      expect(ok(await rt2.call('agent.cancel', { agentId: 'main' }))['cancelled']).toEqual(['g', 'k']);
      for (const [type, data] of [
        ['agent.complete', { result: 1 }],
        ['agent.fail', { error: 'x' }],
      ] as const) {
        const r = (await rt2.call(type, data)) as { ok: boolean; error?: { code: string; message: string } };
        expect([r.ok, r.error?.code, r.error?.message]).toEqual([
          false,
          'invalid_state',
          expect.stringMatching(/root/),
        ]);
      }
      ok(await rt2.call('file.write', { path: 'still-works.txt', content: 'yes\n' }));
      expect(ok(await rt2.call('agent.get', {}))).toMatchObject({ agentId: 'main', status: 'running' });
    } finally {
      await rt2.dispose();
    }
  });
});
