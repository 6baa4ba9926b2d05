/**
 * The confirm state machine: rules decide, or it asks and waits for
 * permission.decide (once/always/deny), the deadline (fake timers driving the
 * real timer effect), a policy change (auto-resolve), or cancel; escalation
 * to ancestors; and replay of a pending request restoring its deadline.
 */
import { createActor, initialTransition, transition } from 'xstate';
import { armDeadline } from '../../../actors/permission/policy-deadline.ts';
import {
  permissionMachine,
  resumeFrom,
  type PermissionMachineInput,
  type PolicyChain,
} from '../../../machines/permission/permission.ts';
import {
  pendingDeadline,
  permissionAggregate,
  settledReply,
} from '../../../machines/permission/permission-aggregate.ts';
import { mergePolicies } from '../../../machines/permission/policy.ts';
import type { PermissionFact } from '../../../schemas/permission.ts';
import { Policy } from '../../../schemas/policy.ts';
import { shellSplitter } from '../../support/permission-fixtures.ts';

const NOW = '2026-11-29T12:00:00.000Z';
const project = Policy.parse({
  tools: { terminal: { always_allow: [{ pattern: '^ls\\b' }], always_deny: [{ pattern: '^rm\\b' }] } },
});
const chain = (p = project): PolicyChain => ({ own: mergePolicies([{ name: 'project', policy: p }]) });

async function input(command: string, extra: Partial<PermissionMachineInput> = {}): Promise<PermissionMachineInput> {
  const split = (await shellSplitter())(command);
  return {
    requestId: 'r-1',
    agentId: 'main',
    ancestors: [],
    request: { tool: 'terminal', input: command, split },
    policies: chain(),
    now: NOW,
    timeoutMs: 60_000,
    ...extra,
  };
}

function start(i: PermissionMachineInput) {
  const facts: PermissionFact[] = [];
  const actor = createActor(permissionMachine, { input: i });
  actor.on('*', (f) => facts.push(f as PermissionFact));
  actor.start();
  return { actor, facts };
}

const decide = (
  decision: 'allow_once' | 'allow_always' | 'deny_once' | 'deny_always',
  decidedBy = 'main',
  pattern?: string,
) => ({
  type: 'permission.decide' as const,
  data: { requestId: 'r-1', decision, decidedBy, ...(pattern ? { pattern } : {}) },
});

