/**
 * @module
 * How many commands each agent has in progress on this host (`limits.maxInFlightPerAgent`). A command that
 * waits (terminal.wait, a long exec, an ask) holds its decoded payload, its promise and its reply slot until
 * it ends, so without a bound one agent firing thousands at once grows the host's memory and slows every
 * other agent's calls. A slot is taken when the host starts handling a command and given back after its reply.
 */
import { LimitExceededError } from '../../schemas/errors.ts';

export class AgentInFlight {
  readonly #held = new Map<string, number>();
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Takes one of `agentId`'s slots, or throws `limit_exceeded` naming the key. */
  take(agentId: string): void {
    const held = this.#held.get(agentId) ?? 0;
    if (held >= this.#limit) {
      throw new LimitExceededError(
        `Agent '${agentId}' already has ${held} commands in progress, the limit limits.maxInFlightPerAgent = ` +
          `${this.#limit}; wait for some to reply before sending more.`,
      );
    }
    this.#held.set(agentId, held + 1);
  }

  /** Gives back one of `agentId`'s slots. */
  release(agentId: string): void {
    const left = (this.#held.get(agentId) ?? 0) - 1;
    if (left > 0) this.#held.set(agentId, left);
    else this.#held.delete(agentId);
  }
}
