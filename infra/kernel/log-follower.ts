/**
 * @module
 * Named hosts share one event log: a host follows it from where its
 * start-up read ended and hands every fact to its writer, which folds those
 * another host appended (`FactWriter.observe`). It also keeps a command for
 * an agent another host just placed here from being judged before this host
 * has read what that host appended with the spawn (its policy layer).
 */
import type { StoredFact } from '../../schemas/index.ts';
import type { EventLog } from '../transport/event-log.ts';
import type { FactWriter } from './fact-writer.ts';

/** Longest a command waits for this host to read the log up to date, in ms. */
const CATCH_UP_MS = 2_000;

export class LogFollower {
  readonly #log: EventLog;
  /** The last log sequence handed to the writer. */
  #followedSeq: number;
  /** Agents another host placed here whose first command waits for `catchUp`. */
  readonly #placedHere = new Set<string>();
  #stop: () => void = () => {};

  constructor(log: EventLog, writer: FactWriter) {
    const follow = log.follow;
    if (!follow) throw new Error(`the ${log.kind} event log cannot be followed; named hosts need JetStream`);
    this.#log = log;
    this.#followedSeq = writer.lastSeq;
    const following = follow.call(log, writer.lastSeq + 1, async (stored) => {
      await writer.observe(stored);
      this.#followedSeq = stored.seq;
    });
    this.#stop = () => following.stop();
  }

  /** Called with every folded fact: an agent another host spawned is marked for a catch-up. */
  note(fact: StoredFact, foreign: boolean): void {
    if (foreign && fact.type === 'agent.spawned') this.#placedHere.add((fact.data as { agentId: string }).agentId);
  }

  /**
   * Before routing a command for `agentId`: when the agent is unknown here or was just placed here by another
   * host, waits (bounded by CATCH_UP_MS) until the log is read as far as it reached when the command came, so
   * whatever that host appended before replying to the spawn is folded.
   */
  async before(agentId: string, known: boolean): Promise<void> {
    if (known && !this.#placedHere.has(agentId)) return;
    this.#placedHere.delete(agentId);
    await this.catchUp();
  }

  /**
   * Waits (bounded by CATCH_UP_MS) until the log is read as far as it reached now: a read of state other
   * hosts write (the agent tree, a subtree's review) then sees what they acknowledged before it was asked.
   */
  async catchUp(): Promise<void> {
    const target = await this.#log.lastSeq().catch(() => 0);
    const deadline = Date.now() + CATCH_UP_MS;
    while (this.#followedSeq < target && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  }

  stop(): void {
    this.#stop();
  }
}
