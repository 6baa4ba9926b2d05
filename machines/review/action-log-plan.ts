/**
 * @module
 * Pure planning for action logs: given log states, texts (by content hash)
 * and what is on disk, decide what to write, which blobs to store and which
 * facts to emit. No I/O: the caller (`actors/action-log.ts`) loads texts,
 * takes the path locks, stores `blobs`, applies `writes` atomically and emits
 * `facts` (each with `agentId` = the log it belongs to).
 *
 * Rules (after Zed's ActionLog, see research/zed-edit-kernel.md §5):
 * - record: the first change of a path since review sets the base; a change
 *   applied to content other than the log's current one (someone else edited
 *   in between) rebases that outside edit into the base when it applies, so
 *   it is not attributed to the agent; a file re-created or deleted outside
 *   restarts tracking from the change's before-content.
 * - accept: the base moves forward (whole file, or by applying the chosen
 *   hunks to the base); descendants' logs follow.
 * - reject: the reverse of the chosen hunks is applied with its context to
 *   the DISK content, so later outside edits survive; a hunk that no longer
 *   fits is a conflict, left alone. A created file is deleted only when disk
 *   still holds exactly the agent's content; a deleted file is restored only
 *   when it is still absent. Related logs (ancestors, descendants) follow.
 * - undo-reject: the last reject-all's disk changes are re-applied the same
 *   way; created files it deleted are not re-created (reported).
 *
 * Accept is in `action-log-accept.ts`, reject in `action-log-reject.ts`, undo-reject in `action-log-undo.ts`.
 */
import { ErrorCode, NotFoundError, RuntimeError } from '../../schemas/errors.ts';
import type { UnstampedFact } from '../../schemas/message.ts';
import type { ChangeSource, Hunk, LogEntry, RejectUndo, ReviewConflict } from '../../schemas/review.ts';
import { applyHunks, computeHunks } from './action-log-hunks.ts';
import { rebaseOutside, rebaseOutsideInPart } from './line-rebase.ts';

export type LogView = { agentId: string; files: Record<string, LogEntry>; lastReject?: RejectUndo | null };
/** `texts`: contents by hash, every hash of the entries involved; planning adds the texts it creates. */
export type PlanEnv = {
  texts: Record<string, string>;
  hash: (text: string) => string;
  /** A reject's: the permission bits of the files it read; a created file it deletes keeps them for its undo. */
  modes?: Readonly<Record<string, number>>;
};
export type FileWrite = {
  path: string;
  content: string | null;
  /** Permission bits of a file created (else those of the file it replaces, or the umask's). */
  mode?: number;
  /**
   * The disk's content the plan read and changed into `content` (a reject's or undo's): commands still running see
   * that change made to what they started from, so what they wrote before stays theirs (`WorkspaceTracker.wrote`).
   */
  from?: string | null;
  /**
   * What the action log holds for the path once the plan is stored, when `content` differs from it (changes on
   * disk the log does not hold, kept in `content`): where `from` → `content` does not apply to what a running
   * command started from, it starts from this, so those changes stay its own.
   */
  model?: string | null;
};
export type Plan<TReply> = {
  writes: FileWrite[];
  blobs: Record<string, string>;
  facts: UnstampedFact[];
  reply: TReply;
};
export type Selection = {
  paths?: string[] | undefined;
  hunkIds?: string[] | undefined;
  /** path → current hash as the caller last listed it: act only on exactly that (`checkSeen`). */
  seen?: Readonly<Record<string, string | null>> | undefined;
};
export type RecordedChange = {
  changeId: string;
  agentId: string;
  lineage: string[];
  path: string;
  beforeHash: string | null;
  resultHash: string | null;
  source: ChangeSource;
  /** The file's permission bits before the change: a deletion's entry keeps them (`LogEntry.mode`). */
  beforeMode?: number | undefined;
};

type Kept = { path: string; reason: string };
export type AcceptReply = { accepted: Array<{ path: string; hunkIds: string[]; remaining: number }> };
export type RejectReply = {
  restored: string[];
  deleted: string[];
  kept: Kept[];
  conflicts: ReviewConflict[];
  undoAvailable: boolean;
};
export type UndoReply = { reapplied: string[]; conflicts: ReviewConflict[]; notRestorable: Kept[] };

