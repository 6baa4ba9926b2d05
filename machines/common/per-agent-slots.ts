/**
 * @module
 * Per-agent counts held against a limit (open streaming edits, commands in flight): `take` refuses with
 * `limit_exceeded` when the agent already holds `limit`, and `release` gives one back. Both are synchronous,
 * so a check and its take can never be split by an await: concurrent requests cannot all pass. An optional
 * second limit bounds the slots of all agents together (a host-wide cap: many agents each within their own).
 */
import { LimitExceededError } from '../../schemas/errors.ts';

/** A limit on all agents' slots together, with its refusal (naming its config key). */
export type AllAgentsLimit = { limit: number; refusal: (held: number, limit: number) => string };

export class PerAgentSlots {
  readonly #held = new Map<string, number>();
  readonly #limit: number;
  readonly #refusal: (agentId: string, held: number, limit: number) => string;
  readonly #all: AllAgentsLimit | undefined;
  #total = 0;

  /** `refusal` words the error: it names the config key and says what to do. */
  constructor(limit: number, refusal: (agentId: string, held: number, limit: number) => string, all?: AllAgentsLimit) {
    this.#limit = limit;
    this.#refusal = refusal;
    this.#all = all;
  }

  /** How many all agents hold together. */
  get total(): number {
    return this.#total;
  }

  /** How many `agentId` holds. */
  held(agentId: string): number {
    return this.#held.get(agentId) ?? 0;
  }

  /** Takes one of `agentId`'s slots, or throws `limit_exceeded` (the agent's limit first, then all agents'). */
  take(agentId: string): void {
    const held = this.held(agentId);
    if (held >= this.#limit) throw new LimitExceededError(this.#refusal(agentId, held, this.#limit));
    if (this.#all && this.#total >= this.#all.limit)
      throw new LimitExceededError(this.#all.refusal(this.#total, this.#all.limit));
    this.#held.set(agentId, held + 1);
    this.#total++;
  }

  /** Gives back one of `agentId`'s slots (none when it holds none). */
  release(agentId: string): void {
    const held = this.held(agentId);
    if (held === 0) return;
    if (held > 1) this.#held.set(agentId, held - 1);
    else this.#held.delete(agentId);
    this.#total--;
  }
}
