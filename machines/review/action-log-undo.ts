/**
 * @module
 * Pure planning of `review.undo-reject` (see the rules in `action-log-plan.ts`): re-apply the last reject-all of
 * a log on the disk as it is now, and give each log it touched its entry back, onto a change recorded since where
 * there is one, never with lines others wrote since.
 */
import { InvalidStateError } from '../../schemas/errors.ts';
import type { UnstampedFact } from '../../schemas/message.ts';
import type { FileUpdate, LogEntry } from '../../schemas/review.ts';
import { applyHunks, computeHunks } from './action-log-hunks.ts';
import { keptContent } from './action-log-reject.ts';
import { rebaseOutside } from './line-rebase.ts';
import {
  diskOf,
  fact,
  makeEntry,
  put,
  text,
  type FileWrite,
  type LogView,
  type Plan,
  type PlanEnv,
  type UndoReply,
} from './action-log-plan.ts';

/**
 * review.undo-reject: re-apply the last reject-all of `log` (`related`: the other logs it touched, current state;
 * `descendants`: which of them are its descendants' logs).
 */
export function planUndoReject(
  log: LogView,
  related: LogView[],
  disk: Record<string, string | null>,
  env: PlanEnv,
  descendants: ReadonlySet<string> = new Set(),
): Plan<UndoReply> {
  const last = log.lastReject;
  if (!last) {
    throw new InvalidStateError(
      `Agent '${log.agentId}' has no reject-all to undo; review.undo-reject ` +
        `re-applies only the last review.reject sent without paths or hunkIds.`,
    );
  }
  const blobs: Record<string, string> = {};
  const writes: FileWrite[] = [];
  const reply: UndoReply = { reapplied: [], conflicts: [], notRestorable: [] };
  const updates = new Map<string, FileUpdate[]>();
  const logs = new Map([log, ...related].map((l) => [l.agentId, l]));
  type Hunks = ReturnType<typeof computeHunks>;
  /**
   * How an undo re-applied a file's hunks on disk: those it `applied`, those it did not, and what it `written`;
   * `sides`: the texts the hunks go from and to (the reject's after and before).
   */
  type Partial = { applied: Hunks; failed: Hunks; written: string; sides: { after: string; before: string } };
  /**
   * A log's entry after an undo that re-applied only some hunks: the log's own content now (its current, or its
   * base when the reject cleared it) with the applied hunks, else its content before the reject without the hunks
   * not re-applied (a descendant whose base already holds an ancestor's line), so a line on disk since (a person's,
   * a payload another log recorded) stays out of it; where neither fits, the entry as it was before the reject
   * (the disk would charge every line written since to the log: a person's, its ancestor's newer ones).
   */
  const partialEntry = (prev: LogEntry, cur: LogEntry | undefined, p: Partial, logId: string) => {
    const agents = [...new Set([...(cur?.agents ?? []), ...prev.agents])];
    const base = cur ? cur.baseHash : prev.baseHash;
    // A descendant's candidate must change no line its entry before the reject did not: hunks mixing an ancestor's
    // lines with its own would charge those to it. An ancestor's review holds its descendants' lines and its own,
    // so a line of its own that a hunk not re-applied had replaced comes back into it.
    const fits = (b: string | null, t: string) => !descendants.has(logId) || changesWithin(env, [b, t], prev);
    const now = text(env, cur ? cur.currentHash : prev.baseHash);
    const r = now === null ? undefined : applyHunks(now, p.applied, 'forward', p.sides.after);
    if (r && r.failed.length === 0 && fits(base, r.text)) return makeEntry(base, put(blobs, env, r.text), agents);
    const before = text(env, prev.currentHash);
    const back = before === null ? undefined : applyHunks(before, p.failed, 'reverse', p.sides.before);
    if (back && back.failed.length === 0 && fits(prev.baseHash, back.text))
      return makeEntry(prev.baseHash, put(blobs, env, back.text), prev.agents);
    // The entry as it was: perhaps stale (a line since overwritten), never the disk's lines of others.
    return prev;
  };
  /** Each log's entry back as it was before the reject (`partial`: only some hunks were re-applied). */
  const restoreEntries = (path: string, partial?: Partial) => {
    for (const [logId, byPath] of Object.entries(last.entries)) {
      const view = logs.get(logId);
      if (!(path in byPath) || !view) continue;
      const prev = byPath[path] ?? null;
      const entry = prev && partial ? partialEntry(prev, view.files[path], partial, logId) : prev;
      const list = updates.get(logId) ?? [];
      list.push({ path, entry });
      updates.set(logId, list);
    }
  };
  /**
   * Re-applies the hunks the undo applied on disk onto each log's entry for `f.path` that changed since the
   * reject, as it is now (its base as folded since kept, so outside edits stay out of it), the disk's `written`
   * where they do not fit; a log whose entry did not change since gets its old one back (`partialEntry` when not
   * all hunks were re-applied). A descendant's entry recorded or removed since is left as it is: its base may lack
   * what the reject reverted of its ancestor's, and the hunks would charge that to it (the ancestor's own entry
   * shows them). Returns the acting log's new current (what running commands start from).
   */
  const reapplySince = (f: (typeof last.files)[number], from: string, p: Partial): string | null => {
    const { applied: hunks, written, sides } = p;
    const asBefore = p.failed.length === 0;
    const path = f.path;
    let model: string | null = written;
    for (const [logId, byPath] of Object.entries(last.entries)) {
      const view = logs.get(logId);
      if (!(path in byPath) || !view) continue;
      const prev = byPath[path] ?? null;
      const cur = view.files[path];
      let entry = prev;
      const changed = changedSince(f, logId);
      if (changed === false) {
        // Unchanged since the reject: back as it was, as when no log changed.
        if (prev && !asBefore) entry = partialEntry(prev, cur, p, logId);
        if (logId === log.agentId) model = asBefore && prev ? text(env, prev.currentHash) : written;
      } else if (logId !== log.agentId && descendants.has(logId) && (cur || changed)) continue;
      else if (cur) {
        const now = text(env, cur.currentHash);
        const r = now === null ? undefined : applyHunks(now, hunks, 'forward', sides.after);
        // Else the undo's change on disk placed by line position (a person's line beside it, in the hunk's context,
        // which a restored entry's content lacks), else the disk.
        const placed =
          r && r.failed.length === 0 ? r.text : now === null ? undefined : rebaseOutside(now, from, written);
        const current = placed ?? written;
        const agents = [...new Set([...cur.agents, ...(prev?.agents ?? [])])];
        entry = makeEntry(cur.baseHash, put(blobs, env, current), agents);
        if (logId === log.agentId) model = current;
      } else if (prev && changed) {
        // The entry went since (an accept took what the reject left in conflict): the undo's own change alone,
        // from the disk it found, not the old entry, which would list the accepted lines again.
        entry = makeEntry(put(blobs, env, from), put(blobs, env, written), prev.agents);
        if (logId === log.agentId) model = written;
      } else if (logId === log.agentId) model = prev ? text(env, prev.currentHash) : written;
      const list = updates.get(logId) ?? [];
      list.push({ path, entry });
      updates.set(logId, list);
    }
    return model;
  };
  /** Whether `logId`'s entry for `f.path` changed since the reject (undefined: not known, a fact without it). */
  const changedSince = (f: (typeof last.files)[number], logId: string): boolean | undefined => {
    const left = last.lefts ? last.lefts[logId]?.[f.path] : logId === log.agentId ? f.left : undefined;
    if (left === undefined) return undefined;
    return (logs.get(logId)?.files[f.path]?.currentHash ?? null) !== left;
  };
  for (const f of last.files) {
    const d = diskOf(disk, f.path);
    if (f.createdDeleted && f.beforeHash !== null && f.mode === undefined) {
      // Stored before undo re-created files: such a reject stored the agent's content even for a file a person had
      // deleted before it, so which was which is not known.
      reply.notRestorable.push({
        path: f.path,
        reason:
          `'${f.path}' was created by the agent and deleted by a reject stored before undo re-created files; ` +
          `its content is blob ${f.beforeHash} in the store`,
      });
      continue;
    }
    if (f.createdDeleted) {
      // A created file the reject deleted: created again with the agent's content and its mode where the path is
      // still free and no log recorded it since; its entries back as they were. One already gone before the reject
      // (beforeHash null): only its entries come back.
      const since = Object.entries(last.entries).some(([id, byPath]) => f.path in byPath && changedSince(f, id));
      if (d !== null || since) {
        reply.conflicts.push({
          path: f.path,
          hunkIds: [],
          reason:
            d !== null
              ? `'${f.path}' exists on disk again since the reject deleted it, so it was left alone`
              : `'${f.path}' was recorded again since the reject deleted it, so it was left alone`,
        });
        continue;
      }
      if (f.beforeHash !== null) {
        writes.push({
          path: f.path,
          content: text(env, f.beforeHash),
          from: null,
          ...(f.mode === undefined ? {} : { mode: f.mode }),
        });
      }
      reply.reapplied.push(f.path);
      restoreEntries(f.path, undefined);
      continue;
    }
    if (f.beforeHash === null) {
      if (d === null || d !== text(env, f.afterHash)) {
        reply.conflicts.push({
          path: f.path,
          hunkIds: [],
          reason: `'${f.path}' changed on disk after the reject restored it, so it was left alone`,
        });
        continue;
      }
      writes.push({ path: f.path, content: null, from: d });
      reply.reapplied.push(f.path);
      restoreEntries(f.path, undefined);
      continue;
    }
    if (d === null) {
      reply.conflicts.push({
        path: f.path,
        hunkIds: [],
        reason: `'${f.path}' was deleted on disk after the reject, so it was left alone`,
      });
      continue;
    }
    const sides = { after: text(env, f.afterHash) ?? '', before: text(env, f.beforeHash) ?? '' };
    const hunks = computeHunks(f.path, sides.after, sides.before);
    const r = applyHunks(d, hunks, 'forward', sides.after);
    if (r.failed.length > 0) {
      reply.conflicts.push({
        path: f.path,
        hunkIds: r.failed.map((h) => h.id),
        reason: `the text around these hunks of '${f.path}' changed on disk after the reject, so they were left alone`,
      });
    }
    if (r.applied.length === 0) continue;
    // A change recorded since the reject in any log it touched (an agent rejecting its own work, recording a payload,
    // then undoing; or its parent or a sibling recording one): restoring the entries as they were before the reject
    // dropped it from review while it stayed on disk. Each changed log's entry as it is now takes the re-applied
    // hunks instead (`since`).
    const asBefore = r.failed.length === 0;
    const since = Object.entries(last.entries).some(([id, byPath]) => f.path in byPath && changedSince(f, id));
    if (since) {
      const model = reapplySince(f, d, { applied: r.applied, failed: r.failed, written: r.text, sides });
      writes.push({ path: f.path, content: r.text, from: d, ...(model === r.text ? {} : { model }) });
      reply.reapplied.push(f.path);
      continue;
    }
    // The acting log's entry as it was before the reject when restored as it was (restoreEntries), else the disk.
    const prev = last.entries[log.agentId]?.[f.path];
    const model = asBefore && prev ? text(env, prev.currentHash) : r.text;
    writes.push({ path: f.path, content: r.text, from: d, ...(model === r.text ? {} : { model }) });
    reply.reapplied.push(f.path);
    restoreEntries(f.path, asBefore ? undefined : { applied: r.applied, failed: r.failed, written: r.text, sides });
  }
  // Entries the reject cleared without writing (paths only descendants tracked; a created file it kept, which a
  // person had changed): back as they were, unless the log tracks the path again since.
  const written = new Set(last.files.map((f) => f.path));
  for (const [logId, byPath] of Object.entries(last.entries)) {
    const l = logs.get(logId);
    if (!l) continue;
    for (const [path, prev] of Object.entries(byPath)) {
      if (written.has(path) || prev === null || l.files[path]) continue;
      const list = updates.get(logId) ?? [];
      list.push({ path, entry: prev });
      updates.set(logId, list);
    }
  }
  const facts: UnstampedFact[] = [
    fact('review.reject-undone', log.agentId, {
      agentId: log.agentId,
      files: updates.get(log.agentId) ?? [],
      ...reply,
      ...keptContent(blobs),
    }),
  ];
  for (const [id, files] of updates) {
    if (id !== log.agentId)
      facts.push(fact('action-log.files.updated', id, { agentId: id, by: log.agentId, cause: 'undo-reject', files }));
  }
  return { writes, blobs, facts, reply };
}

/**
 * Whether every line the change `b` (base hash, text) adds or removes is one `entry`'s own change adds or
 * removes (as many times): an entry that would take others' lines is not given them.
 */
function changesWithin(env: Pick<PlanEnv, 'texts'>, b: [string | null, string], entry: LogEntry): boolean {
  const changed = (base: string | null, cur: string | null) =>
    computeHunks('', base, cur).flatMap((h) => h.lines.filter((l) => l.startsWith('+') || l.startsWith('-')));
  const budget = new Map<string, number>();
  for (const l of changed(text(env, entry.baseHash), text(env, entry.currentHash))) {
    budget.set(l, (budget.get(l) ?? 0) + 1);
  }
  for (const l of changed(text(env, b[0]), b[1])) {
    const n = budget.get(l) ?? 0;
    if (n === 0) return false;
    budget.set(l, n - 1);
  }
  return true;
}
