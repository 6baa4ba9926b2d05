/**
 * Facts for tests that need them in the log without a runtime: `agent.spawned` of a root agent (no parent)
 * or a child of `main`, and one small `terminal.output.received` chunk.
 */
import type { Fact } from '../../schemas/index.ts';

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

let made = 0;

/** A whole fact, ready to append: `agent.spawned` of a new child `a<n>` of main, with an id no other run makes. */
export function newChildFact(): Fact {
  made++;
  return {
    id: `f-${process.pid}-${made}-${Math.random().toString(36).slice(2)}`,
    type: 'agent.spawned',
    at: new Date().toISOString(),
    agentId: 'main' as Fact['agentId'],
    data: spawnedData(`a${made}`, 'main'),
  };
}

/** Two bytes of plain output of terminal `t-1` (an output-stream fact: not folded, `skein.out.…`). */
export function outputFact() {
  return {
    type: 'terminal.output.received',
    data: {
      terminalId: 't-1',
      offset: 0,
      bytes: 2,
      data: 'hi',
      sequences: [],
      sequenceCount: 0,
      isInteractive: false,
    },
  };
}
