/**
 * Layer merging (global → project → agent; lists accumulate, later defaults
 * win) and sub-agents: the most restrictive of the sub-agent's own decision
 * and every ancestor's; a sub-agent can narrow, never widen.
 */
import { decideForAgent } from '../../../machines/permission/permission-policy.ts';
import { addRules, mergePolicies } from '../../../machines/permission/policy.ts';
import { Policy, type PolicyInput, type PolicyMode } from '../../../schemas/policy.ts';
import { decideTerminal, merged, shellSplitter } from '../../support/permission-fixtures.ts';

const layer = (name: string, p: PolicyInput) => ({ name, policy: Policy.parse(p) });

describe('merging layers', () => {
  it('accumulates lists, tags each rule with its layer, and lets later defaults win', () => {
    const m = mergePolicies([
      layer('global', {
        default: 'deny',
        tools: { terminal: { default: 'allow', always_deny: [{ pattern: '^rm\\b' }] } },
      }),
      layer('project', {
        default_mode: 'confirm',
        tools: { terminal: { always_deny: [{ pattern: '^curl\\b' }], always_allow: [{ pattern: '^ls\\b' }] } },
      }),
      layer('agent', {
        tools: { terminal: { default_mode: 'confirm' }, edit_file: { always_confirm: [{ pattern: '^src/' }] } },
      }),
    ]);
    expect(m).toEqual({
      default: 'confirm',
      tools: {
        terminal: {
          default: 'confirm',
          always_deny: [
            { pattern: '^rm\\b', layer: 'global' },
            { pattern: '^curl\\b', layer: 'project' },
          ],
          always_allow: [{ pattern: '^ls\\b', layer: 'project' }],
          always_confirm: [],
        },
        edit_file: { always_allow: [], always_deny: [], always_confirm: [{ pattern: '^src/', layer: 'agent' }] },
      },
    });
  });

  it('a later layer cannot remove an earlier deny rule', async () => {
    const m = mergePolicies([
      layer('global', { tools: { terminal: { always_deny: [{ pattern: '^rm\\b' }] } } }),
      layer('project', {
        default: 'allow',
        tools: { terminal: { default: 'allow', always_allow: [{ pattern: '^rm\\b' }] } },
      }),
    ]);
    const d = await decideTerminal(m, 'rm x');
    expect(d).toMatchObject({ outcome: 'deny', rule: { pattern: '^rm\\b', layer: 'global' } });
    expect(d.reason).toContain('(global policy)');
  });

  it('addRules adds learned patterns once', () => {
    const p = Policy.parse({ tools: { terminal: { always_allow: [{ pattern: '^ls\\b' }] } } });
    const q = addRules(addRules(p, 'terminal', 'always_allow', ['^ls\\b', '^pwd\\b']), 'terminal', 'always_allow', [
      '^pwd\\b',
    ]);
    expect(q.tools.terminal!.always_allow.map((r) => r.pattern)).toEqual(['^ls\\b', '^pwd\\b']);
  });
});

describe('sub-agents cannot widen', () => {
  const modes: PolicyMode[] = ['allow', 'confirm', 'deny'];
  const rank = { allow: 0, confirm: 1, deny: 2 };
  const table = modes.flatMap((parent) => modes.map((child) => [parent, child] as const));

  it.each(table)('parent %s, child %s → the stricter', async (parent, child) => {
    const split = (await shellSplitter())('make build');
    const parentPolicy = merged({ tools: { terminal: { default: parent } } });
    const childPolicy = merged(
      { tools: { terminal: { default: parent } } },
      { tools: { terminal: { default: child } } },
    );
    const d = decideForAgent({ tool: 'terminal', input: 'make build', split }, childPolicy, [parentPolicy]);
    const expected = rank[parent] > rank[child] ? parent : child;
    expect({ outcome: d.outcome, fromParent: d.fromParent }).toEqual({
      outcome: expected,
      fromParent: rank[parent] > rank[child],
    });
  });

  it('an allow rule in the child layer does not beat the parent or grandparent', async () => {
    const split = (await shellSplitter())('curl x');
    const root = merged({ tools: { terminal: { always_deny: [{ pattern: '^curl\\b' }] } } });
    const parent = merged({ default: 'confirm' });
    const child = merged({ default: 'allow', tools: { terminal: { always_allow: [{ pattern: '^curl\\b' }] } } });
    const d = decideForAgent({ tool: 'terminal', input: 'curl x', split }, child, [parent, root]);
    expect(d).toMatchObject({ outcome: 'deny', level: 'deny_rule', fromParent: true });
    expect(d.reason).toMatch(/a sub-agent cannot widen\)$/);
  });
});