/** The entry for base → current, or null when there is nothing left to review. */
export function makeEntry(
  baseHash: string | null,
  currentHash: string | null,
  agents: readonly string[],
): LogEntry | null {
  if (baseHash === currentHash) return null;
  const status = baseHash === null ? 'created' : currentHash === null ? 'deleted' : 'modified';
  return { status, baseHash, currentHash, agents: [...agents] as LogEntry['agents'] };
}

/**
 * Facts recording one change in the originator's log and each ancestor's (`logs` in that order).
 * `others`: logs outside that lineage (descendants, siblings) that track the same path; for them the
 * change is an outside edit: it is folded into both their base and current when it fits, so their
 * review keeps showing only their own changes; an outside deletion or re-creation ends their tracking.
 */
/**
 * Whether `planRecord` reads any content for `change`: only to fold an outside edit into a log's base (the log's
 * current content is not what the change started from) or to update logs outside the lineage. When it does not,
 * the caller loads nothing: decoding a 10 MB file's four versions held the event loop for ~100-800 ms per write.
 */
export function planNeedsTexts(
  change: Pick<RecordedChange, 'path' | 'beforeHash'>,
  logs: readonly LogView[],
  others: readonly LogView[] = [],
): boolean {
  if (others.length > 0) return true;
  return logs.some((log) => {
    const prev = log.files[change.path];
    return (
      prev !== undefined &&
      prev.currentHash !== change.beforeHash &&
      prev.currentHash !== null &&
      change.beforeHash !== null &&
      prev.baseHash !== null
    );
  });
}

export function planRecord(change: RecordedChange, logs: LogView[], env: PlanEnv, others: LogView[] = []): Plan<null> {
  const blobs: Record<string, string> = {};
  const facts: UnstampedFact[] = [];
  for (const log of logs) {
    const prev = log.files[change.path];
    let base = change.beforeHash;
    let agents: string[] = [change.agentId];
    if (prev) {
      const known: readonly string[] = prev.agents;
      agents = known.includes(change.agentId) ? [...known] : [...known, change.agentId];
      if (prev.currentHash === change.beforeHash) base = prev.baseHash;
      else if (prev.currentHash !== null && change.beforeHash !== null && prev.baseHash !== null) {
        // Someone else edited between the log's last change and this one: fold their edit into the base if it fits
        // (with its context; else by line position, when it leaves the log's own lines alone: a person's line
        // right beside the agent's fails the context).
        const before = text(env, change.beforeHash)!;
        const outside = computeHunks(change.path, text(env, prev.currentHash), before);
        const r = applyHunks(text(env, prev.baseHash)!, outside, 'forward', text(env, prev.currentHash)!);
        const fits = (t: string | undefined): t is string =>
          t !== undefined && sameChanges(change.path, env, [prev.baseHash, prev.currentHash], [t, before]);
        const byContext = r.failed.length === 0 ? r.text : undefined;
        const folded = fits(byContext)
          ? byContext
          : rebaseOutside(text(env, prev.baseHash)!, text(env, prev.currentHash)!, before);
        base = fits(folded) ? put(blobs, env, folded) : foldInPart(change.path, env, blobs, prev, before);
      } else if (prev.currentHash !== null && change.beforeHash !== null)
        base = null; // created file edited outside: still created
      else agents = [change.agentId]; // re-created or deleted outside: tracking restarts
    }
    const entry = makeEntry(base, change.resultHash, agents);
    if (entry?.status === 'deleted' && change.beforeMode !== undefined) entry.mode = change.beforeMode & 0o777;
    facts.push({
      type: 'action-log.change.recorded',
      agentId: log.agentId as UnstampedFact['agentId'],
      data: {
        logAgentId: log.agentId,
        agentId: change.agentId,
        lineage: change.lineage,
        changeId: change.changeId,
        path: change.path,
        status: entry?.status ?? null,
        beforeHash: change.beforeHash,
        baseHash: base,
        resultHash: change.resultHash,
        entry,
        source: change.source,
      },
    });
  }
  const outside =
    others.length > 0 ? computeHunks(change.path, text(env, change.beforeHash), text(env, change.resultHash)) : [];
  for (const o of others) {
    const e = o.files[change.path];
    if (!e || e.currentHash !== change.beforeHash || e.currentHash === change.resultHash) continue;
    let entry: LogEntry | null = null;
    if (change.resultHash !== null && change.beforeHash !== null) {
      // Followed only when the change folds into this log's base, so its diff stays this log's own changes.
      // Otherwise (a file this log created, or hunks that overlap its own) it keeps its own content: a reject
      // here then meets the disk changed since and reports a conflict, instead of deleting the file or
      // restoring the base over the other agent's work.
      if (e.baseHash === null) continue;
      const r = applyHunks(text(env, e.baseHash)!, outside, 'forward', text(env, change.beforeHash)!);
      const ok =
        r.failed.length === 0 &&
        sameChanges(change.path, env, [e.baseHash, e.currentHash], [r.text, text(env, change.resultHash)!]);
      if (!ok) continue;
      entry = makeEntry(put(blobs, env, r.text), change.resultHash, e.agents);
    }
    facts.push(
      fact('action-log.files.updated', o.agentId, {
        agentId: o.agentId,
        by: change.agentId,
        cause: 'change',
        files: [{ path: change.path, entry }],
      }),
    );
  }
  return { writes: [], blobs, facts, reply: null };
}

