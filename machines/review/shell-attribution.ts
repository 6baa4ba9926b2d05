/**
 * @module
 * Whose log a shell command's changes go to. A change made while only this agent's commands were open in the
 * workspace is its own. One made while commands of other agents were open too could be any of theirs (a
 * snapshot cannot tell which process wrote a file): it goes to their nearest common ancestor's log (and that
 * agent's ancestors'), so that no agent's own log holds, and no review of it rejects, another agent's change.
 */

export type Attributed<C> = {
  /** The agent whose log (and ancestors' logs) records these changes. */
  agentId: string;
  changes: C[];
  /** For changes of several agents' overlapping commands: those agents, sorted. */
  among?: string[];
};

/**
 * Groups `changes` by the agent they are recorded for. `sharedWith`: path → the agents whose commands were all
 * open when it changed (only paths with more than one). `lineage(agentId)`: the agent and its ancestors,
 * nearest first. The caller's own group comes first.
 */
export function attributeShellChanges<C extends { path: string }>(
  self: string,
  changes: readonly C[],
  sharedWith: Readonly<Record<string, readonly string[]>> | undefined,
  lineage: (agentId: string) => readonly string[],
): Attributed<C>[] {
  const own: Attributed<C> = { agentId: self, changes: [] };
  const shared = new Map<string, Attributed<C>>();
  for (const c of changes) {
    const agents = sharedWith?.[c.path];
    if (!agents || agents.length < 2) {
      own.changes.push(c);
      continue;
    }
    const among = [...new Set(agents)].sort();
    const key = among.join(' ');
    let group = shared.get(key);
    if (!group) {
      group = { agentId: commonAncestor(among, lineage) ?? self, changes: [], among };
      shared.set(key, group);
    }
    group.changes.push(c);
  }
  return [own, ...shared.values()].filter((g) => g.changes.length > 0);
}

/** The nearest agent every one of `agents` is or descends from; undefined when their trees do not meet. */
export function commonAncestor(agents: readonly string[], lineage: (agentId: string) => readonly string[]) {
  const [first, ...rest] = agents.map(lineage);
  const others = rest.map((chain) => new Set(chain));
  return first?.find((id) => others.every((chain) => chain.has(id)));
}
