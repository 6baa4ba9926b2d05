/**
 * @module
 * Per-agent counts held against a limit (open streaming edits, commands in flight): `take` refuses with
 * `limit_exceeded` when the agent already holds `limit`, and `release` gives one back. Both are synchronous,
 * so a check and its take can never be split by an await: concurrent requests cannot all pass.
 */
import { LimitExceededError } from '../../schemas/errors.ts';

export class PerAgentSlots {
  readonly #held = new Map<string, number>();
  readonly #limit: number;
  readonly #refusal: (agentId: string, held: number, limit: number) => string;

  /** `refusal` words the error: it names the config key and says what to do. */
  constructor(limit: number, refusal: (agentId: string, held: number, limit: number) => string) {
    this.#limit = limit;
    this.#refusal = refusal;
  }

  /** How many `agentId` holds. */
  held(agentId: string): number {
    return this.#held.get(agentId) ?? 0;
  }

  /** Takes one of `agentId`'s slots, or throws `limit_exceeded`. */
  take(agentId: string): void {
    const held = this.held(agentId);
    if (held >= this.#limit) throw new LimitExceededError(this.#refusal(agentId, held, this.#limit));
    this.#held.set(agentId, held + 1);
  }

  /** Gives back one of `agentId`'s slots. */
  release(agentId: string): void {
    const left = this.held(agentId) - 1;
    if (left > 0) this.#held.set(agentId, left);
    else this.#held.delete(agentId);
  }
}
