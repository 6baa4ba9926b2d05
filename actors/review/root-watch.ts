/**
 * @module
 * One workspace root as the tracker (workspace-tracker.ts) watches it: the state of every file, the watched
 * directories (one non-recursive `fs.watch` each), the paths notified since the last look, and the marks of
 * the commands open on it. How a directory is watched, what a notification marks dirty, and how a path's state
 * changes (noting its old state in every open mark) are here; when to look again is the tracker's.
 */
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { WorkspaceIgnore } from './workspace-snapshot-ignore.ts';
import type { FileState, WorkspaceSnapshot } from './workspace-snapshot.ts';

/**
 * An open command's view: the old state of each path that changed since it began (undefined: absent), and, for a
 * path that changed while commands of other agents were open too, every agent whose command was (`witnesses`):
 * a snapshot cannot tell which of them made the change.
 */
export type TrackMark =
  | {
      kind: 'watch';
      root: string;
      rw: RootWatch;
      before: Map<string, FileState | undefined>;
      owner: string | undefined;
      witnesses: Map<string, Set<string>>;
      incomplete?: string;
    }
  | { kind: 'scan'; root: string; snapshot: WorkspaceSnapshot };

type Watched = { watcher: FSWatcher; ino: bigint; ctime: bigint };

export class RootWatch {
  /** False once watching failed: refreshes (for the marks still open) scan the whole workspace. */
  watching = true;
  /** Why watching stopped. */
  demoted: string | undefined;
  readonly state = new Map<string, FileState>();
  readonly dirs = new Map<string, Watched>();
  readonly marks = new Set<TrackMark & { kind: 'watch' }>();
  dirty = new Set<string>();
  events = 0;
  /** The kernel may have dropped events, or the rules changed: scan everything at the next refresh. */
  rescan = false;
  queue: Promise<unknown> = Promise.resolve();
  /** An apply queued that has not started yet: a caller past its barrier shares it (it drains what is dirty then). */
  pending: Promise<void> | undefined;
  /** Applies (or scans) started and not finished: their changes are not all in `state` yet. */
  running = 0;

  readonly root: string;
  ignore: WorkspaceIgnore;
  readonly #log: Logger | undefined;

  constructor(root: string, ignore: WorkspaceIgnore, log: Logger | undefined) {
    this.root = root;
    this.ignore = ignore;
    this.#log = log;
  }

  /** Nothing notified and nothing being applied: `state` holds every change delivered so far. */
  settled(): boolean {
    return this.watching && !this.rescan && this.dirty.size === 0 && this.pending === undefined && this.running === 0;
  }

  /** Watches every directory of the tree not ignored (before listing it). */
  async watchTree(rel: string): Promise<void> {
    if (!(await this.watchDir(rel))) return;
    const entries = await readdir(rel === '' ? this.root : join(this.root, rel), { withFileTypes: true }).catch(
      () => [],
    );
    if (entries.some((e) => e.name === '.gitignore' && e.isFile())) await this.ignore.enter(rel);
    for (const e of entries) {
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory() && !this.ignore.ignores(child, true)) await this.watchTree(child);
    }
  }

  /** Watches one directory (again if it was replaced); false when it is not a directory any more. */
  async watchDir(rel: string): Promise<boolean> {
    const full = rel === '' ? this.root : join(this.root, rel);
    const existing = this.dirs.get(rel);
    const watcher = existing?.watcher ?? watch(full, { persistent: false });
    if (!existing) {
      watcher.on('change', (_type, name) => this.notified(rel, name));
      watcher.on('error', (err) => {
        this.#log?.warn({ err, root: this.root, dir: rel }, 'shell side effects: watcher failed; scanning');
        this.rescan = true;
      });
    }
    // Checked after the watch is set: a directory swapped for a symlink is never watched through it.
    const st = await lstat(full, { bigint: true }).catch(() => undefined);
    if (!st?.isDirectory()) {
      watcher.close();
      this.dirs.delete(rel);
      return false;
    }
    this.dirs.set(rel, { watcher, ino: st.ino, ctime: st.ctimeNs });
    return true;
  }

  notified(dir: string, name: string | Buffer | null): void {
    if (name === null) {
      this.rescan = true;
      return;
    }
    const base = String(name);
    if (base === '.gitignore') this.rescan = true;
    this.events++;
    this.dirty.add(dir === '' ? base : `${dir}/${base}`);
  }

  /**
   * Sets (or, undefined, removes) a path's state, noting its old state in every open mark, and in each, when
   * marks of more than one agent are open, which agents' commands were running as it changed.
   */
  set(rel: string, next: FileState | undefined): void {
    const prev = this.state.get(rel);
    if (prev === next) return;
    for (const mark of this.marks) if (!mark.before.has(rel)) mark.before.set(rel, prev);
    if (this.marks.size > 1) {
      const owners = new Set<string>();
      for (const mark of this.marks) if (mark.owner !== undefined) owners.add(mark.owner);
      if (owners.size > 1) {
        for (const mark of this.marks) {
          const seen = mark.witnesses.get(rel);
          if (seen) for (const o of owners) seen.add(o);
          else mark.witnesses.set(rel, new Set(owners));
        }
      }
    }
    if (next) this.state.set(rel, next);
    else this.state.delete(rel);
  }

  /**
   * Takes `rel`'s change so far out of `mark` (`WorkspaceTracker.takeSoFar`): its old state, its state now, and
   * who witnessed it; every open mark that saw it changed starts again from now. Read and rebased in one turn: an
   * `end` that began meanwhile either took the path first (its mark is gone) or sees it rebased.
   */
  takeSoFar(
    mark: TrackMark & { kind: 'watch' },
    rel: string,
  ): { before: FileState | undefined; now: FileState | undefined; witnesses: Set<string> | undefined } | undefined {
    if (!this.marks.has(mark) || !mark.before.has(rel)) return undefined;
    const taken = { before: mark.before.get(rel), now: this.state.get(rel), witnesses: mark.witnesses.get(rel) };
    for (const m of this.marks) {
      if (m.before.has(rel)) m.before.set(rel, taken.now);
      m.witnesses.delete(rel);
    }
    return taken;
  }

  /** Forgets a path and, if it was a watched directory, everything below it. */
  dropTree(rel: string): void {
    this.set(rel, undefined);
    if (!this.dirs.has(rel)) return;
    const prefix = `${rel}/`;
    for (const [dir, w] of this.dirs) {
      if (dir === rel || dir.startsWith(prefix)) {
        w.watcher.close();
        this.dirs.delete(dir);
      }
    }
    for (const path of [...this.state.keys()]) if (path.startsWith(prefix)) this.set(path, undefined);
  }

  unwatchAll(): void {
    for (const w of this.dirs.values()) w.watcher.close();
    this.dirs.clear();
  }
}

/** A complete snapshot of `root` holding `files`: what a mark's diff compares. */
export function markSnapshot(root: string, files: Record<string, FileState>): WorkspaceSnapshot {
  return { root, files, complete: true, doneDirs: [], ms: 0, readBytes: 0 };
}