describe('permission machine', () => {
  afterEach(() => vi.useRealTimers());

  it('grants by rule without asking', async () => {
    const { actor, facts } = start(await input('ls -la'));
    expect(actor.getSnapshot().value).toBe('allowed');
    expect(facts).toEqual([
      {
        type: 'permission.granted',
        data: {
          requestId: 'r-1',
          agentId: 'main',
          tool: 'terminal',
          input: 'ls -la',
          by: 'rule',
          reason: 'Allowed by rule "^ls\\b".',
          rule: { list: 'always_allow', pattern: '^ls\\b', layer: 'project', matched: 'ls -la' },
        },
      },
    ]);
    expect(actor.getSnapshot().output).toEqual({ granted: true, by: 'rule', reason: 'Allowed by rule "^ls\\b".' });
  });

  it('denies by rule and by built-in without asking', async () => {
    const rule = start(await input('rm x'));
    expect(rule.facts.map((f) => [f.type, (f.data as { by: string }).by])).toEqual([['permission.denied', 'rule']]);
    const builtin = start(await input('ls; rm -rf /'));
    expect(builtin.facts.map((f) => [f.type, (f.data as { by: string }).by])).toEqual([
      ['permission.denied', 'builtin'],
    ]);
  });

  it('asks, then allow_once grants by the user and persists nothing', async () => {
    const { actor, facts } = start(await input('cargo build --release'));
    expect(actor.getSnapshot().value).toBe('asking');
    expect(facts).toEqual([
      {
        type: 'permission.requested',
        data: {
          requestId: 'r-1',
          agentId: 'main',
          tool: 'terminal',
          input: 'cargo build --release',
          ancestors: [],
          subCommands: ['cargo build --release'],
          reason: 'No rule allows this terminal call; the global default is to ask.',
          level: 'global_default',
          deadline: '2026-11-29T12:01:00.000Z',
          options: [
            {
              id: 'allow_always:(?-i)^cargo build --release$',
              label: 'Always allow `cargo build --release` (this exact command)',
              decision: 'allow_always',
              pattern: '(?-i)^cargo build --release$',
            },
            {
              id: 'deny_always:(?-i)^cargo build --release$',
              label: 'Always deny `cargo build --release` (this exact command)',
              decision: 'deny_always',
              pattern: '(?-i)^cargo build --release$',
            },
            { id: 'allow_once', label: 'Only this time', decision: 'allow_once' },
            { id: 'deny_once', label: 'Deny', decision: 'deny_once' },
          ],
        },
      },
    ]);
    actor.send(decide('allow_once'));
    expect(facts.slice(1)).toEqual([
      {
        type: 'permission.granted',
        data: {
          requestId: 'r-1',
          agentId: 'main',
          tool: 'terminal',
          input: 'cargo build --release',
          by: 'user',
          reason: 'Approved by the user (allow_once).',
          decision: 'allow_once',
          decidedBy: 'main',
        },
      },
    ]);
    expect(actor.getSnapshot().status).toBe('done');
  });

  it('allow_always and deny_always carry the learned rules', async () => {
    const a = start(await input('cargo build'));
    a.actor.send(decide('allow_always'));
    expect(a.facts[1]!.data).toMatchObject({
      by: 'user',
      learned: { tool: 'terminal', list: 'always_allow', patterns: ['(?-i)^cargo build$'] },
    });
    const d = start(await input('cargo publish'));
    d.actor.send(decide('deny_always', 'main', '^cargo\\s+publish\\b'));
    expect(d.facts[1]).toMatchObject({
      type: 'permission.denied',
      data: {
        by: 'user',
        decision: 'deny_always',
        learned: { list: 'always_deny', patterns: ['^cargo\\s+publish\\b'] },
      },
    });
    expect((d.facts[1]!.data as { reason: string }).reason).toBe(
      'Permission to run "cargo publish" was denied by the user. Do not retry the same call; ask what to do instead.',
    );
  });

  it('times out at the deadline (timer effect with fake timers)', async () => {
    vi.useFakeTimers({ now: Date.parse(NOW) });
    const { actor, facts } = start(await input('make'));
    const cancel = armDeadline(actor.getSnapshot().context.deadline, () =>
      actor.send({ type: 'permission.timeout', data: { requestId: 'r-1' } }),
    );
    await vi.advanceTimersByTimeAsync(59_999);
    expect(actor.getSnapshot().value).toBe('asking');
    await vi.advanceTimersByTimeAsync(1);
    expect(actor.getSnapshot().value).toBe('denied');
    expect(facts[1]).toEqual({
      type: 'permission.denied',
      data: {
        requestId: 'r-1',
        agentId: 'main',
        tool: 'terminal',
        input: 'make',
        by: 'timeout',
        reason:
          'Permission to run "make" was denied: nobody answered before 2026-11-29T12:01:00.000Z. ' +
          'Retry later, or ask the user to approve it with `skein approve`.',
      },
    });
    cancel();
  });

  it('auto-resolves a pending request when a policy change now decides it', async () => {
    const first = start(await input('cargo build', { requestId: 'r-1' }));
    const second = start(await input('cargo build', { requestId: 'r-2' }));
    first.actor.send(decide('allow_always'));
    const learned = (first.facts[1]!.data as { learned: { patterns: string[] } }).learned;
    const widened = Policy.parse({
      tools: {
        terminal: {
          always_allow: [{ pattern: '^ls\\b' }, ...learned.patterns.map((pattern) => ({ pattern }))],
          always_deny: [{ pattern: '^rm\\b' }],
        },
      },
    });
    second.actor.send({ type: 'permission.reevaluate', data: { policies: chain(widened) } });
    expect(second.facts.map((f) => [f.type, (f.data as { by?: string }).by])).toEqual([
      ['permission.requested', undefined],
      ['permission.granted', 'rule'],
    ]);
    // A change that still does not decide keeps asking without a second request.
    const third = start(await input('make', { requestId: 'r-3' }));
    third.actor.send({ type: 'permission.reevaluate', data: { policies: chain(widened) } });
    expect(third.actor.getSnapshot().value).toBe('asking');
    expect(third.facts.map((f) => f.type)).toEqual(['permission.requested']);
    const denying = Policy.parse({ tools: { terminal: { always_deny: [{ pattern: '^make\\b' }] } } });
    third.actor.send({ type: 'permission.reevaluate', data: { policies: chain(denying) } });
    expect(third.facts.map((f) => [f.type, (f.data as { by?: string }).by])).toEqual([
      ['permission.requested', undefined],
      ['permission.denied', 'rule'],
    ]);
  });

  it('escalation: any ancestor may answer; the root is the user; others are ignored', async () => {
    const sub = { agentId: 'child', ancestors: ['parent', 'main'] };
    const byParent = start(await input('make', sub));
    byParent.actor.send(decide('allow_once', 'sibling'));
    byParent.actor.send(decide('allow_once', 'child'));
    expect(byParent.actor.getSnapshot().value).toBe('asking');
    byParent.actor.send(decide('allow_always', 'parent'));
    expect(byParent.facts[1]!.data).toEqual({
      requestId: 'r-1',
      agentId: 'child',
      tool: 'terminal',
      input: 'make',
      by: 'parent',
      reason: 'Approved by the parent (allow_always).',
      decision: 'allow_always',
      decidedBy: 'parent',
    });
    const byRoot = start(await input('make', sub));
    byRoot.actor.send(decide('deny_once', 'main'));
    expect(byRoot.facts[1]!.data).toMatchObject({ by: 'user', decidedBy: 'main' });
    const byHuman = start(await input('make', sub));
    byHuman.actor.send(decide('allow_once', 'user'));
    expect(byHuman.facts[1]!.data).toMatchObject({ by: 'user' });
  });

  it('a parent policy stricter than the child denies with by: parent', async () => {
    const parent = mergePolicies([
      {
        name: 'agent:parent',
        policy: Policy.parse({ tools: { terminal: { always_deny: [{ pattern: '^make\\b' }] } } }),
      },
    ]);
    const { facts } = start(
      await input('make', {
        agentId: 'child',
        ancestors: ['parent'],
        policies: { own: chain().own, ancestors: [parent] },
      }),
    );
    expect(facts[0]).toMatchObject({ type: 'permission.denied', data: { by: 'parent' } });
  });

  it('cancel denies with by: cancelled', async () => {
    const { actor, facts } = start(await input('make'));
    actor.send({ type: 'permission.cancel', data: { reason: 'the agent was stopped.' } });
    expect(facts[1]!.data).toMatchObject({
      by: 'cancelled',
      reason: 'Permission to run "make" was cancelled: the agent was stopped.',
    });
  });

  it('replay: folding the facts restores a pending deadline, re-armed timers deny at it', async () => {
    vi.useFakeTimers({ now: Date.parse(NOW) });
    const live = start(await input('make'));
    // The log holds the requested fact; replay it through the aggregate with pure transition().
    let [snap] = initialTransition(permissionAggregate);
    for (const f of live.facts) [snap] = transition(permissionAggregate, snap, f);
    expect(snap.value).toBe('pending');
    expect(pendingDeadline(snap)).toBe('2026-11-29T12:01:00.000Z');
    expect(settledReply(snap)).toBeUndefined();
    // A restarted host resumes the machine from the aggregate: no second request, same deadline.
    vi.setSystemTime(Date.parse(NOW) + 30_000);
    const restored = start(await input('make', { now: new Date().toISOString(), resume: resumeFrom(snap.context) }));
    expect(restored.facts).toEqual([]);
    expect(restored.actor.getSnapshot().context.deadline).toBe('2026-11-29T12:01:00.000Z');
    expect(restored.actor.getSnapshot().context.decision.patterns).toEqual(['(?-i)^make$']);
    armDeadline(restored.actor.getSnapshot().context.deadline, () =>
      restored.actor.send({ type: 'permission.timeout', data: { requestId: 'r-1' } }),
    );
    await vi.advanceTimersByTimeAsync(29_999);
    expect(restored.actor.getSnapshot().value).toBe('asking');
    await vi.advanceTimersByTimeAsync(1);
    expect(restored.facts.map((f) => [f.type, (f.data as { by: string }).by])).toEqual([
      ['permission.denied', 'timeout'],
    ]);
    for (const f of restored.facts) [snap] = transition(permissionAggregate, snap, f);
    expect(settledReply(snap)).toEqual({ requestId: 'r-1', outcome: 'denied', by: 'timeout', alreadyDecided: true });
    // A late duplicate fact changes nothing (idempotent fold).
    const [again] = transition(permissionAggregate, snap, restored.facts[0]!);
    expect(again.context).toEqual(snap.context);
  });

  it('an already-passed deadline fires at once after replay', async () => {
    vi.useFakeTimers({ now: Date.parse(NOW) + 3_600_000 });
    const fired = vi.fn();
    armDeadline('2026-11-29T12:01:00.000Z', fired);
    await vi.advanceTimersByTimeAsync(0);
    expect(fired).toHaveBeenCalledTimes(1);
  });
});
