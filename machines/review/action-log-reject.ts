/**
 * @module
 * Pure planning of `review.reject` and `review.undo-reject` (see the rules in
 * `action-log-plan.ts`): reverse the chosen hunks with their context on the
 * disk content, report what no longer fits, and keep related logs in step.
 */
import { InvalidStateError } from '../../schemas/errors.ts';
import type { UnstampedFact } from '../../schemas/message.ts';
import type { FileUpdate, LogEntry, RejectUndo } from '../../schemas/review.ts';
import { utf8Length } from '../terminal/terminal-text.ts';
import { applyHunks, computeHunks } from './action-log-hunks.ts';
import { rebaseOutside } from './line-rebase.ts';
import {
  diskOf,
  fact,
  makeEntry,
  put,
  resolveSelection,
  sameChanges,
  text,
  type FileWrite,
  type LogView,
  type Plan,
  type PlanEnv,
  type RejectReply,
  type Selection,
  type UndoReply,
} from './action-log-plan.ts';

/**
 * review.reject: reverse the selected hunks on disk (`disk[path]`: null = absent).
 * `related`: the other logs that may track the same paths: ancestors (whose bases predate the
 * change) and descendants (for which the reject is partly an outside edit: a whole-file deletion
 * or re-creation ends their tracking, reverted hunks are reverted in their base too where they fit).
 */
