/**
 * @module
 * How many streaming edits each agent holds (`domains.edit.maxOpenPerAgent`). Each open edit holds its file
 * in the host's memory until it is finished or cancelled, so without a bound one agent grows the host with
 * every `edit.begin`. A slot is taken synchronously when a begin is accepted, before it reads its file, so
 * concurrent begins cannot all pass the check; it is given back when the edit ends or its begin fails.
 */
import { LimitExceededError } from '../../schemas/errors.ts';

export class OpenEdits {
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
        `Agent '${agentId}' already has ${held} streaming edits open, the limit domains.edit.maxOpenPerAgent = ` +
          `${this.#limit}; finish or cancel one (edit.finish, edit.cancel) first.`,
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
