/**
 * @module
 * Shell side effects at a cost that does not grow with the workspace: the
 * files a command changed come from change notifications (inotify, one
 * non-recursive `fs.watch` per directory, all on libuv's one inotify
 * descriptor), not from walking the workspace around every command.
 *
 * Per workspace root the tracker keeps the state of every file (as a
 * `WorkspaceSnapshot` holds it) and the paths notified since it last looked.
 * `begin(root)` brings the state up to date (changes made between commands
 * are nobody's) and opens a mark; `end(mark)` brings it up to date again and
 * diffs the old states the mark kept of the paths that changed while it was
 * open against their new ones. Commands running at once in one workspace each
 * see every change made while they ran, as with snapshots.
 *
 * Nothing is missed for want of a notification:
 * - Barrier: inotify queues an event inside the write system call, so before
 *   the shell prints the mark ending a command, the event is queued; two turns
 *   of the event loop (one full poll) after the command ended deliver it.
 * - A directory is watched before it is listed; a new directory is watched,
 *   then walked; a directory whose name was notified is walked again unless
 *   it is the same directory (inode and ctime); a file is kept only while its
 *   parent is a watched directory with the same inode (so never through a
 *   directory swapped for a symlink).
 * - Fallback to a full scan (`WorkspaceSnapshotter`), then watching again,
 *   when the kernel may have dropped events: `overflowAt` notifications in
 *   one interval (the inotify queue holds 16,384 before it drops, and libuv
 *   drops the overflow event silently), a watcher error, an event without a
 *   name, or a changed `.gitignore` (the rules changed). When watching cannot
 *   start (no inotify, watch limit) or the first scan stops at its budget,
 *   the root is tracked by a snapshot before and after each command instead.
 */
import { isAbsolute, join, relative } from 'node:path';
import type { Logger } from 'pino';
import { rebaseMarks, type ReviewWrite } from './mark-rebase.ts';
import { markSnapshot, type ReadState, RootWatch, type TrackMark } from './root-watch.ts';
import { loadIgnore } from './workspace-snapshot-ignore.ts';
import type {
  ContentBudget,
  FileState,
  SnapshotDiff,
  WorkspaceSnapshot,
  WorkspaceSnapshotter,
} from './workspace-snapshot.ts';

export type { TrackMark };

/** Two turns of the event loop: every inotify event queued before the call has been delivered. */
export async function notifyBarrier(): Promise<void> {
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
}

export class WorkspaceTracker {
  readonly #snapshotter: WorkspaceSnapshotter;
  readonly #log: Logger | undefined;
  readonly #overflowAt: number;
  readonly #watch: boolean;
  readonly #firstScanMs: number;
  /** New content the tracker may still store in the blob store this run (the first scans aside). */
  readonly #content: ContentBudget;
  #contentWarned = false;
  readonly #roots = new Map<string, RootWatch | 'scan'>();
  readonly #starting = new Map<string, Promise<RootWatch | 'scan'>>();
  /** Roots demoted to scans while commands were open on them (`wrote` still rebases those commands). */
  readonly #retired = new Set<RootWatch>();

  constructor(deps: {
    snapshotter: WorkspaceSnapshotter;
    log?: Logger;
    overflowAt?: number;
    watch?: boolean;
    /**
     * Wall time of a watched root's full scan (default 10 min): done once (and after dropped events), not around
     * every command; the first stores every file's content (about 3 ms a file on a busy 2-core box).
     */
    firstScanMs?: number;
    /**
     * New content (a blob the store does not hold yet) the tracker may store over this run, the workspace's first
     * scan aside; past it, files are kept by hash only. Files changed between commands are nobody's, and a
     * change made while several agents' commands ran is charged to one of them at most once, at its end: without
     * a bound of its own, a job left in the background could fill the blob store (default 1 GiB).
     */
    maxContentBytes?: number;
  }) {
    this.#snapshotter = deps.snapshotter;
    this.#log = deps.log;
    this.#overflowAt = deps.overflowAt ?? 2_048;
    this.#watch = deps.watch ?? true;
    this.#firstScanMs = deps.firstScanMs ?? 600_000;
    this.#content = { left: deps.maxContentBytes ?? 1024 * 1024 * 1024 };
  }

