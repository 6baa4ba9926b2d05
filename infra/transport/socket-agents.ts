/**
 * @module
 * What each agent holds on the embedded socket, across all its connections (up to MAX_CONNECTIONS_PER_AGENT):
 * its subscriptions and the bytes waiting for it to read. The per-connection bounds alone multiplied by 64: one
 * agent held 64 × 1,024 wildcard subscriptions (every publish on the bus went slower for all: a sibling's exec
 * 19 → 318 ms), and 16 connections that stopped reading its own terminal's output held 1.2 GB of the runtime.
 */
import type { Socket } from 'node:net';

export type AgentConnection = {
  /** Closes the connection (its agent finished, or it is cut). */
  kill: () => void;
  /** Cuts it as a slow consumer (`why`: what it is told). */
  cut: (why: string) => void;
  socket: Socket;
  /** Subscriptions it holds now. */
  subs: () => number;
};

export class SocketAgents {
  readonly #byAgent = new Map<string, Set<AgentConnection>>();

  add(agentId: string, connection: AgentConnection): void {
    const set = this.#byAgent.get(agentId) ?? new Set();
    set.add(connection);
    this.#byAgent.set(agentId, set);
  }

  remove(agentId: string, connection: AgentConnection): void {
    const set = this.#byAgent.get(agentId);
    if (!set?.delete(connection)) return;
    if (set.size === 0) this.#byAgent.delete(agentId);
  }

  connections(agentId: string): number {
    return this.#byAgent.get(agentId)?.size ?? 0;
  }

  /** Subscriptions the agent holds on all its connections. */
  subs(agentId: string): number {
    let n = 0;
    for (const c of this.#byAgent.get(agentId) ?? []) n += c.subs();
    return n;
  }

  /** Bytes written to the agent's connections and not yet read by it. */
  pendingBytes(agentId: string): number {
    let n = 0;
    for (const c of this.#byAgent.get(agentId) ?? []) n += c.socket.writableLength;
    return n;
  }

  /** The agent's connection with the most bytes waiting for it to read. */
  largest(agentId: string): AgentConnection | undefined {
    let most: AgentConnection | undefined;
    for (const c of this.#byAgent.get(agentId) ?? []) {
      if (!most || c.socket.writableLength > most.socket.writableLength) most = c;
    }
    return most;
  }

  /** Closes every connection of `agentId` and forgets them. */
  killAll(agentId: string): void {
    const set = this.#byAgent.get(agentId);
    this.#byAgent.delete(agentId);
    for (const c of set ?? []) c.kill();
  }

  agents(): string[] {
    return [...this.#byAgent.keys()];
  }
}
