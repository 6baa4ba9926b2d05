import fc from 'fast-check';
import { attributeShellChanges, commonAncestor } from '../../../machines/review/shell-attribution.ts';
import { propertySeed } from '../../support/seed.ts';

// main ─┬─ a ─┬─ a1
//       │     └─ a2
//       └─ b
const PARENT: Record<string, string | undefined> = { main: undefined, a: 'main', a1: 'a', a2: 'a', b: 'main' };
const lineage = (id: string) => {
  const out = [id];
  for (let p = PARENT[id]; p !== undefined; p = PARENT[p]) out.push(p);
  return out;
};
const change = (path: string) => ({ path });

describe('shell change attribution', () => {
  it("keeps a change made while only this agent's commands ran as its own", () => {
    expect(attributeShellChanges('a1', [change('/w/x'), change('/w/y')], undefined, lineage)).toEqual([
      { agentId: 'a1', changes: [change('/w/x'), change('/w/y')] },
    ]);
    // A path seen by one agent alone (two of its own terminals) is its own too.
    expect(attributeShellChanges('a1', [change('/w/x')], { '/w/x': ['a1'] }, lineage)).toEqual([
      { agentId: 'a1', changes: [change('/w/x')] },
    ]);
  });

  it("gives a change of overlapping commands to those agents' nearest common ancestor, grouped by agents", () => {
    const groups = attributeShellChanges(
      'a1',
      [change('/w/own'), change('/w/sib'), change('/w/far'), change('/w/sib2')],
      { '/w/sib': ['a2', 'a1'], '/w/far': ['a1', 'b', 'a2'], '/w/sib2': ['a1', 'a2'] },
      lineage,
    );
    expect(groups).toEqual([
      { agentId: 'a1', changes: [change('/w/own')] },
      { agentId: 'a', changes: [change('/w/sib'), change('/w/sib2')], among: ['a1', 'a2'] },
      { agentId: 'main', changes: [change('/w/far')], among: ['a1', 'a2', 'b'] },
    ]);
    // A parent's command overlapping its child's: the parent (its log holds the child's changes anyway).
    expect(attributeShellChanges('a1', [change('/w/p')], { '/w/p': ['a', 'a1'] }, lineage)[0]!.agentId).toBe('a');
  });

  it('finds an ancestor of every agent, and none nearer (property)', () => {
    const ids = Object.keys(PARENT);
    fc.assert(
      fc.property(fc.uniqueArray(fc.constantFrom(...ids), { minLength: 1, maxLength: 5 }), (agents) => {
        const found = commonAncestor(agents, lineage)!;
        for (const a of agents) expect(lineage(a)).toContain(found);
        // Every child of the result misses at least one of the agents.
        for (const child of ids.filter((id) => PARENT[id] === found))
          expect(agents.every((a) => lineage(a).includes(child))).toBe(false);
      }),
      { seed: propertySeed(), numRuns: 200 },
    );
  });
});
