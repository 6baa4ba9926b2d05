/**
 * @module
 * Pure planning of `review.reject` (see the rules in `action-log-plan.ts`): reverse the chosen hunks with their
 * context on the disk content, report what no longer fits, keep related logs in step, and keep what an undo needs
 * (`action-log-undo.ts`).
 */
import type { UnstampedFact } from '../../schemas/message.ts';
import type { FileUpdate, Hunk, LogEntry, RejectUndo } from '../../schemas/review.ts';
import { utf8Length } from '../terminal/terminal-text.ts';
import { applyHunks, computeHunks } from './action-log-hunks.ts';
import {
  diskOf,
  fact,
  makeEntry,
  put,
  resolveSelection,
  narrows,
  sameChanges,
  text,
  type FileWrite,
  type LogView,
  type Plan,
  type PlanEnv,
  type RejectReply,
  type Selection,
} from './action-log-plan.ts';

/** A deleted created file's mode for its undo when the reject was given none (`PlanEnv.modes`). */
const DEFAULT_MODE = 0o644;

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
      // What the undo creates again, with the file's mode: the agent's content, unless it was gone before the reject.
      if (d === null) undo.files.push({ path, beforeHash: null, afterHash: null, createdDeleted: true, left: null });
      else {
        const mode = env.modes?.[path] ?? DEFAULT_MODE;
        undo.files.push({ path, beforeHash: e.currentHash, afterHash: null, createdDeleted: true, left: null, mode });
      }
      followRelated(path, (re, desc) => (desc ? null : makeEntry(re.baseHash, null, re.agents)));
      if (d !== null) unlisted(path, put(blobs, env, d), null);
    } else if (e.status === 'deleted') {
      if (d !== null) {
        reply.conflicts.push({ path, hunkIds: ids, reason: `'${path}' exists on disk again, so it was left alone` });
        continue;
      }
      remember(log.agentId, path, e);
      own.push({ path, entry: null });
      // With the mode it had when deleted (`LogEntry.mode`; the process's default when the log did not keep one).
      writes.push({
        path,
        content: text(env, e.baseHash),
        from: null,
        ...(e.mode === undefined ? {} : { mode: e.mode }),
      });
      reply.restored.push(path);
      undo.files.push({ path, beforeHash: null, afterHash: e.baseHash, createdDeleted: false, left: null });
      followRelated(path, (re, desc) => (desc ? null : makeEntry(re.baseHash, e.baseHash, re.agents)));
      unlisted(path, null, e.baseHash);
    } else {
      if (d === null) {
        reply.conflicts.push({ path, hunkIds: ids, reason: `'${path}' was deleted on disk, so it was left alone` });
        continue;
      }
      const ownText = text(env, e.currentHash)!;
      const r = applyHunks(d, t.selected, 'reverse', ownText);
      if (r.failed.length > 0) {
        reply.conflicts.push({
          path,
          hunkIds: r.failed.map((h) => h.id),
          reason: `the text around these hunks of '${path}' changed on disk, so they were left alone`,
        });
      }
      if (r.applied.length === 0) continue;
      const model = applyHunks(ownText, r.applied, 'reverse', ownText).text;
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
        // A descendant's entry that had not followed every change (its current is not the disk: a line written
        // right beside its own stays out of it) cannot take the hunks by their context: it is brought to the
        // disk the reject left, with only its own hunks that the reject left as they were still listed.
        if (desc && cur !== d) {
          const after = put(blobs, env, r.text);
          const synced = survivingBase(path, env, blobs, re, after, r.applied);
          // When the reject took back none of its own lines, its review is unchanged: it is not told.
          if (synced?.tookBack) return makeEntry(synced.base, after, re.agents);
        }
        const current = put(blobs, env, applyHunks(cur, r.applied, 'reverse', ownText).text);
        // Best effort: a descendant base that took in outside edits loses the reverted ones too.
        const baseText = desc && re.baseHash !== e.baseHash ? text(env, re.baseHash) : null;
        let base = re.baseHash;
        // A reject that took back only lines of the descendant's own change leaves its base: moved by the hunks,
        // a base that held their lines already would hold them twice (jsdiff finds the context further on).
        if (baseText !== null && !narrows(path, env, [re.baseHash, re.currentHash], [re.baseHash, current])) {
          base =
            survivingBase(path, env, blobs, re, current, r.applied)?.base ??
            shiftedBase(path, env, blobs, re, current, { hunks: r.applied, from: ownText });
        }
        if (current === re.currentHash && base === re.baseHash) return undefined;
        // A descendant's entry that had not followed every change (its current is not the disk) can take the
        // hunks where it already holds their lines: one that would list more is left as it was (stale, not wrong).
        if (desc && !narrows(path, env, [re.baseHash, re.currentHash], [base, current])) return undefined;
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
 * A descendant's base after an ancestor's reject reverted lines beside its own or in its base: the new current
 * without the descendant's own hunks that the reject left as they were (none of their changed lines differs
 * between its current before and after). A reverted line its base took in goes; one of its own the reject took
 * back is no longer its change (`tookBack`: some were). Undefined when those hunks do not apply back cleanly or
 * the review would grow.
 */
