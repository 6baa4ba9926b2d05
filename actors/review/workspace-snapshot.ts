/**
 * @module
 * Shell side effects: snapshot a workspace before and after a command, diff
 * the two, and record what the command created, modified or deleted into the
 * action log (source `{ kind: 'shell', command, terminalId }`), so review and
 * reject cover commands too.
 *
 * A snapshot walks the workspace (sorted, symlinks not followed), hashes each
 * regular file and stores its content in the blob store, so a file the
 * command then modifies or deletes can be restored. Unchanged files (same
 * size, inode, mtime and ctime in nanoseconds as in the previous snapshot of
 * the same root) are not read again: a snapshot after a small command costs
 * a `stat` per file.
 *
 * Limits (reported, never silently restorable):
 * - Only the workspace root is watched: changes a command makes outside it
 *   (`~/.cache`, `/tmp`, another checkout) are not seen at all.
 * - Skipped: `.git`, `node_modules`, `.skein`, `.gitignore` patterns (see
 *   `workspace-snapshot-ignore.ts`), symlinks, and non-regular files.
 * - A file larger than `maxFileBytes`, beyond the `maxStoreBytes` content
 *   budget, or not valid UTF-8 (binary) has no stored content: its change is
 *   listed in `reportedOnly` and not recorded (reject could not restore it).
 * - A walk that exceeds `maxFiles` or `maxMs` stops; paths it did not reach
 *   are not classified (`reportedOnly` with status `unknown` when seen on
 *   one side only).
 * - Anything else writing the workspace while the command runs (another
 *   agent's edit, the user) is attributed to the command: the snapshot
 *   cannot tell who wrote a file.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ActionLogRecord, ChangeSource, FileStatus } from '../../schemas/review.ts';
import type { ActionLogService } from './action-log.ts';
import { contentHash, type BlobStore } from './blob-store.ts';
import { readRegularFile } from '../common/read-regular.ts';
import { lstatBigNow } from '../common/stat-now.ts';
import { loadIgnore } from './workspace-snapshot-ignore.ts';

export type SnapshotBudget = {
  /** Files larger than this are not hashed or stored (default 2 MiB). */
  maxFileBytes: number;
  /** Content newly read per snapshot; beyond it files are only stat'ed (default 64 MiB). */
  maxStoreBytes: number;
  /** Files per snapshot (default 50 000). */
  maxFiles: number;
  /** Wall time per snapshot (default 3 s). */
  maxMs: number;
};

export const DEFAULT_SNAPSHOT_BUDGET: SnapshotBudget = {
  maxFileBytes: 2 * 1024 * 1024,
  maxStoreBytes: 64 * 1024 * 1024,
  maxFiles: 50_000,
  maxMs: 3_000,
};

export type FileState = {
  size: number;
  /** `${ino}:${mtimeNs}:${ctimeNs}`: equal means unchanged without reading. */
  stamp: string;
  hash: string | null;
  /** Permission bits (absent for content a writer left, until a walk stats it): a deletion's entry keeps them. */
  mode?: number;
  /** Why there is no hash. */
  why?: 'too-large' | 'over-budget' | 'binary';
};

export type WorkspaceSnapshot = {
  root: string;
  files: Record<string, FileState>;
  complete: boolean;
  /** Directories whose listing was fully walked (relative; '' = root). */
  doneDirs: string[];
  stoppedBy?: 'maxFiles' | 'maxMs';
  ms: number;
  /** Bytes read and stored by this snapshot. */
  readBytes: number;
};

export type ShellChange = {
  path: string;
  status: FileStatus;
  before: string | null;
  after: string | null;
  /** The permission bits before the change, when known. */
  beforeMode?: number;
};
export type ReportedOnly = { path: string; status: FileStatus | 'unknown'; reason: string };
export type SnapshotDiff = {
  changes: ShellChange[];
  reportedOnly: ReportedOnly[];
  /**
   * Watched workspaces: path → the agents whose commands were all running when it changed (only for paths that
   * changed while commands of more than one agent were open): which of them made the change is not known.
   */
  sharedWith?: Record<string, string[]>;
};

