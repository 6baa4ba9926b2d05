/**
 * @module
 * An in-memory world for pure action-log planning tests: texts by hash, a
 * "disk" map and every log folded from the facts the plans emit, so a test
 * can drive record/accept/reject/undo exactly as the service does, without
 * I/O.
 */
import type { UnstampedFact } from '../../schemas/message.ts';
import type { ChangeSource } from '../../schemas/review.ts';
import { emptyActionLog, foldActionLog, type ActionLogContext } from '../../machines/review/action-log.ts';
import { listReview } from '../../machines/review/action-log-list.ts';
import { planAccept } from '../../machines/review/action-log-accept.ts';
import {
  planNeedsTexts,
  planRecord,
  type LogView,
  type Plan,
  type Selection,
} from '../../machines/review/action-log-plan.ts';
import { planReject } from '../../machines/review/action-log-reject.ts';
import { planUndoReject } from '../../machines/review/action-log-undo.ts';
import { sha256 } from './action-log-text.ts';

export class PlanWorld {
  texts: Record<string, string> = {};
  disk: Record<string, string | null> = {};
  logs = new Map<string, ActionLogContext>();
  facts: UnstampedFact[] = [];
  parents = new Map<string, string | null>();
  #n = 0;

  hashOf(content: string | null): string | null {
    if (content === null) return null;
    const h = sha256(content);
    this.texts[h] = content;
    return h;
  }

  view(id: string): LogView {
    const ctx = this.logs.get(id) ?? emptyActionLog();
    return { agentId: id, files: { ...ctx.files }, lastReject: ctx.lastReject };
  }

  ancestors(id: string): string[] {
    const out: string[] = [];
    for (let p = this.parents.get(id) ?? null; p !== null; p = this.parents.get(p) ?? null) out.push(p);
    return out;
  }

  /** Descendants, nearest first. */
  descendants(id: string): string[] {
    return [...this.parents.keys()]
      .filter((a) => this.ancestors(a).includes(id))
      .sort((a, b) => this.ancestors(a).indexOf(id) - this.ancestors(b).indexOf(id));
  }

  /** Declares an agent tree: `tree('root', 'mid', 'leaf')` makes a chain. */
  chain(...ids: string[]): void {
    ids.forEach((id, i) => this.parents.set(id, i === 0 ? (this.parents.get(id) ?? null) : ids[i - 1]!));
  }

  /** The agent changes `path` on disk to `after` and the change is recorded (`beforeMode`: the file's mode before). */
  write(
    agentId: string,
    path: string,
    after: string | null,
    source: ChangeSource = { kind: 'edit' },
    beforeMode?: number,
  ): Plan<null> {
    const before = this.disk[path] ?? null;
    this.disk[path] = after;
    const lineage = [agentId, ...this.ancestors(agentId)];
    const logs = lineage.map((id) => this.view(id));
    const others = [...this.logs.keys()]
      .filter((id) => !lineage.includes(id) && this.logs.get(id)!.files[path])
      .map((id) => this.view(id));
    const beforeHash = this.hashOf(before);
    // No contents at all when planNeedsTexts says none are read (as the action log loads them): a plan that
    // reads one anyway throws "not loaded", so every planning test also checks planNeedsTexts.
    const texts = planNeedsTexts({ path, beforeHash }, logs, others) ? this.texts : {};
    const plan = planRecord(
      {
        changeId: `chg-${++this.#n}`,
        agentId,
        lineage: this.ancestors(agentId),
        path,
        beforeHash,
        resultHash: this.hashOf(after),
        source,
        beforeMode,
      },
      logs,
      { texts, hash: sha256 },
      others,
    );
    this.apply(plan);
    return plan;
  }

  list(id: string, includeDescendants?: boolean) {
    return listReview(
      this.view(id),
      { texts: this.texts },
      includeDescendants === undefined ? {} : { includeDescendants },
    );
  }

  accept(id: string, sel: Selection = {}) {
    const plan = planAccept(
      this.view(id),
      this.descendants(id).map((d) => this.view(d)),
      sel,
      { texts: this.texts, hash: sha256 },
    );
    this.apply(plan);
    return plan;
  }

  related(id: string): LogView[] {
    return [...this.ancestors(id), ...this.descendants(id)].map((d) => this.view(d));
  }

  reject(id: string, sel: Selection = {}) {
    const related = {
      ancestors: this.ancestors(id).map((d) => this.view(d)),
      descendants: this.descendants(id).map((d) => this.view(d)),
    };
    const plan = planReject(this.view(id), related, sel, this.diskSnapshot(), { texts: this.texts, hash: sha256 });
    this.apply(plan);
    return plan;
  }

  undoReject(id: string) {
    const plan = planUndoReject(
      this.view(id),
      this.related(id),
      this.diskSnapshot(),
      { texts: this.texts, hash: sha256 },
      new Set(this.descendants(id)),
    );
    this.apply(plan);
    return plan;
  }

  diskSnapshot(): Record<string, string | null> {
    const out: Record<string, string | null> = {};
    for (const ctx of this.logs.values()) for (const p of Object.keys(ctx.files)) out[p] = this.disk[p] ?? null;
    for (const ctx of this.logs.values())
      for (const f of ctx.lastReject?.files ?? []) out[f.path] = this.disk[f.path] ?? null;
    return out;
  }

  apply<T>(plan: Plan<T>): void {
    Object.assign(this.texts, plan.blobs);
    for (const w of plan.writes) this.disk[w.path] = w.content;
    for (const f of plan.facts) {
      this.facts.push(f);
      const id = f.agentId!;
      this.logs.set(id, foldActionLog(this.logs.get(id) ?? emptyActionLog(), f));
    }
  }

  /** path → status of a log, for compact assertions. */
  summary(id: string): Record<string, string> {
    return Object.fromEntries(
      Object.entries(this.view(id).files).map(([p, e]) => [p, `${e.status} by ${e.agents.join(',')}`]),
    );
  }
}
