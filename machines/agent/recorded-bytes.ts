/**
 * @module
 * How many bytes of facts each agent's subtree has added to the events log, and whether one is past its bound
 * (`limits.maxRecordedBytesPerAgent`). Every fact is charged to the agent it names and to each of that agent's
 * ancestors below the root (the root is the operator: unbounded). So a sub-agent spends its parent's budget
 * too, and spawning fresh sub-agents never buys more room. Derived from the log alone (live appends, start-up
 * replay and facts of other hosts go through the same `charge`), so a restart restores it.
 */

/** The parent of an agent, undefined for a root (or an agent not known yet). */
export type ParentOf = (agentId: string) => string | undefined;

/**
 * What the host keeps in memory for its life for a fact that starts lasting state, beyond the fact's own
 * bytes: the folded snapshot, a live actor, index entries. Measured on 3 December (heap after GC, 1,000 each):
 * a sub-agent spawned and completed 11.5 KiB against 1.2 KiB of log; a small file.write 7.7 KiB against
 * 3.3 KiB (its edit aggregate is kept). Charged so that the bound holds the host's memory too, not only disk.
 */
export const LASTING_STATE_BYTES: Readonly<Record<string, number>> = {
  'agent.spawned': 16 * 1024,
  'edit.started': 8 * 1024,
};

/** Deeper than any tree the config allows (`domains.agents.maxDepth` ≤ 64): a loop in the lookup ends here. */
const MAX_DEPTH = 128;

export type OverBudget = { agentId: string; used: number; limit: number };

export class RecordedBytes {
  readonly limit: number;
  readonly #parentOf: ParentOf;
  readonly #used = new Map<string, number>();

  constructor(limit: number, parentOf: ParentOf) {
    this.limit = limit;
    this.#parentOf = parentOf;
  }

  /** Adds `bytes` to `agentId` and every ancestor of it that has a parent (roots are not counted). */
  charge(agentId: string, bytes: number): void {
    let current: string | undefined = agentId;
    for (let depth = 0; current !== undefined && depth < MAX_DEPTH; depth++) {
      const parent = this.#parentOf(current);
      if (parent === undefined) return;
      this.#used.set(current, (this.#used.get(current) ?? 0) + bytes);
      current = parent;
    }
  }

  /** Bytes charged to `agentId`'s subtree so far (0 for a root). */
  used(agentId: string): number {
    return this.#used.get(agentId) ?? 0;
  }

  /** The nearest of `agentId` and its ancestors whose subtree has reached the limit, if any. */
  over(agentId: string): OverBudget | undefined {
    let current: string | undefined = agentId;
    for (let depth = 0; current !== undefined && depth < MAX_DEPTH; depth++) {
      const used = this.#used.get(current) ?? 0;
      if (used >= this.limit) return { agentId: current, used, limit: this.limit };
      current = this.#parentOf(current);
    }
    return undefined;
  }
}

/**
 * Commands an agent past its bound may still send, with a payload of at most OVER_BUDGET_PAYLOAD: they finish,
 * read or stop work, each at most once per thing it ends (an agent, a terminal, an edit), so an agent told it
 * is over can still hand back a short result and close its terminals. Anything else that records (exec,
 * write, edit, spawn, input; a signal, which can be sent again and again) is refused.
 */
export const ALLOWED_OVER_BUDGET: ReadonlySet<string> = new Set([
  'runtime.ping',
  'runtime.status',
  'agent.get',
  'agent.wait',
  'agent.tree',
  'agent.complete',
  'agent.fail',
  'agent.cancel',
  'review.list',
  'permission.pending',
  'terminal.read',
  'terminal.list',
  'terminal.wait',
  'terminal.close',
  'edit.cancel',
]);

/** The largest payload of an allowed command past the bound: a result or an error says where the rest is. */
export const OVER_BUDGET_PAYLOAD = 4 * 1024;

/** The refusal's text: who is over, by how much, and what the person running skein can do. */
export function overBudgetMessage(agentId: string, type: string, over: OverBudget): string {
  const whose = over.agentId === agentId ? `Agent '${agentId}'` : `Agent '${over.agentId}' (above '${agentId}')`;
  return (
    `${whose} and its sub-agents have added ${over.used} bytes of facts to the events log, the limit ` +
    `limits.maxRecordedBytesPerAgent = ${over.limit}; '${type}' is refused. It may still finish ` +
    `(agent.complete, agent.fail, in a payload of at most ${OVER_BUDGET_PAYLOAD} bytes), read and close its ` +
    `terminals; the operator can raise the limit in skein.config.json.`
  );
}