  /** Starts tracking `root` (watch and first scan) ahead of its first command; `begin` waits for it. */
  prepare(root: string): Promise<unknown> {
    const r = this.#roots.get(root);
    return r ? Promise.resolve(r) : this.#start(root);
  }

  /** How `root` is tracked: by notifications, or by snapshots (fallback); undefined before its first command. */
  mode(root: string): 'watch' | 'scan' | undefined {
    const r = this.#roots.get(root);
    return r === undefined ? undefined : r === 'scan' ? 'scan' : 'watch';
  }

  /** Brings a watched `root` up to date ahead of `begin` (beside the gate); opens no mark. True once done. */
  refreshAhead(root: string): Promise<boolean> {
    const r = this.#roots.get(root);
    return r instanceof RootWatch
      ? this.#refresh(r).then(
          () => true,
          () => false,
        )
      : Promise.resolve(false);
  }

  /**
   * Before a command: brings `root` (absolute) up to date and opens a mark; after `ahead` (its `refreshAhead`),
   * with no barrier of its own when nothing was notified or applied since (what changed before it is nobody's).
   */
  async begin(root: string, ahead?: Promise<boolean>, owner?: string): Promise<TrackMark> {
    const r = this.#roots.get(root) ?? (await this.#start(root));
    if (r === 'scan') return { kind: 'scan', root, snapshot: await this.#budgetedSnapshot(root) };
    const rw = r;
    if (!((await ahead) && rw.settled())) await this.#refresh(rw);
    if (!rw.watching) return { kind: 'scan', root, snapshot: await this.#budgetedSnapshot(root) };
    const mark = {
      kind: 'watch' as const,
      root,
      rw,
      before: new Map<string, FileState | undefined>(),
      owner,
      witnesses: new Map<string, Set<string>>(),
    };
    rw.marks.add(mark);
    return mark;
  }

  /** After the command: what changed while its mark was open; closes the mark. */
  async end(mark: TrackMark): Promise<SnapshotDiff> {
    if (mark.kind === 'scan') return this.#snapshotter.diff(mark.snapshot, await this.#budgetedSnapshot(mark.root));
    const rw = mark.rw;
    await this.#refresh(rw);
    rw.marks.delete(mark);
    const before: Record<string, FileState> = {};
    const after: Record<string, FileState> = {};
    for (const [rel, b] of mark.before) {
      if (b) before[rel] = b;
      const a = rw.state.get(rel);
      if (a) after[rel] = a;
    }
    const diff = await this.#snapshotter.diff(markSnapshot(mark.root, before), markSnapshot(mark.root, after));
    if (mark.incomplete) diff.reportedOnly.push({ path: mark.root, status: 'unknown', reason: mark.incomplete });
    if (mark.witnesses.size > 0) {
      diff.sharedWith = {};
      for (const [rel, agents] of mark.witnesses) diff.sharedWith[join(mark.root, rel)] = [...agents].sort();
    }
    return diff;
  }

  /**
   * What the mark's command changed at `path` (absolute) so far, taken out of the mark (an edit is about to write
   * it): every open mark then sees only what changes after. Undefined for a scan mark, a path outside the root or
   * unchanged, or a mark already ended.
   */
  async takeSoFar(mark: TrackMark, path: string): Promise<SnapshotDiff | undefined> {
    if (mark.kind !== 'watch') return undefined;
    const rel = relative(mark.root, path);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return undefined;
    await this.#refreshOne(mark.rw, rel);
    const taken = mark.rw.takeSoFar(mark, rel);
    if (!taken) return undefined;
    const snap = (state: FileState | undefined) => markSnapshot(mark.root, state ? { [rel]: state } : {});
    const diff = await this.#snapshotter.diff(snap(taken.before), snap(taken.now));
    if (taken.witnesses) diff.sharedWith = { [path]: [...taken.witnesses].sort() };
    return diff;
  }

  /** When `mark` last started again from a write at `path` (absolute; `wrote`), as `performance.now()`. */
  rebasedAt(mark: TrackMark, path: string): number | undefined {
    return mark.kind === 'watch' ? mark.rebasedAt?.get(relative(mark.root, path)) : undefined;
  }

  /**
   * An edit or a review wrote `content` at `path` (absolute; null: deleted it), its path lock held: the open marks
   * start again from it (`mark-rebase.ts`; a review's change carried to what each started from). Without it, a
   * command that wrote CANARY, then (after an edit) CANARY again showed no change: its mark started from its own
   * first CANARY; review held the edit's content and the disk the canary. When the disk no longer holds what a
   * mark starts from, its state has a stamp no file has (`writtenState`), so the next look sees the difference. A
   * path the root keeps no state for (ignored, below a directory not watched) is left alone: its marks would see
   * the command delete it.
   */
  async wrote(path: string, content: string | Buffer | null, review?: ReviewWrite): Promise<void> {
    for (const rw of this.#withMarks()) {
      const rel = relative(rw.root, path);
      if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
      await this.#refreshOne(rw, rel);
      if (rw.tracks(rel)) await rebaseMarks(rw, rel, content, review, this.#snapshotter);
    }
  }

  /** The watched roots with marks open, and those demoted while marks were open on them (they end by a scan). */
  #withMarks(): RootWatch[] {
    for (const rw of this.#retired) if (rw.marks.size === 0) this.#retired.delete(rw);
    const live = [...this.#roots.values()].filter((r): r is RootWatch => r instanceof RootWatch);
    return [...new Set([...live, ...this.#retired])].filter((rw) => rw.marks.size > 0);
  }

  /** Closes a mark whose command never ran. */
  discard(mark: TrackMark): void {
    if (mark.kind === 'watch') mark.rw.marks.delete(mark);
  }

  /**
   * Stops every watcher. A mark still open then ends by a scan of its root: with the watchers gone (no watched
   * directory left to check a file's parent against), its end read every file notified as deleted.
   */
  close(): void {
    for (const r of this.#roots.values()) {
      if (r instanceof RootWatch) {
        r.watching = false;
        r.demoted = 'the tracker stopped';
        r.unwatchAll();
      }
    }
    this.#roots.clear();
  }

  #start(root: string): Promise<RootWatch | 'scan'> {
    let starting = this.#starting.get(root);
    if (!starting) {
      starting = (async () => {
        if (!this.#watch) return this.#setScan(root, 'watching is off');
        const rw = new RootWatch(root, await loadIgnore(root), this.#log);
        // A root inside one already tracked (a sub-agent's sub-workspace) holds files that root has seen: its
        // first scan stores within the run's budget too, or it would store what the budget turned away.
        await this.#resync(rw, ![...this.#roots.keys()].some((r) => root.startsWith(`${r}/`)));
        if (rw.watching) this.#roots.set(root, rw);
        return rw.watching ? rw : this.#setScan(root, rw.demoted ?? 'watching stopped');
      })().finally(() => this.#starting.delete(root));
      this.#starting.set(root, starting);
    }
    return starting;
  }

  #setScan(root: string, why: string): 'scan' {
    this.#log?.info({ root, why }, 'shell side effects: tracked by snapshots around each command');
    this.#roots.set(root, 'scan');
    return 'scan';
  }

  /** Watching failed: this root is scanned around each command from now on; its open marks end by a scan. */
  #demote(rw: RootWatch, why: string): void {
    if (rw.marks.size > 0) this.#retired.add(rw);
    rw.watching = false;
    rw.demoted = why;
    rw.unwatchAll();
    if (this.#roots.get(rw.root) === rw) this.#setScan(rw.root, why);
  }

  /**
   * Waits for the notifications already queued (this caller's own barrier: callers at once share its loop
   * turns), then for an apply of what they marked dirty. Applies are serialized per root and a caller shares
   * the one queued and not started yet, so commands finishing at once in one workspace wait for at most two
   * applies, not one each in a row. The barrier stays outside the queue: with it inside, each refresh held
   * the root for two loop turns, and 32 agents' execs (each refreshing at its start and its end) queued
   * behind one another's turns (fleet: a refresh waited p90 227 ms, for runs of p50 15 ms).
   */
  async #refresh(rw: RootWatch): Promise<void> {
    if (rw.watching) await notifyBarrier();
    await this.#applyQueued(rw);
  }

  /**
   * Brings one path up to date in the root's queue, after the applies queued before it, without applying what
   * else is notified (`RootWatch.applyOne`); all of it, as `#refresh`, when the path cannot be told apart.
   */
  async #refreshOne(rw: RootWatch, rel: string): Promise<void> {
    if (rw.watching) await notifyBarrier();
    const run = rw.queue.then(async () => {
      rw.running++;
      try {
        return await rw.applyOne(rel, this.#read);
      } finally {
        rw.running--;
      }
    });
    rw.queue = run.catch(() => undefined);
    if (!(await run.catch(() => false))) await this.#applyQueued(rw);
  }

  /** An apply (or a scan, when events may be lost) that starts after this call. */
  #applyQueued(rw: RootWatch): Promise<void> {
    if (rw.pending) return rw.pending;
    const run = rw.queue.then(async () => {
      rw.pending = undefined;
      rw.running++;
      try {
        if (!rw.watching || rw.rescan || rw.events >= this.#overflowAt) return await this.#resync(rw);
        try {
          await this.#apply(rw);
        } catch (err) {
          // A failed refresh must not hide a change: scan instead, now and from now on.
          this.#demote(rw, `refresh failed: ${String((err as Error).message ?? err)}`);
          await this.#resync(rw);
        }
      } finally {
        rw.running--;
      }
    });
    rw.pending = run;
    rw.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Full scan: watch every directory (before listing it), snapshot, and note every path that differs. `free`:
   * a workspace's first scan, whose new content is not taken from the run's budget (the operator's files).
   */
  async #resync(rw: RootWatch, free = false): Promise<void> {
    rw.rescan = false;
    rw.events = 0;
    rw.dirty = new Set();
    if (rw.watching) {
      try {
        rw.ignore = await loadIgnore(rw.root);
        await rw.watchTree('');
      } catch (err) {
        this.#demote(rw, `cannot watch: ${String((err as Error).message ?? err)}`);
      }
    }
    // While watching, a scan is rare (the first, or after dropped events): it may take longer than one around
    // every command could.
    const snap = await this.#snapshotter
      .snapshot(rw.root, {
        ...(rw.watching ? { maxMs: this.#firstScanMs } : {}),
        ...(free ? {} : { budget: this.#content }),
      })
      .finally(() => this.#contentCheck());
    if (!snap.complete) {
      this.#demote(rw, `the workspace is over the snapshot budget (${snap.stoppedBy})`);
      const why = `the workspace scan stopped at its budget (${snap.stoppedBy}); changes beyond it are unclassified`;
      for (const mark of rw.marks) mark.incomplete = why;
    }
    for (const [rel, s] of rw.state) if (snap.complete && !same(snap.files[rel], s)) rw.set(rel, snap.files[rel]);
    for (const [rel, s] of Object.entries(snap.files)) if (!same(rw.state.get(rel), s)) rw.set(rel, s);
  }

  /**
   * Applies the notified paths (`RootWatch.applyDirty`), then the scan that a changed `.gitignore` or a watcher
   * error asked for meanwhile.
   */
  async #apply(rw: RootWatch): Promise<void> {
    await rw.applyDirty(this.#read);
    this.#contentCheck();
    if (rw.rescan) await this.#resync(rw);
  }

  /** One file's state, its new content within the run's budget. */
  readonly #read: ReadState = (full, prev, acc) => this.#snapshotter.fileState(full, prev, acc, this.#content);

  /** Warns once, when a file of the largest size stored no longer fits what is left of the content budget. */
  #contentCheck(): void {
    if (this.#contentWarned || this.#content.left >= this.#snapshotter.budget.maxFileBytes) return;
    this.#contentWarned = true;
    this.#log?.warn(
      { left: this.#content.left },
      'shell tracking no longer stores new file content, only hashes, for the rest of this run ' +
        '(domains.review.maxShellContentBytes): changes to such files are reported, not restorable',
    );
  }

  /** A snapshot-mode command's before or after, its new content within the run's budget. */
  #budgetedSnapshot(root: string): Promise<WorkspaceSnapshot> {
    return this.#snapshotter.snapshot(root, { budget: this.#content }).finally(() => this.#contentCheck());
  }
}

function same(a: FileState | undefined, b: FileState | undefined): boolean {
  return (
    a === b || (a !== undefined && b !== undefined && a.stamp === b.stamp && a.size === b.size && a.hash === b.hash)
  );
}
