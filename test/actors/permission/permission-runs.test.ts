/**
 * The gate's fast path (issue 15): a call the rules settle gets no machine, but the same fact and outcome the
 * machine gives, so a replay folds the same state; a call the rules would ask about is left to the machine.
 */
import { createActor } from 'xstate';
import { PermissionRuns, type FactSink } from '../../../actors/permission/permission-runs.ts';
import { permissionMachine, type PolicyChain } from '../../../machines/permission/permission.ts';
import { permissionAggregate } from '../../../machines/permission/permission-aggregate.ts';
import { mergePolicies } from '../../../machines/permission/policy.ts';
import type { PermissionFact } from '../../../schemas/permission.ts';
import { Policy } from '../../../schemas/policy.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { shellSplitter } from '../../support/permission-fixtures.ts';

const NOW = '2026-11-29T12:00:00.000Z';
const project = Policy.parse({
  tools: { terminal: { always_allow: [{ pattern: '^ls\\b' }], always_deny: [{ pattern: '^rm\\b' }] } },
});
const parentPolicy = Policy.parse({ default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^cat\\b' }] } } });
const policies: PolicyChain = {
  own: mergePolicies([{ name: 'project', policy: project }]),
  ancestors: [mergePolicies([{ name: 'agent', policy: parentPolicy }])],
};
const agent = { agentId: 'child', ancestors: ['main'], roots: ['/ws'] };

function fold(facts: PermissionFact[]) {
  let state = permissionAggregate.resolveState({ value: 'empty', context: {} });
  for (const f of facts) {
    const next = createActor(permissionAggregate, { snapshot: state }).start();
    next.send(f);
    state = next.getSnapshot();
  }
  return { value: state.value, context: state.context };
}

describe('PermissionRuns.settleByRule', () => {
  it.each([
    ['allowed by a rule', 'ls -la', true],
    ['denied by a rule', 'rm x', true],
    ["denied by a parent's rule", 'cat secrets', true],
    ['denied by a built-in', 'ls; rm -rf /', true],
    ['asked about (no rule)', 'cargo build', false],
  ])('%s: the same fact, outcome and folded state as the machine', async (_name, command, settles) => {
    const request = { tool: 'terminal' as const, input: command, split: (await shellSplitter())(command) };
    const machineFacts: PermissionFact[] = [];
    const actor = createActor(permissionMachine, {
      input: { requestId: 'p-1', agentId: 'child', ancestors: ['main'], request, policies, now: NOW },
    });
    actor.on('*', (f) => machineFacts.push(f as PermissionFact));
    actor.start();

    const appended: unknown[] = [];
    const sink: FactSink = async (fact) => void appended.push(fact);
    const runs = new PermissionRuns({ logger: memoryLogger('silent').logger, emit: sink });
    const ruled = runs.settleByRule(agent, 'p-1', request, policies, sink);

    if (!settles) {
      expect(ruled).toBeUndefined();
      expect(appended).toEqual([]);
      expect(actor.getSnapshot().value).toBe('asking');
      return;
    }
    await ruled!.write;
    expect(ruled!.output).toEqual(actor.getSnapshot().output);
    expect(appended).toEqual(machineFacts.map((f) => ({ ...f, agentId: 'child' })));
    expect(fold(appended as PermissionFact[])).toEqual(fold(machineFacts));
    expect(runs.settled('p-1')).toEqual({
      requestId: 'p-1',
      outcome: ruled!.output.granted ? 'granted' : 'denied',
      by: ruled!.output.by,
      alreadyDecided: false,
    });
    expect(runs.pending.size).toBe(0);
  });

  it('logs a failed append of a rule fact instead of leaving an unhandled rejection', async () => {
    const request = { tool: 'terminal' as const, input: 'ls', split: (await shellSplitter())('ls') };
    const { logger, lines } = memoryLogger('warn');
    const sink: FactSink = () => Promise.reject(new Error('disk full'));
    const runs = new PermissionRuns({ logger, emit: sink });
    const ruled = runs.settleByRule(agent, 'p-2', request, policies, sink);
    await expect(ruled!.write).rejects.toThrow('disk full');
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 40,
        requestId: 'p-2',
        event: 'permission.granted',
        msg: 'permission fact not appended',
      }),
    );
  });
});