export class WorkspaceSnapshotter {
  readonly budget: SnapshotBudget;
  #blobs: BlobStore;
  #last = new Map<string, WorkspaceSnapshot>();

  constructor(deps: { blobs: BlobStore; budget?: Partial<SnapshotBudget> }) {
    this.#blobs = deps.blobs;
    this.budget = { ...DEFAULT_SNAPSHOT_BUDGET, ...deps.budget };
  }

  /** Walks `root` (absolute) within the budget (`maxMs` may be given for this walk); see the module doc. */
  async snapshot(root: string, options: { maxMs?: number; budget?: ContentBudget } = {}): Promise<WorkspaceSnapshot> {
    const started = performance.now();
    const maxMs = options.maxMs ?? this.budget.maxMs;
    const prev = this.#last.get(root);
    const ignore = await loadIgnore(root);
    const snap: WorkspaceSnapshot = { root, files: {}, complete: true, doneDirs: [], ms: 0, readBytes: 0 };
    let count = 0;
    const stop = (why: 'maxFiles' | 'maxMs') => {
      snap.complete = false;
      snap.stoppedBy = why;
    };
    const walk = async (rel: string): Promise<void> => {
      const dir = rel === '' ? root : join(root, rel);
      let entries: Awaited<ReturnType<typeof readdirDirents>> | undefined;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return; // vanished or unreadable: not covered
      }
      entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      // A nested .gitignore applies to everything below its directory.
      if (entries.some((e) => e.name === '.gitignore' && e.isFile())) await ignore.enter(rel);
      for (const ent of entries) {
        if (!snap.complete) return;
        const childRel = rel === '' ? ent.name : `${rel}/${ent.name}`;
        if (ent.isDirectory()) {
          if (!ignore.ignores(childRel, true)) await walk(childRel);
          continue;
        }
        if (!ent.isFile() || ignore.ignores(childRel, false)) continue;
        if (++count > this.budget.maxFiles) return stop('maxFiles');
        if (performance.now() - started > maxMs) return stop('maxMs');
        const state = await this.fileState(join(root, childRel), prev?.files[childRel], snap, options.budget);
        if (state) snap.files[childRel] = state;
      }
      if (snap.complete) snap.doneDirs.push(rel);
    };
    await walk('');
    snap.ms = performance.now() - started;
    this.#last.set(root, snap);
    return snap;
  }

  /** What changed from `before` to `after` (same root), with contents for every recordable change. */
  async diff(before: WorkspaceSnapshot, after: WorkspaceSnapshot): Promise<SnapshotDiff> {
    const out: SnapshotDiff = { changes: [], reportedOnly: [] };
    // A directory is marked done only after its whole subtree was walked: any done ancestor covers the path.
    const covered = (snap: WorkspaceSnapshot, done: Set<string>, rel: string) => {
      if (snap.complete) return true;
      const parts = rel.split('/');
      for (let i = parts.length - 1; i >= 0; i--) if (done.has(parts.slice(0, i).join('/'))) return true;
      return false;
    };
    const doneBefore = new Set(before.doneDirs);
    const doneAfter = new Set(after.doneDirs);
    const paths = [...new Set([...Object.keys(before.files), ...Object.keys(after.files)])].sort();
    for (const rel of paths) {
      const b = before.files[rel];
      const a = after.files[rel];
      const path = join(after.root, rel);
      if (b && a && b.stamp === a.stamp && b.size === a.size) continue;
      if (b && a && b.hash !== null && b.hash === a.hash) continue;
      if (!b && !covered(before, doneBefore, rel)) {
        out.reportedOnly.push({
          path,
          status: 'unknown',
          reason: 'not reached by the snapshot before the command (budget)',
        });
        continue;
      }
      if (!a && !covered(after, doneAfter, rel)) {
        out.reportedOnly.push({
          path,
          status: 'unknown',
          reason: 'not reached by the snapshot after the command (budget)',
        });
        continue;
      }
      const status: FileStatus = !b ? 'created' : !a ? 'deleted' : 'modified';
      const missing = (b && b.hash === null ? b : undefined) ?? (a && a.hash === null ? a : undefined);
      if (missing) {
        out.reportedOnly.push({ path, status, reason: reasonText(missing.why) });
        continue;
      }
      const beforeText = b ? await this.#blobs.get(b.hash!) : null;
      const afterText = a ? await this.#blobs.get(a.hash!) : null;
      if (beforeText === undefined || afterText === undefined) {
        out.reportedOnly.push({ path, status, reason: 'its content is missing from the blob store' });
        continue;
      }
      const change: ShellChange = { path, status, before: beforeText, after: afterText };
      if (b?.mode !== undefined) change.beforeMode = b.mode;
      out.changes.push(change);
    }
    return out;
  }

  /**
   * One file's state: `prev` itself when its stamp and size are unchanged, else read and stored (counted in
   * `acc.readBytes`, within the budget); undefined when it cannot be read. With `budget` (the tracker's, for
   * the run), content the store does not hold yet takes from `budget.left`, and is kept by hash only past it.
   */
  async fileState(
    full: string,
    prev: FileState | undefined,
    acc: { readBytes: number },
    budget?: ContentBudget,
  ): Promise<FileState | undefined> {
    const st = lstatBigNow(full);
    if (!st) return undefined;
    const size = Number(st.size);
    const stamp = `${st.ino}:${st.mtimeNs}:${st.ctimeNs}`;
    if (prev && prev.stamp === stamp && prev.size === size) return prev;
    const mode = Number(st.mode) & 0o777;
    if (size > this.budget.maxFileBytes) return { size, stamp, mode, hash: null, why: 'too-large' };
    if (acc.readBytes + size > this.budget.maxStoreBytes) return { size, stamp, mode, hash: null, why: 'over-budget' };
    // Never through a symlink or FIFO swapped in since the lstat (read-regular.ts).
    const bytes = await readRegularFile(full);
    if (!bytes) return undefined;
    acc.readBytes += bytes.length;
    const text = bytes.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(bytes)) return { size, stamp, mode, hash: null, why: 'binary' };
    if (!budget) return { size, stamp, mode, hash: await this.#blobs.put(text) };
    const hash = contentHash(text);
    if (!(await this.#blobs.has(hash))) {
      // Checked and taken with no await in between: applies run 32 files at once on one budget.
      if (bytes.length > budget.left) return { size, stamp, mode, hash: null, why: 'over-budget' };
      budget.left -= bytes.length;
    }
    return { size, stamp, mode, hash: await this.#blobs.put(text, hash) };
  }

  /** Stored content by its hash; undefined when the store does not hold it. */
  textOf(hash: string): Promise<string | undefined> {
    return this.#blobs.get(hash);
  }

  /**
   * The state of `content` as a writer left it (`WorkspaceTracker.wrote`): `disk` itself when it holds that
   * content, else one under a stamp no file has, its content stored for the diff. Content kept by hash only
   * (too large, binary) always gets that stamp: a same-sized rewrite by a command in between would otherwise be
   * taken for the write (at worst, one "changed" note more).
   */
  async writtenState(content: string | Buffer, disk: FileState | undefined): Promise<FileState> {
    const bytes = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
    const size = bytes.length;
    const stamp = 'written';
    const unhashed = (why: 'too-large' | 'binary'): FileState => ({ size, stamp, hash: null, why });
    if (size > this.budget.maxFileBytes) return unhashed('too-large');
    const text = bytes.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(bytes)) return unhashed('binary');
    const hash = contentHash(text);
    if (disk?.hash === hash) return disk;
    return {
      size,
      stamp,
      ...(disk?.mode === undefined ? {} : { mode: disk.mode }),
      hash: await this.#blobs.put(text, hash),
    };
  }
}

