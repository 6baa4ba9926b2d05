/**
 * @module
 * The host's side of `limits.maxRecordedBytesPerAgent` (machines/agent/recorded-bytes.ts): every fact stored
 * in the events stream, live, replayed or another host's, is charged by the bytes its log holds it in; a
 * command from an agent whose subtree (or an ancestor's) has reached the bound is refused, unless it only
 * finishes, reads or stops work. Terminal output is not charged: its stream has its own retention. A shell
 * command's new file contents, which the review keeps as blobs, are charged with the fact recording them, and
 * so is the memory a new agent or edit keeps for the host's life (`LASTING_STATE_BYTES`).
 */
import {
  eventsByType,
  LimitExceededError,
  parseEventSubject,
  recordedBytesOf,
  type StoredFact,
} from '../../schemas/index.ts';
import {
  ALLOWED_OVER_BUDGET,
  LASTING_STATE_BYTES,
  OVER_BUDGET_PAYLOAD,
  overBudgetMessage,
  RecordedBytes,
} from '../../machines/agent/recorded-bytes.ts';

export class RecordedBudget {
  readonly bytes: RecordedBytes;

  /** `agentSubject`: an agent's aggregate subject, `skein.evt.<parent, or itself for a root>.agent.<id>`. */
  constructor(limit: number, agentSubject: (agentId: string) => string | undefined) {
    // An agent's parent never changes: read from its subject once (a fact is charged up its whole lineage).
    const parents = new Map<string, string | null>();
    this.bytes = new RecordedBytes(limit, (agentId) => {
      const known = parents.get(agentId);
      if (known !== undefined) return known ?? undefined;
      const subject = agentSubject(agentId);
      if (subject === undefined) return undefined;
      const parent = parseEventSubject(subject)?.agentId;
      parents.set(agentId, parent === undefined || parent === agentId ? null : parent);
      return parent === agentId ? undefined : parent;
    });
  }

  /**
   * Charges a fact of the events stream to the agent it names, or the one its event says (`EventDef.chargedTo`:
   * the command that recorded shell changes for an ancestor), and that agent's ancestors: its bytes in the log,
   * and what its effect keeps outside it (`EventDef.keeps`: file contents a shell command left for the review).
   */
  charge(stored: StoredFact): void {
    // Every log notes the bytes; a fact without them (none today) is measured as the JSON it would be stored as.
    const own = recordedBytesOf(stored) ?? Buffer.byteLength(JSON.stringify(stored));
    const def = eventsByType.get(stored.type);
    const kept = def?.keeps?.(stored.data as never) ?? 0;
    const payer = def?.chargedTo?.(stored.data as never) ?? stored.agentId;
    this.bytes.charge(payer, own + kept + (LASTING_STATE_BYTES[stored.type] ?? 0));
  }

  /**
   * Throws `limit_exceeded` when `agentId`'s subtree or an ancestor's is at its bound, unless `type` only
   * finishes, reads or stops work and its payload (`bytes`) is small: a 1 MiB result from each of a tree's
   * agents would otherwise pass the bound many times over.
   */
  admit(agentId: string, type: string, bytes: number): void {
    const over = this.bytes.over(agentId);
    if (!over || (ALLOWED_OVER_BUDGET.has(type) && bytes <= OVER_BUDGET_PAYLOAD)) return;
    throw new LimitExceededError(overBudgetMessage(agentId, type, over));
  }
}