export function planReject(
  log: LogView,
  related: { ancestors: LogView[]; descendants: LogView[] },
  sel: Selection,
  disk: Record<string, string | null>,
  env: PlanEnv,
): Plan<RejectReply> {
  const all = sel.paths === undefined && sel.hunkIds === undefined;
  const blobs: Record<string, string> = {};
  const writes: FileWrite[] = [];
  const own: FileUpdate[] = [];
  const rel = new Map<string, FileUpdate[]>();
  const undo: RejectUndo = { files: [], entries: {} };
  const reply: RejectReply = { restored: [], deleted: [], kept: [], conflicts: [], undoAvailable: false };
  const remember = (logId: string, path: string, prev: LogEntry | null) => {
    (undo.entries[logId] ??= {})[path] = prev;
  };
  /** `next` gives a related log's new entry (undefined: unchanged). */
  const followRelated = (path: string, next: (entry: LogEntry, descendant: boolean) => LogEntry | null | undefined) => {
    const all_ = [
      ...related.ancestors.map((r) => [r, false] as const),
      ...related.descendants.map((r) => [r, true] as const),
    ];
    for (const [r, descendant] of all_) {
      const re = r.files[path];
      if (!re) continue;
      const entry = next(re, descendant);
      if (entry === undefined) continue;
      remember(r.agentId, path, re);
      const list = rel.get(r.agentId) ?? [];
      list.push({ path, entry });
      rel.set(r.agentId, list);
    }
  };
  /**
   * An ancestor whose log no longer tracks `path` (the change it listed was undone by this log's own, which the
   * reject now reverts: its line comes back) gets the reject's write as a change of this log's: never on disk
   * unlisted. `from`/`to`: hashes of the disk before and after.
   */
  const unlisted = (path: string, from: string | null, to: string | null) => {
    for (const a of related.ancestors) {
      if (a.files[path]) continue;
      const entry = makeEntry(from, to, [log.agentId]);
      if (!entry) continue;
      remember(a.agentId, path, null);
      const list = rel.get(a.agentId) ?? [];
      list.push({ path, entry });
      rel.set(a.agentId, list);
    }
  };
  for (const t of resolveSelection(log, sel, env)) {
    const { path, entry: e } = t;
    const d = diskOf(disk, path);
    const ids = t.selected.map((h) => h.id);
    if (e.status === 'created') {
      remember(log.agentId, path, e);
      own.push({ path, entry: null });
      if (d !== null && d !== text(env, e.currentHash)) {
        reply.kept.push({
          path,
          reason: `'${path}' changed on disk after the agent created it, so it was kept to avoid losing those changes`,
        });
        continue;
      }
      if (d !== null) writes.push({ path, content: null, from: d });
      reply.deleted.push(path);
      undo.files.push({ path, beforeHash: e.currentHash, afterHash: null, createdDeleted: true, left: null });
      followRelated(path, (re, desc) => (desc ? null : makeEntry(re.baseHash, null, re.agents)));
      if (d !== null) unlisted(path, put(blobs, env, d), null);
    } else if (e.status === 'deleted') {
      if (d !== null) {
        reply.conflicts.push({ path, hunkIds: ids, reason: `'${path}' exists on disk again, so it was left alone` });
        continue;
      }
      remember(log.agentId, path, e);
      own.push({ path, entry: null });
      writes.push({ path, content: text(env, e.baseHash), from: null });
      reply.restored.push(path);
      undo.files.push({ path, beforeHash: null, afterHash: e.baseHash, createdDeleted: false, left: null });
      followRelated(path, (re, desc) => (desc ? null : makeEntry(re.baseHash, e.baseHash, re.agents)));
      unlisted(path, null, e.baseHash);
    } else {
      if (d === null) {
        reply.conflicts.push({ path, hunkIds: ids, reason: `'${path}' was deleted on disk, so it was left alone` });
        continue;
      }
      const r = applyHunks(d, t.selected, 'reverse');
      if (r.failed.length > 0) {
        reply.conflicts.push({
          path,
          hunkIds: r.failed.map((h) => h.id),
          reason: `the text around these hunks of '${path}' changed on disk, so they were left alone`,
        });
      }
      if (r.applied.length === 0) continue;
      const model = applyHunks(text(env, e.currentHash)!, r.applied, 'reverse').text;
      const ownEntry = makeEntry(e.baseHash, put(blobs, env, model), e.agents);
      remember(log.agentId, path, e);
      own.push({ path, entry: ownEntry });
      writes.push({ path, content: r.text, from: d, ...(model === r.text ? {} : { model }) });
      reply.restored.push(path);
      undo.files.push({
        path,
        beforeHash: put(blobs, env, d),
        afterHash: put(blobs, env, r.text),
        createdDeleted: false,
        left: ownEntry?.currentHash ?? null,
      });
      unlisted(path, put(blobs, env, d), put(blobs, env, r.text));
      followRelated(path, (re, desc) => {
        // Everything since this log's base is reverted: so are the descendants' changes (made after it).
        if (desc && ownEntry === null) return null;
        const cur = text(env, re.currentHash);
        if (cur === null) return undefined;
        const current = put(blobs, env, applyHunks(cur, r.applied, 'reverse').text);
        // Best effort: a descendant base that took in outside edits loses the reverted ones too.
        const baseText = desc && re.baseHash !== e.baseHash ? text(env, re.baseHash) : null;
        let base = re.baseHash;
        if (baseText !== null) {
          const shifted = applyHunks(baseText, r.applied, 'reverse').text;
          const curText = text(env, current)!;
          // Keep the shifted base only if the descendant's own changes are what they were.
          if (sameChanges(path, env, [re.baseHash, re.currentHash], [shifted, curText]) || shifted === curText)
            base = put(blobs, env, shifted);
        }
        if (current === re.currentHash && base === re.baseHash) return undefined;
        return makeEntry(base, current, re.agents);
      });
    }
  }
  // A path only descendants still track is one this log's subtree left where this log's base has it (its
  // own entry went away when a descendant changed it back): a reject-all has nothing to write there, but
  // the descendants' entries describe changes that are undone from this log's view, so they are cleared
  // and remembered for undo-reject. No disk read needed: nothing is written.
  let entriesOnly = false;
  if (all) {
    for (const d of related.descendants) {
      for (const [path, de] of Object.entries(d.files)) {
        if (log.files[path]) continue;
        remember(d.agentId, path, de);
        const list = rel.get(d.agentId) ?? [];
        list.push({ path, entry: null });
        rel.set(d.agentId, list);
        entriesOnly = true;
      }
    }
  }
  // What each log holds after the reject, for the undo to tell a change recorded since in any of them.
  const lefts: Record<string, Record<string, string | null>> = {};
  for (const [logId, list] of [[log.agentId, own] as const, ...rel]) {
    for (const u of list) (lefts[logId] ??= {})[u.path] = u.entry?.currentHash ?? null;
  }
  if (Object.keys(lefts).length > 0) undo.lefts = lefts;
  const keepUndo = all && (undo.files.length > 0 || entriesOnly);
  reply.undoAvailable = keepUndo || log.lastReject != null;
  const facts: UnstampedFact[] = [
    fact('review.rejected', log.agentId, {
      agentId: log.agentId,
      files: own,
      restored: reply.restored,
      deleted: reply.deleted,
      kept: reply.kept,
      conflicts: reply.conflicts,
      undo: keepUndo ? undo : null,
      ...keptContent(blobs),
    }),
  ];
  for (const [id, files] of rel)
    facts.push(fact('action-log.files.updated', id, { agentId: id, by: log.agentId, cause: 'reject', files }));
  return { writes, blobs, facts, reply };
}

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
  /** How an undo re-applied a file's hunks on disk: those it `applied`, those it did not, and what it `written`. */
  type Partial = { applied: Hunks; failed: Hunks; written: string };
  /**
   * A log's entry after an undo that re-applied only some hunks: the log's own content now (its current, or its
   * base when the reject cleared it) with the applied hunks, else its content before the reject without the hunks
   * not re-applied (a descendant whose base already holds an ancestor's line), so a line on disk since (a person's,
   * a payload another log recorded) stays out of it; where neither fits, the entry as it was before the reject
   * (the disk would charge every line written since to the log: a person's, its ancestor's newer ones).
   */
  const partialEntry = (prev: LogEntry, cur: LogEntry | undefined, p: Partial) => {
    const agents = [...new Set([...(cur?.agents ?? []), ...prev.agents])];
    const now = text(env, cur ? cur.currentHash : prev.baseHash);
    const r = now === null ? undefined : applyHunks(now, p.applied, 'forward');
    if (r && r.failed.length === 0)
      return makeEntry(cur ? cur.baseHash : prev.baseHash, put(blobs, env, r.text), agents);
    const before = text(env, prev.currentHash);
    const back = before === null ? undefined : applyHunks(before, p.failed, 'reverse');
    if (back && back.failed.length === 0) return makeEntry(prev.baseHash, put(blobs, env, back.text), prev.agents);
    // The entry as it was: perhaps stale (a line since overwritten), never the disk's lines of others.
    return prev;
  };
  /** Each log's entry back as it was before the reject (`partial`: only some hunks were re-applied). */
  const restoreEntries = (path: string, partial?: Partial) => {
    for (const [logId, byPath] of Object.entries(last.entries)) {
      const view = logs.get(logId);
      if (!(path in byPath) || !view) continue;
      const prev = byPath[path] ?? null;
      const entry = prev && partial ? partialEntry(prev, view.files[path], partial) : prev;
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
    const { applied: hunks, written } = p;
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
        if (prev && !asBefore) entry = partialEntry(prev, cur, p);
        if (logId === log.agentId) model = asBefore && prev ? text(env, prev.currentHash) : written;
      } else if (logId !== log.agentId && descendants.has(logId) && (cur || changed)) continue;
      else if (cur) {
        const now = text(env, cur.currentHash);
        const r = now === null ? undefined : applyHunks(now, hunks, 'forward');
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
    if (f.createdDeleted) {
      reply.notRestorable.push({
        path: f.path,
        reason:
          `'${f.path}' was created by the agent and deleted by the reject; undo does not ` +
          `re-create files (its content is blob ${f.beforeHash ?? 'none'} in the store)`,
      });
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
    const hunks = computeHunks(f.path, text(env, f.afterHash), text(env, f.beforeHash));
    const r = applyHunks(d, hunks, 'forward');
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
      const model = reapplySince(f, d, { applied: r.applied, failed: r.failed, written: r.text });
      writes.push({ path: f.path, content: r.text, from: d, ...(model === r.text ? {} : { model }) });
      reply.reapplied.push(f.path);
      continue;
    }
    // The acting log's entry as it was before the reject when restored as it was (restoreEntries), else the disk.
    const prev = last.entries[log.agentId]?.[f.path];
    const model = asBefore && prev ? text(env, prev.currentHash) : r.text;
    writes.push({ path: f.path, content: r.text, from: d, ...(model === r.text ? {} : { model }) });
    reply.reapplied.push(f.path);
    restoreEntries(f.path, asBefore ? undefined : { applied: r.applied, failed: r.failed, written: r.text });
  }
  // Entries the reject cleared without writing (paths only descendants tracked): back as they were,
  // unless the log tracks the path again since.
  const written = new Set(last.files.map((f) => f.path));
  for (const [logId, byPath] of Object.entries(last.entries)) {
    const l = logs.get(logId);
    if (logId === log.agentId || !l) continue;
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

/** `contentBytes` of a reject or its undo: the new contents its plan stores whole to undo it (charged with it). */
function keptContent(blobs: Record<string, string>): { contentBytes?: number } {
  let contentBytes = 0;
  for (const content of Object.values(blobs)) contentBytes += utf8Length(content);
  return contentBytes > 0 ? { contentBytes } : {};
}