/**
 * A selection with `seen` and neither paths nor hunk ids acts on the files in `seen` (the listing the caller
 * looked at), not on the whole log: a file recorded after the listing is left for the next review.
 */
export function withSeenPaths<S extends Selection>(sel: S): S {
  if (!sel.seen || sel.paths !== undefined || sel.hunkIds !== undefined) return sel;
  return { ...sel, paths: Object.keys(sel.seen) };
}

const short = (hash: string | null | undefined) => (hash ? hash.slice(0, 12) : 'none');

/**
 * The guard of a review made from a listing: every file the selection acts on is in `seen`, and every file in
 * `seen` is still in the log with the current content it had there. Otherwise the whole command is refused
 * (`conflict`) and nothing is done: a file an agent changed after the operator looked at it is never accepted
 * unseen.
 */
export function checkSeen(log: LogView, seen: Readonly<Record<string, string | null>>): void {
  for (const [path, hash] of Object.entries(seen)) {
    const entry = log.files[path];
    if (!entry) {
      throw new RuntimeError(
        ErrorCode.Conflict,
        `'${path}' is no longer in the action log of agent '${log.agentId}' (it was when listed); ${AGAIN}.`,
      );
    }
    if (entry.currentHash !== hash) {
      throw new RuntimeError(
        ErrorCode.Conflict,
        `'${path}' changed since it was listed (its content was ${short(hash)}, now ${short(entry.currentHash)}); ` +
          `${AGAIN}.`,
      );
    }
  }
}

/** The rest of `checkSeen`'s guard: every file the selection acts on was in the listing. */
function checkAllSeen(log: LogView, seen: Readonly<Record<string, string | null>>, targets: readonly Target[]): void {
  for (const t of targets) {
    if (!Object.hasOwn(seen, t.path)) {
      throw new RuntimeError(
        ErrorCode.Conflict,
        `'${t.path}' is in the action log of agent '${log.agentId}' but not in seen (it was not listed, or ` +
          `was left out); ${AGAIN}.`,
      );
    }
  }
}

const AGAIN = 'nothing was done: list the review again, look at what it shows now, then act on that';

type Target = { path: string; entry: LogEntry; hunks: Hunk[]; selected: Hunk[]; whole: boolean };

/** Resolves paths/hunk ids against a log; unknown ones are errors that name them. */
export function resolveSelection(log: LogView, selection: Selection, env: Pick<PlanEnv, 'texts'>): Target[] {
  const sel = withSeenPaths(selection);
  if (sel.seen) checkSeen(log, sel.seen);
  for (const p of sel.paths ?? []) {
    if (!log.files[p]) {
      throw new NotFoundError(
        `No change to '${p}' in the action log of agent '${log.agentId}'; ` +
          `run review.list to see the tracked paths (absolute).`,
      );
    }
  }
  const paths = sel.paths ? [...new Set(sel.paths)] : Object.keys(log.files);
  const wanted = sel.hunkIds ? new Set(sel.hunkIds) : undefined;
  const found = new Set<string>();
  const targets: Target[] = [];
  for (const path of paths) {
    const entry = log.files[path]!;
    const hunks = computeHunks(path, text(env, entry.baseHash), text(env, entry.currentHash));
    const selected = wanted ? hunks.filter((h) => wanted.has(h.id)) : hunks;
    for (const h of selected) found.add(h.id);
    if (wanted && selected.length === 0) continue;
    targets.push({ path, entry, hunks, selected, whole: selected.length === hunks.length });
  }
  if (sel.seen) checkAllSeen(log, sel.seen, targets);
  const missing = (sel.hunkIds ?? []).filter((id) => !found.has(id));
  if (missing.length > 0) {
    throw new NotFoundError(
      `Hunk id '${missing[0]}' is not in the action log of agent ` +
        `'${log.agentId}'${sel.paths ? ' for the given paths' : ''}; ` +
        `run review.list for current hunk ids (they change when the file changes).`,
    );
  }
  return targets;
}

