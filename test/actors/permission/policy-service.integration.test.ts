/**
 * The permission service end to end (real files, real splitter, in-process
 * facts): gate decisions, a sub-agent's request answered by its parent,
 * refusals, idempotent decide, "always" persisted and auto-resolving a
 * sibling, policy.set, timeouts and restore after replay (fake timers).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PermissionService, type FactSink, type PermissionAgent } from '../../../actors/permission/policy-service.ts';
import { createLogger } from '../../../infra/kernel/log.ts';
import { Policy } from '../../../schemas/policy.ts';
import { shellSplitter } from '../../support/permission-fixtures.ts';
import { createPermissionGate } from '../../../actors/permission/policy-gate.ts';

type Out = { type: string; agentId?: string; data: Record<string, unknown> };
let dir: string;
let facts: Out[];
const sink =
  (tag: string): FactSink =>
  async (f) => {
    facts.push({ ...(f as Out), data: { ...(f.data as object), via: tag } });
  };
const brief = () =>
  facts.map((f) => `${f.type}:${String(f.data.by ?? f.data.layerId ?? '')}@${f.agentId}/${String(f.data.via)}`);

const AGENTS: Record<string, PermissionAgent> = {};
async function service(extra: { timeoutMs?: number } = {}) {
  return PermissionService.create({
    logger: createLogger({ level: 'silent' }),
    agent: (id) => AGENTS[id],
    emit: sink('system'),
    workspace: dir,
    globalPath: join(dir, 'no-global.json'),
    gate: await createPermissionGate(await shellSplitter()),
    ...extra,
  });
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skein-perm-svc-'));
  mkdirSync(join(dir, '.skein'));
  writeFileSync(
    join(dir, '.skein/policy.json'),
    JSON.stringify({
      tools: { terminal: { always_allow: [{ pattern: '^ls\\b' }], always_deny: [{ pattern: '^rm\\b' }] } },
    }),
  );
  facts = [];
  for (const [id, ancestors] of Object.entries({ main: [], p1: ['main'], p2: ['main'], c1: ['p1', 'main'] }))
    AGENTS[id] = { agentId: id, ancestors, roots: [dir] };
});
afterEach(() => {
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

describe('PermissionService', () => {
  it('grants and denies by rule at once, with one fact each under the requester', async () => {
    const s = await service();
    await expect(
      s.authorize({ agentId: 'c1', tool: 'terminal', input: 'ls -la', emit: sink('exec') }),
    ).resolves.toMatchObject({ by: 'rule' });
    await expect(
      s.authorize({ agentId: 'c1', tool: 'terminal', input: 'rm x', emit: sink('exec') }),
    ).rejects.toMatchObject({ code: 'permission_denied', details: { by: 'rule' } });
    expect(brief()).toEqual(['permission.granted:rule@c1/exec', 'permission.denied:rule@c1/exec']);
  });

  it('a request is withdrawn by its requester (or an ancestor) only: denied, by cancelled, never run', async () => {
    const s = await service();
    const call = s.authorize({ agentId: 'c1', tool: 'terminal', input: 'make deploy', emit: sink('exec') });
    await vi.waitFor(() => expect(s.pending('p1')).toHaveLength(1));
    const [req] = s.pending('main');
    await expect(s.withdraw({ requestId: req!.requestId, by: 'p2', emit: sink('withdraw') })).rejects.toThrow(
      `agent 'p2' may not withdraw request '${req!.requestId}' of agent 'c1'; only it and its ancestors can`,
    );
    expect(await s.withdraw({ requestId: req!.requestId, by: 'c1', emit: sink('withdraw') })).toEqual({
      requestId: req!.requestId,
      outcome: 'denied',
      by: 'cancelled',
      alreadyDecided: false,
    });
    await expect(call).rejects.toMatchObject({
      code: 'permission_denied',
      message: expect.stringContaining('withdrawn: its caller cancelled the call'),
      details: { by: 'cancelled' },
    });
    // An answer that comes after it changes nothing.
    expect(
      await s.decide({ requestId: req!.requestId, decision: 'allow_once', decidedBy: 'main', emit: sink('decide') }),
    ).toMatchObject({ outcome: 'denied', by: 'cancelled', alreadyDecided: true });
  });

  it("a sub-agent's request is answered by its parent; others are refused; a second decide is idempotent", async () => {
    const s = await service();
    const call = s.authorize({ agentId: 'c1', tool: 'terminal', input: 'make test', emit: sink('exec') });
    await vi.waitFor(() => expect(s.pending('p1')).toHaveLength(1));
    const [req] = s.pending('main');
    expect(req).toMatchObject({ agentId: 'c1', ancestors: ['p1', 'main'], subCommands: ['make test'] });
    expect(s.pending('p2')).toEqual([]);
    await expect(
      s.decide({ requestId: req!.requestId, decision: 'allow_once', decidedBy: 'p2', emit: sink('decide') }),
    ).rejects.toThrow(
      `agent 'p2' may not answer request '${req!.requestId}' of ` +
        `agent 'c1'; only its ancestors (p1, main, the user) can`,
    );
    expect(
      await s.decide({ requestId: req!.requestId, decision: 'allow_once', decidedBy: 'p1', emit: sink('decide') }),
    ).toEqual({ requestId: req!.requestId, outcome: 'granted', by: 'parent', alreadyDecided: false });
    await expect(call).resolves.toEqual({ requestId: req!.requestId, by: 'parent' });
    expect(
      await s.decide({ requestId: req!.requestId, decision: 'deny_once', decidedBy: 'main', emit: sink('decide') }),
    ).toEqual({ requestId: req!.requestId, outcome: 'granted', by: 'parent', alreadyDecided: true });
    expect(brief()).toEqual(['permission.requested:@c1/exec', 'permission.granted:parent@c1/decide']);
    const afterRestart = await PermissionService.create({
      logger: createLogger({ level: 'silent' }),
      agent: (id) => AGENTS[id],
      emit: sink('system'),
      workspace: dir,
      globalPath: join(dir, 'no-global.json'),
      aggregate: (id) =>
        id === 'p-old'
          ? { value: 'denied', context: { requestId: 'p-old', outcome: 'denied', by: 'timeout' } }
          : undefined,
    });
    expect(
      await afterRestart.decide({
        requestId: 'p-old',
        decision: 'allow_once',
        decidedBy: 'main',
        emit: sink('decide'),
      }),
    ).toEqual({ requestId: 'p-old', outcome: 'denied', by: 'timeout', alreadyDecided: true });
    await expect(
      s.decide({ requestId: 'p-unknown', decision: 'allow_once', decidedBy: 'main', emit: sink('decide') }),
    ).rejects.toThrow("permission request 'p-unknown' is not pending; list pending requests with `skein approvals`");
  });

  it('allow_always persists the exact command and auto-resolves the same request of another agent', async () => {
    const s = await service();
    const a = s.authorize({ agentId: 'p1', tool: 'terminal', input: 'cargo build', emit: sink('exec-a') });
    const b = s.authorize({ agentId: 'c1', tool: 'terminal', input: 'cargo build', emit: sink('exec-b') });
    await vi.waitFor(() => expect(s.pending()).toHaveLength(2));
    const first = s.pending().find((r) => r.agentId === 'p1')!;
    await expect(
      s.decide({
        requestId: first.requestId,
        decision: 'allow_always',
        pattern: '(',
        decidedBy: 'main',
        emit: sink('decide'),
      }),
    ).rejects.toThrow(/pattern '\(' is not a valid regex/);
    await s.decide({ requestId: first.requestId, decision: 'allow_always', decidedBy: 'main', emit: sink('decide') });
    await expect(a).resolves.toMatchObject({ by: 'user' });
    await expect(b).resolves.toMatchObject({ by: 'rule' });
    expect(brief()).toEqual([
      'permission.requested:@p1/exec-a',
      'permission.requested:@c1/exec-b',
      'permission.granted:user@p1/decide',
      'policy.changed:project@main/decide',
      'permission.granted:rule@c1/decide',
    ]);
    expect(JSON.parse(readFileSync(join(dir, '.skein/policy.json'), 'utf8')).tools.terminal.always_allow).toEqual([
      { pattern: '^ls\\b' },
      { pattern: '(?-i)^cargo build$' },
    ]);
  });

  it('policy.set: only the root changes the project layer; an agent layer narrows its own decisions', async () => {
    const s = await service();
    const policy = Policy.parse({ tools: { terminal: { always_allow: [{ pattern: '^make\\b' }] } } });
    await expect(s.setPolicy({ layer: 'project', setBy: 'p1', policy, emit: sink('set') })).rejects.toThrow(
      "only the root agent 'main' may change the project policy; ask the user",
    );
    const pending = s.authorize({ agentId: 'c1', tool: 'terminal', input: 'make', emit: sink('exec') });
    await vi.waitFor(() => expect(s.pending()).toHaveLength(1));
    expect(await s.setPolicy({ layer: 'project', setBy: 'main', policy, emit: sink('set') })).toEqual({
      layer: 'project',
      rules: 1,
    });
    await expect(pending).resolves.toMatchObject({ by: 'rule' });
    await s.setPolicy({
      layer: 'agent',
      agentId: 'c1',
      setBy: 'p1',
      policy: Policy.parse({ tools: { terminal: { always_deny: [{ pattern: '^make\\b' }] } } }),
      emit: sink('set'),
    });
    await expect(
      s.authorize({ agentId: 'c1', tool: 'terminal', input: 'make', emit: sink('exec') }),
    ).rejects.toMatchObject({ details: { by: 'rule' } });
    await expect(
      s.authorize({ agentId: 'p1', tool: 'terminal', input: 'make', emit: sink('exec') }),
    ).resolves.toMatchObject({ by: 'rule' });
    await expect(
      s.setPolicy({ layer: 'agent', agentId: 'p1', setBy: 'c1', policy, emit: sink('set') }),
    ).rejects.toThrow("agent 'c1' may not set the policy of agent 'p1'");
  });

  it('times out unanswered requests', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-29T12:00:00.000Z') });
    const s = await service({ timeoutMs: 5_000 });
    const call = s.authorize({ agentId: 'c1', tool: 'terminal', input: 'make', emit: sink('exec') });
    const rejected = expect(call).rejects.toMatchObject({ details: { by: 'timeout' } });
    await vi.advanceTimersByTimeAsync(4_999);
    expect(brief()).toEqual(['permission.requested:@c1/exec']);
    await vi.advanceTimersByTimeAsync(1);
    await rejected;
    expect(brief()).toEqual(['permission.requested:@c1/exec', 'permission.denied:timeout@c1/system']);
  });

  it('denies requests still pending after a restart (host_restarted): an approval could never run them', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-29T12:00:00.000Z') });
    const fresh = await service({ timeoutMs: 5_000 });
    const pending = (requestId: string, agentId: string) => ({
      requestId,
      agentId,
      ancestors: agentId === 'c1' ? ['p1', 'main'] : [],
      tool: 'terminal',
      input: 'make',
      subCommands: ['make'],
      reason: 'r',
      deadline: '2026-11-29T12:00:08.000Z',
      options: [],
    });
    // One whose agent is gone from the directory is denied too, never left pending forever.
    expect(await fresh.restore([pending('p-old', 'c1'), pending('p-orphan', 'ghost')])).toBe(2);
    expect(fresh.pending('main')).toEqual([]);
    expect(facts.map((f) => [f.type, f.data.requestId, f.data.by, f.agentId])).toEqual([
      ['permission.denied', 'p-old', 'cancelled', 'c1'],
      ['permission.denied', 'p-orphan', 'cancelled', 'ghost'],
    ]);
    expect(String(facts[0]!.data.reason)).toMatch(/host_restarted: the runtime restarted while this request waited/);
    // Approving it now is refused as already decided, and no timer fires later.
    const late = await fresh.decide({
      requestId: 'p-old',
      decision: 'allow_once',
      decidedBy: 'main',
      emit: sink('late'),
    });
    expect(late).toMatchObject({ outcome: 'denied', alreadyDecided: true });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(facts).toHaveLength(2);
  });
});