function survivingBase(
  path: string,
  env: PlanEnv,
  blobs: Record<string, string>,
  re: LogEntry,
  current: string | null,
  applied: Hunk[],
): { base: string | null; tookBack: boolean } | undefined {
  const base = text(env, re.baseHash);
  const before = text(env, re.currentHash);
  const after = text(env, current);
  if (base === null || before === null || after === null) return undefined;
  const hunks = computeHunks(path, base, before);
  const reverted = changesOn(computeHunks(path, before, after), 'old');
  // Only the reject's own lines count: a person's '}' written beside a '}' the descendant deleted is not it.
  const signed = (sign: string) =>
    new Set(applied.flatMap((h) => h.lines.filter((l) => l.startsWith(sign)).map((l) => l.slice(1))));
  const ours = { removed: signed('+'), putBack: signed('-') };
  const own: Hunk[] = [];
  for (const h of hunks) {
    const taken = takenBack(changesOn([h], 'new'), reverted, ours);
    if (taken === undefined) return undefined;
    if (!taken) own.push(h);
  }
  const r = applyHunks(after, own, 'reverse', before);
  if (r.failed.length > 0) return undefined;
  const candidate = put(blobs, env, r.text);
  if (!narrows(path, env, [re.baseHash, re.currentHash], [candidate, current])) return undefined;
  return { base: candidate, tookBack: own.length < hunks.length };
}

/**
 * Where hunks change the text on one `side` (0-based lines): the lines they put there (`at`: `+` lines on the new
 * side, `-` on the old), and the lines they take out of it with the span of their run of changes on that side
 * (`gone`: a replacement's two halves come in either order, so a line taken out is placed anywhere in its run).
 */
type Changes = { at: Map<number, string>; gone: Array<{ from: number; to: number; line: string }> };

function changesOn(hunks: Hunk[], side: 'old' | 'new'): Changes {
  const out: Changes = { at: new Map(), gone: [] };
  const here = side === 'new' ? '+' : '-';
  for (const h of hunks) {
    let i = (side === 'new' ? h.newStart : h.oldStart) - 1;
    let run: Array<{ from: number; to: number; line: string }> = [];
    let from = i;
    for (const l of h.lines) {
      if (l.startsWith(' ')) {
        for (const g of run) g.to = i;
        run = [];
        i++;
        from = i;
      } else if (l.startsWith(here)) out.at.set(i++, l.slice(1));
      else if (l.startsWith('+') || l.startsWith('-')) {
        const g = { from, to: i, line: l.slice(1) };
        run.push(g);
        out.gone.push(g);
      }
    }
    for (const g of run) g.to = i;
  }
  return out;
}

/**
 * Whether a descendant's hunk (its changes on its current, `own`) was taken back by a change of that current
 * (`change`, on the same lines), by position: true when every line it added is one the change removed and every
 * line it removed is one the change put back within its run, each also a line of the reject's own hunks (`ours`:
 * the change of a stale entry holds other people's edits too); false when none is; undefined when only some are.
 * Text alone would take a `}` the change wrote elsewhere for the hunk's own.
 */
function takenBack(
  own: Changes,
  change: Changes,
  ours: { removed: ReadonlySet<string>; putBack: ReadonlySet<string> },
): boolean | undefined {
  let taken = 0;
  for (const [i, line] of own.at) if (change.at.get(i) === line && ours.removed.has(line)) taken++;
  const back = change.gone.filter((b) => ours.putBack.has(b.line));
  for (const g of own.gone) {
    const k = back.findIndex((b) => b.line === g.line && b.from <= g.to && g.from <= b.to);
    if (k >= 0) {
      back.splice(k, 1);
      taken++;
    }
  }
  const all = own.at.size + own.gone.length;
  return taken === 0 ? false : taken === all ? true : undefined;
}

/**
 * The older fallback: the descendant's base with the reverted hunks reversed on it too, kept only if the
 * descendant's own changes are what they were; else its base as it was.
 */
function shiftedBase(
  path: string,
  env: PlanEnv,
  blobs: Record<string, string>,
  re: LogEntry,
  current: string | null,
  reverted: { hunks: Hunk[]; from: string },
): string | null {
  const shifted = applyHunks(text(env, re.baseHash)!, reverted.hunks, 'reverse', reverted.from).text;
  const curText = text(env, current)!;
  if (sameChanges(path, env, [re.baseHash, re.currentHash], [shifted, curText]) || shifted === curText)
    return put(blobs, env, shifted);
  return re.baseHash;
}

/** `contentBytes` of a reject or its undo: the new contents its plan stores whole to undo it (charged with it). */
export function keptContent(blobs: Record<string, string>): { contentBytes?: number } {
  let contentBytes = 0;
  for (const content of Object.values(blobs)) contentBytes += utf8Length(content);
  return contentBytes > 0 ? { contentBytes } : {};
}