/**
 * An outside edit that touches the log's own lines in places (a line written right beside its own, most likely
 * more of the same writer's) is folded into the base everywhere else: those places stay charged to the log,
 * visible, and the rest is not (an ancestor's accepted line far from them, charged too, was removed by this
 * log's reject-all). Kept only when base → the edit without those places is still the log's own change.
 */
function foldInPart(
  path: string,
  env: PlanEnv,
  blobs: Record<string, string>,
  prev: LogEntry,
  before: string,
): string | null {
  const base = text(env, prev.baseHash)!;
  const part = rebaseOutsideInPart(base, text(env, prev.currentHash)!, before);
  if (!part || part.base === base || !sameChanges(path, env, [prev.baseHash, prev.currentHash], [part.base, part.mid]))
    return prev.baseHash;
  return put(blobs, env, part.base);
}

/**
 * @internal Whether the change from `a` (hashes) and from `b` (texts) add and remove the same lines:
 * the guard that folding an outside edit into a base kept the log's own changes intact (a hunk
 * without context can fit in the wrong place; then the base is left as it was).
 */
export function sameChanges(
  path: string,
  env: Pick<PlanEnv, 'texts'>,
  a: [string | null, string | null],
  b: [string, string],
): boolean {
  const changed = (base: string | null, cur: string | null) =>
    computeHunks(path, base, cur)
      .flatMap((h) => h.lines.filter((l) => l.startsWith('+') || l.startsWith('-')))
      .join('\n');
  return changed(text(env, a[0]), text(env, a[1])) === changed(b[0], b[1]);
}

/**
 * @internal Whether the change `after` (hashes) adds and removes only lines that the change `before` did, as many
 * times at most: a review that can only have shrunk.
 */
export function narrows(
  path: string,
  env: Pick<PlanEnv, 'texts'>,
  before: [string | null, string | null],
  after: [string | null, string | null],
): boolean {
  const signed = ([base, current]: [string | null, string | null]) =>
    computeHunks(path, text(env, base), text(env, current)).flatMap((h) =>
      h.lines.filter((l) => l.startsWith('+') || l.startsWith('-')),
    );
  const left = new Map<string, number>();
  for (const l of signed(before)) left.set(l, (left.get(l) ?? 0) + 1);
  for (const l of signed(after)) {
    const n = left.get(l) ?? 0;
    if (n === 0) return false;
    left.set(l, n - 1);
  }
  return true;
}

/** @internal shared with action-log-reject.ts */
export function fact(type: string, agentId: string, data: unknown): UnstampedFact {
  return { type, agentId: agentId as UnstampedFact['agentId'], data };
}

/** @internal shared with action-log-reject.ts */
export function put(blobs: Record<string, string>, env: PlanEnv, content: string): string {
  const h = env.hash(content);
  if (env.texts[h] === undefined) blobs[h] = content;
  env.texts[h] = content;
  return h;
}

/** @internal shared with action-log-reject.ts */
export function text(env: Pick<PlanEnv, 'texts'>, hash: string | null): string | null {
  if (hash === null) return null;
  const t = env.texts[hash];
  if (t === undefined) {
    throw new RuntimeError(
      ErrorCode.NotFound,
      `Content '${hash}' was not loaded for planning; load every hash of the entries involved first.`,
    );
  }
  return t;
}

/** @internal shared with action-log-reject.ts */
export function diskOf(disk: Record<string, string | null>, path: string): string | null {
  const d = disk[path];
  if (d === undefined)
    throw new RuntimeError(
      ErrorCode.Internal,
      `Disk content of '${path}' was not read before planning; read every selected path first.`,
    );
  return d;
}