/** What new content shell tracking may still add to the blob store this run (taken from as it is stored). */
export type ContentBudget = { left: number };

/**
 * A carrier's records stop growing past this many bytes of JSON (one file's records are never split): NATS
 * refuses a message over its max_payload, 1 MiB by default; a file's records are ~1 KB per log of its lineage.
 */
export const SHELL_RECORDS_BYTES = 256 * 1024;

/** One carrier's worth of records: stored in one append (`action-log.shell.recorded`), then folded. */
export type ShellRecords = { files: number; records: ActionLogRecord[]; contentBytes: number };

/**
 * Records a command's recordable changes in the action log of `agentId` (and its ancestors'): every path's
 * records planned under all the paths' locks, then stored by `store` in as few appends as fit
 * SHELL_RECORDS_BYTES each, each folded once stored (`store` is told the batch's paths). One record per log
 * and file, each its own append, made a command that caught 30 files of a fleet's agents (the root's log is
 * one aggregate: its appends are made one after another) hold its reply 250-530 ms (issue 15). Returns how
 * many files were recorded.
 */
export async function recordShellChanges(
  service: ActionLogService,
  who: { agentId: string; ancestors: readonly string[]; command: string; terminalId?: string },
  diff: SnapshotDiff,
  store: (batch: ShellRecords, paths: readonly string[]) => Promise<void>,
  opts: {
    /** The caller holds the paths' locks (a retry of a change the log refused). */
    lockHeld?: boolean;
    /** Run under the locks before planning (earlier changes of these paths, still to record); throws to stop. */
    first?: (paths: readonly string[]) => Promise<void>;
    /** Told of a failure before the locks are released (to queue what was not stored, ahead of any waiter). */
    failed?: (err: unknown) => void;
    /** Checked under the locks: a change another holder of them recorded or wrote meanwhile is left out. */
    keep?: (change: ShellChange) => boolean;
  } = {},
): Promise<number> {
  const source = {
    kind: 'shell' as const,
    command: who.command.slice(0, 4096),
    ...(who.terminalId === undefined ? {} : { terminalId: who.terminalId as ChangeSource['terminalId'] }),
  };
  const locked = diff.changes.map((c) => c.path);
  const run = () =>
    record().catch((err: unknown) => {
      opts.failed?.(err);
      throw err;
    });
  const record = async () => {
    await opts.first?.(locked);
    const changes = opts.keep ? diff.changes.filter(opts.keep) : diff.changes;
    // No record is folded before all are planned, and each plan reads only its own path's entries.
    const planned = await Promise.all(
      changes.map(async (c) => {
        const [beforeHash, resultHash] = await Promise.all([
          c.before === null ? null : service.blobs.put(c.before),
          c.after === null ? null : service.blobs.put(c.after),
        ]);
        const plan = await service.planChangeByHash({
          agentId: who.agentId,
          ancestors: who.ancestors,
          path: c.path,
          beforeHash,
          resultHash,
          source,
          beforeMode: c.beforeMode,
        });
        const records = (plan?.facts ?? []).map((f) => ({ type: f.type, data: f.data }) as ActionLogRecord);
        return { path: c.path, records, contentBytes: c.after === null ? 0 : Buffer.byteLength(c.after) };
      }),
    );
    const batches: Array<{ batch: ShellRecords; paths: string[] }> = [];
    let batch: ShellRecords = { files: 0, records: [], contentBytes: 0 };
    let paths: string[] = [];
    let bytes = 0;
    for (const { path, records, contentBytes } of planned) {
      if (records.length === 0) continue;
      const size = JSON.stringify(records).length;
      if (batch.files > 0 && bytes + size > SHELL_RECORDS_BYTES) {
        batches.push({ batch, paths });
        batch = { files: 0, records: [], contentBytes: 0 };
        paths = [];
        bytes = 0;
      }
      batch.files++;
      batch.records.push(...records);
      batch.contentBytes += contentBytes;
      paths.push(path);
      bytes += size;
    }
    if (batch.files > 0) batches.push({ batch, paths });
    let n = 0;
    for (const b of batches) {
      await store(b.batch, b.paths);
      service.folded(b.batch.records);
      n += b.batch.files;
    }
    return n;
  };
  return opts.lockHeld ? run() : service.lock.withLock(locked, run);
}

function reasonText(why: FileState['why']): string {
  switch (why) {
    case 'too-large':
      return 'larger than the snapshot maxFileBytes; its change is reported only, not restorable';
    case 'over-budget':
      return 'beyond the snapshot content budget (maxStoreBytes); its change is reported only, not restorable';
    case 'binary':
      return 'not UTF-8 text; binary changes are reported only, not restorable';
    default:
      return 'no content was stored for it';
  }
}

const readdirDirents = (dir: string) => readdir(dir, { withFileTypes: true });
