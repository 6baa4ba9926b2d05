import { describe, expect, it } from 'vitest';
import { PolicyLayers } from '../../../actors/permission/policy-layers.ts';
import type { MergedPolicy } from '../../../machines/permission/policy.ts';
import { Policy } from '../../../schemas/policy.ts';

const deny = (pattern: string) => Policy.parse({ tools: { terminal: { always_deny: [{ pattern }] } } });
/** The terminal deny rules of a chain as `layer:pattern`: its own stack, then each ancestor's. */
const rules = (p: unknown) => (p as MergedPolicy).tools.terminal?.always_deny.map((r) => `${r.layer}:${r.pattern}`);
const denied = (chain: ReturnType<PolicyLayers['chainFor']>) => [rules(chain.own), (chain.ancestors ?? []).map(rules)];

describe('PolicyLayers.chainFor', () => {
  it('returns the chain it built while no layer changes, so its compiled patterns are reused', () => {
    const layers = new PolicyLayers([{ name: 'project', policy: deny('^rm') }]);
    layers.setAgent('a1', deny('^curl'));
    const first = layers.chainFor('a1', ['main']);
    expect(layers.chainFor('a1', ['main'])).toBe(first);
    // Another lineage for the same id is another chain.
    expect(layers.chainFor('a1', ['p2', 'main'])).not.toBe(first);
    expect(denied(first)).toEqual([['project:^rm', 'agent:a1:^curl'], [['project:^rm']]]);
  });

  it('builds the chain again after any layer changes: an agent, an ancestor, the project or global file', () => {
    const layers = new PolicyLayers([]);
    const chain = () => denied(layers.chainFor('a1', ['main']));
    expect(chain()).toEqual([undefined, [undefined]]);
    layers.setAgent('main', deny('^wget'));
    expect(chain()).toEqual([['agent:main:^wget'], [['agent:main:^wget']]]);
    layers.setAgent('a1', deny('^curl'));
    expect(chain()).toEqual([['agent:main:^wget', 'agent:a1:^curl'], [['agent:main:^wget']]]);
    layers.applyFile('project', deny('^rm'));
    expect(chain()).toEqual([
      ['project:^rm', 'agent:main:^wget', 'agent:a1:^curl'],
      [['project:^rm', 'agent:main:^wget']],
    ]);
    layers.setProject(deny('^dd'));
    expect(chain()[0]).toEqual(['project:^dd', 'agent:main:^wget', 'agent:a1:^curl']);
    layers.applyFile('global', deny('^mkfs'));
    expect(chain()[0]).toEqual(['global:^mkfs', 'project:^dd', 'agent:main:^wget', 'agent:a1:^curl']);
  });
});
