/**
 * Shell decisions remembered per compiled policy and frozen split (`decideOne`'s memo): a repeated command is
 * looked up, and what is looked up is always what judging it again would give, under the policy it was asked
 * under and for the text it came with.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { decide, decideForAgent } from '../../../machines/permission/permission-policy.ts';
import { compilePolicy, type CompiledPolicy } from '../../../machines/permission/policy.ts';
import type { ShellSplit } from '../../../machines/permission/shell-words.ts';
import type { ShellSplitter } from '../../../actors/permission/shell-splitter.ts';
import type { PolicyInput } from '../../../schemas/policy.ts';
import { merged, shellSplitter } from '../../support/permission-fixtures.ts';
import { propertySeed } from '../../support/seed.ts';

const POLICY: PolicyInput = {
  default: 'confirm',
  tools: {
    terminal: {
      always_allow: [{ pattern: '^(ls|git status|safe)\\b' }],
      always_deny: [{ pattern: '^danger\\b' }],
      always_confirm: [{ pattern: '^ask\\b' }],
    },
  },
} as PolicyInput;

const compiled = (p: PolicyInput): CompiledPolicy => compilePolicy(merged(p));

/** The same split, not frozen: never remembered, so `decide` judges it afresh. */
const fresh = (split: ShellSplit): ShellSplit => structuredClone(split);

let split: ShellSplitter;
beforeAll(async () => {
  split = await shellSplitter();
});

describe('remembered shell decisions', () => {
  it('gives a repeated command the same decision, equal to judging it again', () => {
    const policy = compiled(POLICY);
    const s = split('git status && ls');
    expect(Object.isFrozen(s)).toBe(true);
    const first = decide({ tool: 'terminal', input: 'git status && ls', split: s }, policy);
    const again = decide({ tool: 'terminal', input: 'git status && ls', split: s }, policy);
    expect(again).toBe(first);
    expect(first).toEqual(decide({ tool: 'terminal', input: 'git status && ls', split: fresh(s) }, policy));
    expect(first.outcome).toBe('allow');
    // Shared, so nobody can change it for the next caller.
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.subCommands)).toBe(true);
  });

  it('judges again under a new policy: a rule added after the first call applies to the next', () => {
    const s = split('safe now');
    const before = compiled(POLICY);
    expect(decide({ tool: 'terminal', input: 'safe now', split: s }, before).outcome).toBe('allow');
    const after = compiled({
      ...POLICY,
      tools: { terminal: { ...POLICY.tools!.terminal!, always_deny: [{ pattern: '^safe\\b' }] } },
    } as PolicyInput);
    const d = decide({ tool: 'terminal', input: 'safe now', split: s }, after);
    expect(d.outcome).toBe('deny');
    expect(d.level).toBe('deny_rule');
    // And the old policy still answers what it answered.
    expect(decide({ tool: 'terminal', input: 'safe now', split: s }, before).outcome).toBe('allow');
  });

  it('judges a split passed with other text for that text, never from what the split was remembered with', () => {
    const policy = compiled(POLICY);
    const s = split('safe now');
    expect(decide({ tool: 'terminal', input: 'safe now', split: s }, policy).outcome).toBe('allow');
    // The whole input is matched by deny rules too: a mismatched request must not get the remembered allow.
    const mismatched = decide({ tool: 'terminal', input: 'danger now', split: s }, policy);
    expect(mismatched).toEqual(decide({ tool: 'terminal', input: 'danger now', split: fresh(s) }, policy));
    expect(mismatched.outcome).toBe('deny');
  });

  it('keeps a parent that narrows: the sub-agent cannot reuse its own remembered allow', () => {
    const own = compiled(POLICY);
    const parent = compiled({
      ...POLICY,
      tools: { terminal: { always_deny: [{ pattern: '^ls\\b' }] } },
    } as PolicyInput);
    const s = split('ls -la');
    expect(decideForAgent({ tool: 'terminal', input: 'ls -la', split: s }, own).outcome).toBe('allow');
    const d = decideForAgent({ tool: 'terminal', input: 'ls -la', split: s }, own, [parent]);
    expect(d.outcome).toBe('deny');
    expect(d.fromParent).toBe(true);
  });

  const seed = propertySeed();
  it(`equals a fresh judgement for any command, asked in any order (seed ${seed})`, () => {
    const words = ['ls', 'git status', 'safe', 'danger', 'ask', 'echo $HOME', 'rm -rf /', 'cat .skein/x', 'true'];
    const joins = [' && ', ' | ', '; ', ' || ', '\n'];
    const command = fc
      .array(fc.tuple(fc.constantFrom(...words), fc.constantFrom(...joins)), { minLength: 1, maxLength: 4 })
      .map((parts) => parts.map(([w, j], i) => (i === 0 ? w : `${j}${w}`)).join(''));
    const policies = [compiled(POLICY), compiled({ default: 'allow' } as PolicyInput), compiled({} as PolicyInput)];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(command, fc.nat(policies.length - 1)), { minLength: 1, maxLength: 12 }),
        (calls) => {
          for (const [input, p] of calls) {
            const s = split(input);
            const got = decide({ tool: 'terminal', input, split: s }, policies[p]!);
            expect(got).toEqual(decide({ tool: 'terminal', input, split: fresh(s) }, policies[p]!));
          }
        },
      ),
      { seed, numRuns: 300 },
    );
  });
});
