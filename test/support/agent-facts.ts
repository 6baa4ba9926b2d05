/**
 * `agent.spawned` facts for tests that need an agent in the log without a runtime: a root agent (no
 * parent), or a child of `main`.
 */
export function spawnedData(agentId: string, parentId: string | null = null) {
  return {
    agentId,
    parentId,
    label: agentId,
    workspace: '/w',
    depth: parentId === null ? 0 : 1,
    task: null,
    hasPolicy: false,
    worker: null,
  };
}

export function spawnedFact(agentId: string, parentId: string | null = null) {
  return { type: 'agent.spawned', data: spawnedData(agentId, parentId) };
}
