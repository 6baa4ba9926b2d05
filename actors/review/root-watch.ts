/**
 * @module
 * One workspace root as the tracker (workspace-tracker.ts) watches it: the state of every file, the watched
 * directories (one non-recursive `fs.watch` each), the paths notified since the last look, and the marks of
 * the commands open on it. How a directory is watched, what a notification marks dirty, and how a path's state
 * changes (noting its old state in every open mark) are here; when to look again is the tracker's.
 */
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { lstatBigNow } from '../common/stat-now.ts';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { WorkspaceIgnore } from './workspace-snapshot-ignore.ts';
import type { FileState, WorkspaceSnapshot } from './workspace-snapshot.ts';

/**
 * Notified paths of one depth applied at once: enough to overlap a fleet's changes in one refresh, few enough
 * that a burst of thousands (up to `overflowAt`) does not open a descriptor for each at the same time.
 */
const APPLY_PARALLEL = 32;

/** Reads one file's state (`WorkspaceSnapshotter.fileState`, within the tracker's content budget). */
export type ReadState = (
  full: string,
  prev: FileState | undefined,
  acc: { readBytes: number },
) => Promise<FileState | undefined>;

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
      /** When (`performance.now()`) the mark last started again from an edit's or a review's write, per path. */
      rebasedAt?: Map<string, number>;
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
   * Applies the notified paths one depth at a time, shallowest first (a replaced directory is settled before the
   * files below it); the paths of one depth at once (`APPLY_PARALLEL`), each a distinct entry whose work touches
   * only itself and what is below it. In a row, each path's awaits (lstat, open, read, the blob's write and
   * fsync) each took a turn of a busy event loop: a fleet's applies of 4-26 paths took 100-230 ms, and every
   * exec in the workspace waited for them at its start and its end. Stops early when a rescan is due.
   */
  async applyDirty(read: ReadState): Promise<void> {
    const levels = new Map<number, string[]>();
    for (const rel of this.dirty) {
      const d = depth(rel);
      const level = levels.get(d);
      if (level) level.push(rel);
      else levels.set(d, [rel]);
    }
    this.dirty = new Set();
    this.events = 0;
    const one = this.#applier(read);
    for (const d of [...levels.keys()].sort((a, b) => a - b)) {
      const level = levels.get(d)!.sort();
      for (let i = 0; i < level.length; i += APPLY_PARALLEL) {
        if (this.rescan) return;
        await Promise.all(level.slice(i, i + APPLY_PARALLEL).map(one));
      }
    }
  }

  /**
   * Brings one file's state up to date alone (an edit is about to write it, `WorkspaceTracker.takeSoFar`), however
   * much else is notified: a command churning thousands of files does not hold the edit for their reads. Read
   * from the disk whether or not it was notified (events may have been dropped), when every directory above it is
   * still the one watched (same inode) and none of them is notified; else false, and the caller applies all.
   */
  async applyOne(rel: string, read: ReadState): Promise<boolean> {
    if (!this.watching || this.rescan) return false;
    const parts = rel.split('/');
    for (let i = 0; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (i > 0 && this.dirty.has(dir)) return false;
      const w = this.dirs.get(dir);
      const st = w ? lstatBigNow(dir === '' ? this.root : join(this.root, dir)) : undefined;
      if (!st?.isDirectory() || st.ino !== w?.ino) return false;
    }
    const st = lstatBigNow(join(this.root, rel));
    if (st?.isDirectory() || this.dirs.has(rel)) return false;
    // Taken before the read: a notification during it marks the path again.
    this.dirty.delete(rel);
    let next: FileState | undefined;
    try {
      if (st?.isFile() && !this.ignore.ignores(rel, false)) {
        next = await read(join(this.root, rel), this.state.get(rel), { readBytes: 0 });
      }
    } catch (err) {
      this.dirty.add(rel);
      throw err;
    }
    this.set(rel, next);
    return true;
  }

  /** Applies one notified path: its parent must be the directory watched; a new or replaced directory is walked. */
  #applier(read: ReadState): (rel: string) => Promise<void> {
    const acc = { readBytes: 0 };
    const parentOk = new Map<string, boolean>();
    const parentWatched = (parent: string): boolean => {
      let ok = parentOk.get(parent);
      if (ok === undefined) {
        const w = this.dirs.get(parent);
        const pst = w ? lstatBigNow(join(this.root, parent)) : undefined;
        ok = pst?.isDirectory() === true && pst.ino === w?.ino;
        parentOk.set(parent, ok);
      }
      return ok;
    };
    return async (rel: string): Promise<void> => {
      const full = join(this.root, rel);
      const parent = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
      // Both on this thread (stat-now.ts): one system call each.
      const st = lstatBigNow(full);
      if (!parentWatched(parent) || !st) {
        this.dropTree(rel);
        return;
      }
      if (st.isDirectory()) {
        const w = this.dirs.get(rel);
        if (w && w.ino === st.ino && w.ctime === st.ctimeNs) return;
        this.dropTree(rel);
        if (!this.ignore.ignores(rel, true)) await this.#walkNew(rel, acc, read);
        return;
      }
      if (this.dirs.has(rel)) this.dropTree(rel);
      if (st.isFile() && !this.ignore.ignores(rel, false)) {
        this.set(rel, await read(full, this.state.get(rel), acc));
      } else this.set(rel, undefined);
    };
  }

  /** A directory that appeared (or was replaced): watch it, then walk it. */
  async #walkNew(rel: string, acc: { readBytes: number }, read: ReadState): Promise<void> {
    if (!(await this.watchDir(rel))) return;
    const entries = await readdir(join(this.root, rel), { withFileTypes: true }).catch(() => []);
    if (entries.some((e) => e.name === '.gitignore')) this.rescan = true;
    for (const e of entries) {
      const child = `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (!this.ignore.ignores(child, true)) await this.#walkNew(child, acc, read);
      } else if (e.isFile() && !this.ignore.ignores(child, false)) {
        this.set(child, await read(join(this.root, child), this.state.get(child), acc));
      }
    }
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

  /**
   * Whether this root keeps a state for `rel`: not ignored, nor below an ignored directory, and (while watching)
   * every directory above it watched.
   */
  tracks(rel: string): boolean {
    if (this.ignore.ignores(rel, false)) return false;
    const parts = rel.split('/');
    for (let i = 0; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (this.watching ? !this.dirs.has(dir) : dir !== '' && this.ignore.ignores(dir, true)) return false;
    }
    return true;
  }

  /** Every open mark starts again from `state` at `rel` (`WorkspaceTracker.wrote`); no one witnessed it. */
  rebase(rel: string, state: FileState | undefined): void {
    for (const m of this.marks) {
      m.before.set(rel, state);
      m.witnesses.delete(rel);
    }
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

function depth(rel: string): number {
  let n = 0;
  for (let i = 0; i < rel.length; i++) if (rel.charCodeAt(i) === 47) n++;
  return n;
}
