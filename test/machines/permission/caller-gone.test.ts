/**
 * A request whose caller has gone (issue 14, "Friction"): the caller's deadline is data in
 * `permission.requested`, `permission.caller-gone` withdraws the ask (by: cancelled, reason caller_gone), a
 * later approval changes nothing, and folding the facts gives the same state as the live machine.
 */
import { createActor } from 'xstate';
import {
  callerGoneReason,
  permissionMachine,
  resumeFrom,
  type PermissionMachineInput,
} from '../../../machines/permission/permission.ts';
import { permissionAggregate, settledReply } from '../../../machines/permission/permission-aggregate.ts';
import { mergePolicies } from '../../../machines/permission/policy.ts';
import type { PermissionFact } from '../../../schemas/permission.ts';
import { CommandEnvelope, waitMsFor } from '../../../schemas/message.ts';
import { Policy } from '../../../schemas/policy.ts';
import { shellSplitter } from '../../support/permission-fixtures.ts';

const NOW = '2026-11-29T12:00:00.000Z';
const CALLER = '2026-11-29T12:00:01.500Z';
const policies = { own: mergePolicies([{ name: 'project', policy: Policy.parse({}) }]) };

async function input(extra: Partial<PermissionMachineInput> = {}): Promise<PermissionMachineInput> {
  const split = (await shellSplitter())('touch canary');
  return {
    requestId: 'r-1',
    agentId: 'main',
    ancestors: [],
    request: { tool: 'terminal', input: 'touch canary', split },
    policies,
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

const gone = { type: 'permission.caller-gone' as const, data: { requestId: 'r-1' } };
const allow = {
  type: 'permission.decide' as const,
  data: { requestId: 'r-1', decision: 'allow_once' as const, decidedBy: 'main' },
};

describe('permission machine: the caller stops waiting', () => {
  it("records the caller's deadline in the ask, beside the answer deadline", async () => {
    const { facts } = start(await input({ callerDeadline: CALLER }));
    expect(facts).toHaveLength(1);
    expect(facts[0]).toMatchObject({
      type: 'permission.requested',
      data: { deadline: '2026-11-29T12:01:00.000Z', callerDeadline: CALLER },
    });
  });

  it('withdraws the ask when the caller is gone: it ends denied, never granted', async () => {
    const { actor, facts } = start(await input({ callerDeadline: CALLER }));
    actor.send(gone);
    expect(actor.getSnapshot().value).toBe('denied');
    expect(facts.map((f) => f.type)).toEqual(['permission.requested', 'permission.denied']);
    expect(facts[1]!.data).toEqual({
      requestId: 'r-1',
      agentId: 'main',
      tool: 'terminal',
      input: 'touch canary',
      by: 'cancelled',
      reason: `Permission to run "touch canary" was cancelled: ${callerGoneReason(CALLER)}`,
    });
    expect(facts[1]!.data.reason).toMatch(/^Permission to run "touch canary" was cancelled: caller_gone: /);
    expect(actor.getSnapshot().output).toMatchObject({ granted: false, by: 'cancelled' });
  });

  it('ignores caller-gone when the caller gave no deadline (it waits as long as the answer deadline)', async () => {
    const { actor, facts } = start(await input());
    actor.send(gone);
    expect(actor.getSnapshot().value).toBe('asking');
    expect(facts[0]!.data).not.toHaveProperty('callerDeadline');
    actor.send(allow);
    expect(actor.getSnapshot().value).toBe('allowed');
  });

  it('ignores caller-gone for another request', async () => {
    const { actor } = start(await input({ callerDeadline: CALLER }));
    actor.send({ type: 'permission.caller-gone', data: { requestId: 'r-2' } });
    expect(actor.getSnapshot().value).toBe('asking');
  });

  it('folds to the same outcome on replay, and a resumed request keeps its caller deadline', async () => {
    const { actor, facts } = start(await input({ callerDeadline: CALLER }));
    let folded = permissionAggregate.resolveState({ value: 'empty', context: {} });
    const fold = (f: PermissionFact) => {
      const next = createActor(permissionAggregate, { snapshot: folded }).start();
      next.send(f);
      folded = next.getSnapshot();
    };
    fold(facts[0]!);
    expect(folded.context.callerDeadline).toBe(CALLER);
    const resumed = createActor(permissionMachine, {
      input: { ...(await input()), resume: resumeFrom(folded.context) },
    }).start();
    expect(resumed.getSnapshot().context.callerDeadline).toBe(CALLER);

    actor.send(gone);
    fold(facts[1]!);
    expect(folded.value).toBe('denied');
    expect(settledReply(folded)).toEqual({
      requestId: 'r-1',
      outcome: 'denied',
      by: 'cancelled',
      alreadyDecided: true,
    });
    expect(folded.context.reason).toBe(actor.getSnapshot().output!.reason);
  });
});

describe('CommandEnvelope.waitMs', () => {
  it('takes whole positive ms up to a day, naming the field otherwise', () => {
    expect(CommandEnvelope.parse({ waitMs: 1500, data: {} }).waitMs).toBe(1500);
    for (const bad of [0, -1, 1.5, 24 * 3600_000 + 1, '10']) {
      const r = CommandEnvelope.safeParse({ waitMs: bad, data: {} });
      expect(r.success).toBe(false);
      expect(r.error!.issues[0]!.path).toEqual(['waitMs']);
    }
  });

  it('waitMsFor turns any client timeout into a valid waitMs', () => {
    expect(waitMsFor(1500)).toBe(1500);
    expect(waitMsFor(0.2)).toBe(1);
    expect(waitMsFor(1e12)).toBe(24 * 3600_000);
  });
});
