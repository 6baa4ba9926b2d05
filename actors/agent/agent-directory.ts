/**
 * @module
 * Who the agents are, read from their folded aggregates: one agent's view,
 * its children, ancestors and subtree. Every domain that scopes by agent
 * (review, edit, terminal, permission, workers) reads it; it holds no state
 * of its own, so it can be built before the agent domain's service.
 */
import { parseEventSubject, type AgentId, type AgentStatus } from '../../schemas/index.ts';
import type { AgentContext } from '../../machines/agent/agent.ts';
import { isFinished } from '../../machines/agent/agent.ts';

export type AgentView = AgentContext & { agentId: AgentId; status: AgentStatus };

/** The folded state the directory reads (the host provides it). */
export type AgentStates = {
  /** The subject of an agent's aggregate, `skein.evt.<parent or self>.agent.<agentId>`. */
  agentSubject(agentId: string): string | undefined;
  state(subject: string): { value: unknown; context: unknown } | undefined;
  /** Every aggregate's subject. */
  subjects(): Iterable<string>;
};

export class AgentDirectory {
  readonly #states: AgentStates;
  readonly #views = new WeakMap<object, AgentView>();

  constructor(states: AgentStates) {
    this.#states = states;
  }

  /**
   * The agent's view, built once per folded snapshot (a snapshot is never changed, a fact makes a new one):
   * an exec reads its agent's view five times or more (gate, workspace, ancestors). Frozen: it is shared.
   */
  view(agentId: string): AgentView | undefined {
    const subject = this.#states.agentSubject(agentId);
    const snapshot = subject ? this.#states.state(subject) : undefined;
    if (!snapshot) return undefined;
    const known = this.#views.get(snapshot);
    if (known?.agentId === agentId) return known;
    const view: AgentView = Object.freeze({
      ...(snapshot.context as AgentContext),
      agentId: agentId as AgentId,
      status: String(snapshot.value) as AgentStatus,
    });
    this.#views.set(snapshot, view);
    return view;
  }

  /** The agent's status when it has finished (completed, failed, cancelled); undefined while it runs. */
  finishedStatus(agentId: string): string | undefined {
    const status = this.view(agentId)?.status;
    return status !== undefined && isFinished(status) ? status : undefined;
  }

  /** Ids of an agent's children (their facts are on the parent's subjects). */
  children(agentId: string): AgentId[] {
    const out: AgentId[] = [];
    for (const key of this.#states.subjects()) {
      const parts = parseEventSubject(key);
      if (parts?.aggregate === 'agent' && parts.agentId === agentId && parts.aggregateId !== agentId)
        out.push(parts.aggregateId as AgentId);
    }
    return out;
  }

  /** Nearest first: parent, grandparent, …, root. */
  ancestors(agentId: string): AgentId[] {
    const out: AgentId[] = [];
    let current = this.view(agentId)?.parentId ?? null;
    while (current && out.length < 128) {
      out.push(current as AgentId);
      current = this.view(current)?.parentId ?? null;
    }
    return out;
  }

  /**
   * Ancestors on the agent's own named host, nearest first: the action logs its changes are recorded in. A
   * parent on another host would review paths it cannot reach (its reject would write on the wrong machine).
   */
  localAncestors(agentId: string): AgentId[] {
    const host = this.view(agentId)?.host;
    const out: AgentId[] = [];
    for (const ancestor of this.ancestors(agentId)) {
      if (this.view(ancestor)?.host !== host) break;
      out.push(ancestor);
    }
    return out;
  }

  /** Whether `ancestor` is `agentId` itself or above it. */
  isSelfOrAncestor(ancestor: string, agentId: string): boolean {
    return ancestor === agentId || this.ancestors(agentId).includes(ancestor as AgentId);
  }

  /** The subtree below `agentId`, children after their parent (pre-order). */
  descendants(agentId: string): AgentId[] {
    const out: AgentId[] = [];
    const visit = (id: string) => {
      for (const child of this.children(id)) {
        out.push(child);
        visit(child);
      }
    };
    visit(agentId);
    return out;
  }

  /** How many agents have not finished. */
  active(): number {
    let n = 0;
    for (const key of this.#states.subjects()) {
      if (parseEventSubject(key)?.aggregate !== 'agent') continue;
      const snapshot = this.#states.state(key);
      if (snapshot && !isFinished(String(snapshot.value))) n++;
    }
    return n;
  }
}
