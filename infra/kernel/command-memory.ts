/**
 * @module
 * What the host remembers of the commands it ran, so that a command id is never run twice: the replies of
 * the most recent commands (a retry while the host lives gets the same bytes), the ids whose facts are in
 * the log (before this start or since), and those facts for the most recent commands, from which a domain
 * rebuilds the reply of a retry after a restart, or `in_doubt` tells the caller to re-read.
 */
import {
  ErrorCode,
  RuntimeError,
  toErrorInfo,
  type Command,
  type CommandDef,
  type StoredFact,
} from '../../schemas/index.ts';
import { encode } from '../transport/codec.ts';
import type { Logger } from 'pino';
import type { AnyDomain } from './domain.ts';

/** A reply and whether it may be retried (a retryable failure is not remembered as the answer). */
export type Outcome = { bytes: Uint8Array; retryable: boolean };

/**
 * The replies kept, at most about this many bytes in all (besides `repliesKept` of them): each is at most
 * `limits.maxPayloadBytes`, and 2,000 of those could hold gigabytes. An evicted reply's retry is rebuilt from
 * the command's facts (or answered `in_doubt`), as after a restart.
 */
export const REPLY_BYTES = 64 * 1024 * 1024;

/** How many recent commands keep their facts for rebuilding a reply after a restart. */
const CAUSED_KEPT = 4_096;
/** …and at most about this many characters of their data. */
const CAUSED_BYTES = 16 * 1024 * 1024;

/** Command ids are the client's: one agent's id never answers for another agent's command. */
export function commandKey(agentId: string, commandId: string): string {
  return `${agentId}\u0000${commandId}`;
}

export class CommandMemory {
  readonly #replies = new Map<string, Promise<Outcome>>();
  /** Sizes of the settled replies kept, and their sum (the replies' byte bound). */
  readonly #replySizes = new Map<string, number>();
  #replyBytes = 0;
  /** Keys of commands whose facts are in the log: never run twice. */
  readonly #handled = new Set<string>();
  /** The facts of the most recent commands, by key: a retry after a restart is answered from them. */
  readonly #caused = new Map<string, { facts: StoredFact[]; bytes: number }>();
  #causedBytes = 0;

  readonly #repliesKept: number;
  readonly #logger: Logger;

  constructor(repliesKept: number, logger: Logger) {
    this.#repliesKept = repliesKept;
    this.#logger = logger;
  }

  /** The reply of a command in flight or recently answered, if this host still has it. */
  reply(key: string): Promise<Outcome> | undefined {
    return this.#replies.get(key);
  }

  /** Whether the command's facts are in the log (its reply may be gone). */
  handled(key: string): boolean {
    return this.#handled.has(key);
  }

  /** Keeps the reply of a command now running; a retryable failure is forgotten once it settles. */
  remember(key: string, reply: Promise<Outcome>): void {
    this.#forget(key);
    this.#replies.set(key, reply);
    void reply.then((outcome) => {
      if (this.#replies.get(key) !== reply) return;
      // A retryable failure is not the answer forever: the same id may try again.
      if (outcome.retryable) return this.#forget(key);
      this.#replySizes.set(key, outcome.bytes.byteLength);
      this.#replyBytes += outcome.bytes.byteLength;
      while (this.#replyBytes > REPLY_BYTES && this.#replies.size > 1) this.#forget(this.#replies.keys().next().value!);
    });
    if (this.#replies.size > this.#repliesKept) this.#forget(this.#replies.keys().next().value!);
  }

  /** Bytes of the settled replies kept (for tests of the bound). */
  get replyBytes(): number {
    return this.#replyBytes;
  }

  #forget(key: string): void {
    this.#replies.delete(key);
    this.#replyBytes -= this.#replySizes.get(key) ?? 0;
    this.#replySizes.delete(key);
  }

  /** Notes a fact a command caused (stored live or read back from the log). */
  noteCaused(key: string, fact: StoredFact): void {
    this.#handled.add(key);
    const bytes = JSON.stringify(fact.data).length;
    const kept = this.#caused.get(key);
    if (kept) {
      kept.facts.push(fact);
      kept.bytes += bytes;
    } else this.#caused.set(key, { facts: [fact], bytes });
    this.#causedBytes += bytes;
    // Bounded by count and size (a write's diff can be large): the oldest go first; their retries get in_doubt.
    while (this.#caused.size > CAUSED_KEPT || (this.#causedBytes > CAUSED_BYTES && this.#caused.size > 1)) {
      const [oldest, entry] = this.#caused.entries().next().value!;
      this.#caused.delete(oldest);
      this.#causedBytes -= entry.bytes;
    }
  }

  /**
   * The reply to a command id whose facts are in the log but whose reply is gone (sent again after a
   * restart): rebuilt by the domain that knows those facts, or `in_doubt` naming them so the caller re-reads
   * before deciding. Never run twice.
   */
  async rebuild(command: Command, def: CommandDef, key: string, domains: readonly AnyDomain[]): Promise<Uint8Array> {
    const facts = this.#caused.get(key)?.facts ?? [];
    for (const domain of domains) {
      const rebuilt = facts.length > 0 ? await domain.retried?.(command, facts) : undefined;
      if (!rebuilt) continue;
      if ('error' in rebuilt) return encode({ ok: false, error: toErrorInfo(rebuilt.error) });
      const checked = def.reply.safeParse(rebuilt.reply);
      if (checked.success) return encode({ ok: true, ...(checked.data as object) });
      this.#logger.warn({ err: checked.error.message, event: def.type }, 'a rebuilt reply does not match its schema');
    }
    const seen = facts.map((f) => `${f.type} on ${f.subject}`);
    throw new RuntimeError(
      ErrorCode.InDoubt,
      `command id '${command.id}' was already handled (its facts are in the log) and its reply cannot be ` +
        `rebuilt${seen.length > 0 ? ` from ${seen.slice(0, 5).join(', ')}${seen.length > 5 ? ', …' : ''}` : ''}; ` +
        're-read the state it changed (review.list, file.read, agent.get…) before deciding, and send a new ' +
        'id to run it again.',
      { details: { facts: facts.slice(0, 20).map((f) => ({ type: f.type, subject: f.subject, seq: f.seq })) } },
    );
  }
}
