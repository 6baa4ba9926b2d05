/**
 * @module
 * `ActionLogBook`: a host's folded view of every action log (the same fold the aggregate uses) and of the agent
 * tree their records name, and the loading of a log's texts from the blob store. `ActionLogService`
 * (`action-log.ts`) plans and runs changes and reviews against it.
 */
import type { LogEntry } from '../../schemas/review.ts';
import {
  emptyActionLog,
  foldActionLog,
  type ActionLogContext,
  type ActionLogFact,
} from '../../machines/review/action-log.ts';
import type { LogView } from '../../machines/review/action-log-plan.ts';
import type { BlobStore } from './blob-store.ts';

export class ActionLogBook {
  #logs = new Map<string, ActionLogContext>();
  #parents = new Map<string, string | null>();

  /** Folds one fact into the log it belongs to (a record's `logAgentId`, else its `agentId`). */
  fold(fact: ActionLogFact & { agentId?: string }): void {
    const d = fact.data as { logAgentId?: string; agentId?: string; lineage?: string[] };
    const logId = fact.type === 'action-log.change.recorded' ? d.logAgentId : d.agentId;
    if (!logId) return;
    if (fact.type === 'action-log.change.recorded' && d.agentId && d.lineage) this.learnLineage(d.agentId, d.lineage);
    this.#logs.set(logId, foldActionLog(this.#logs.get(logId) ?? emptyActionLog(), fact));
  }

  /** A copy of one log's folded state (empty when the agent has no changes). */
  state(agentId: string): ActionLogContext {
    return structuredClone(this.#logs.get(agentId) ?? { ...emptyActionLog(), agentId });
  }

  /** One log as the planners read it: its files (a copy the caller may narrow) and its last reject. */
  view(agentId: string): LogView {
    const ctx = this.#logs.get(agentId);
    return { agentId, files: { ...(ctx?.files ?? {}) }, lastReject: ctx?.lastReject ?? null };
  }

  /** The logs that hold an entry for `path`, but for those of `except` (a change's own lineage). */
  holding(path: string, except: readonly string[]): string[] {
    return [...this.#logs.keys()].filter((id) => !except.includes(id) && this.#logs.get(id)!.files[path] !== undefined);
  }

  /** Learns `agentId`'s ancestors, nearest first; a root stays a root unless a later record names its parent. */
  learnLineage(agentId: string, ancestors: readonly string[]): void {
    const chain = [agentId, ...ancestors];
    for (let i = 0; i < chain.length; i++) {
      const parent = chain[i + 1] ?? null;
      if (parent !== null || !this.#parents.has(chain[i]!)) this.#parents.set(chain[i]!, parent);
    }
  }

  /** Ancestors, nearest first (a cycle in what was learned ends the walk). */
  ancestors(agentId: string): string[] {
    const out: string[] = [];
    let p = this.#parents.get(agentId) ?? null;
    while (p !== null && !out.includes(p)) {
      out.push(p);
      p = this.#parents.get(p) ?? null;
    }
    return out;
  }

  /** Descendants, nearest first. */
  descendants(agentId: string): string[] {
    return [...this.#parents.keys()]
      .map((id) => ({ id, depth: this.ancestors(id).indexOf(agentId) }))
      .filter((d) => d.id !== agentId && d.depth >= 0)
      .sort((a, b) => a.depth - b.depth)
      .map((d) => d.id);
  }
}

/** Loads every base/current text of the given logs' entries for `paths`; a missing blob is a clear error. */
export async function loadTexts(
  blobs: BlobStore,
  views: readonly LogView[],
  paths: readonly string[],
): Promise<Record<string, string>> {
  const hashes = new Map<string, string>();
  for (const v of views) {
    for (const p of paths) {
      const e: LogEntry | undefined = v.files[p];
      if (!e) continue;
      if (e.baseHash) hashes.set(e.baseHash, `base of '${p}' in the action log of '${v.agentId}'`);
      if (e.currentHash) hashes.set(e.currentHash, `agent content of '${p}' in the action log of '${v.agentId}'`);
    }
  }
  return loadHashes(blobs, hashes);
}

/** Loads each hash's text; `hashes` maps a hash to what it is, for the error when the store lacks it. */
export async function loadHashes(blobs: BlobStore, hashes: Map<string, string>): Promise<Record<string, string>> {
  const texts: Record<string, string> = {};
  for (const [hash, what] of hashes) texts[hash] = await blobs.require(hash, what);
  return texts;
}
