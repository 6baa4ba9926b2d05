/**
 * @module
 * File effects of review plans: read current disk contents, and apply a
 * plan's writes all-or-nothing as far as the file system allows: every new
 * content is first staged in a temp file beside its target and fsync'd; only
 * when all are staged are they renamed into place (an atomic step per file),
 * then deletions run. A failure while staging removes the temps and writes
 * nothing. Also the per-path lock that serializes review with edits.
 */
import { mkdir, readFile, stat, unlink } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { FileWrite } from '../../machines/review/action-log-plan.ts';
import { type Staged, stageFile } from '../common/atomic-write.ts';
import { readExactFile, removeConfined, stageConfined } from '../common/confined-fs.ts';
import { DEFAULT_MAX_FILE_BYTES } from '../../schemas/edit-config.ts';

/**
 * A per-path async mutex. `withLock(paths, fn)` takes the locks of all paths
 * (sorted, so two multi-path holders never deadlock) and runs `fn`. Not
 * re-entrant: code already holding a path must not ask for it again.
 * The edit wiring takes the same instance around read→match→write so a
 * review never interleaves with a running edit of the same file.
 */
export class PathLock {
  #tails = new Map<string, Promise<void>>();

  async withLock<T>(paths: readonly string[], fn: () => Promise<T>): Promise<T> {
    const keys = [...new Set(paths.map((p) => resolve(p)))].sort();
    const releases: Array<() => void> = [];
    try {
      for (const k of keys) releases.push(await this.#acquire(k));
      return await fn();
    } finally {
      for (const r of releases.reverse()) r();
    }
  }

  /** Whether some holder or waiter has `path` now (for tests and diagnostics). */
  isLocked(path: string): boolean {
    return this.#tails.has(resolve(path));
  }

  #acquire(key: string): Promise<() => void> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const tail = prev.then(() => mine);
    this.#tails.set(key, tail);
    return prev.then(() => () => {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
  }
}

/**
 * Current contents of `paths` as UTF-8 (null = absent). With `roots`, each is read confined to them and at its
 * recorded real path (`readExact`): a link to a file outside or a directory swapped for one is refused, and so
 * is a FIFO or device (an open that blocks a pool thread for good) or a file past `maxBytes`. A review found a
 * reject reading through a link to a secret outside, into the workspace, and four FIFOs holding the host's pool.
 */
export async function readDisk(
  paths: Iterable<string>,
  roots?: readonly string[],
  maxBytes = DEFAULT_MAX_FILE_BYTES,
  /** Filled with the permission bits of each file found (a reject keeps them for an undo that creates it again). */
  modes?: Record<string, number>,
): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = {};
  for (const p of paths) {
    if (roots) {
      const file = await readExactFile(roots, p, maxBytes);
      out[p] = file?.bytes.toString('utf8') ?? null;
      if (file && modes) modes[p] = file.mode & 0o7777;
      continue;
    }
    try {
      out[p] = await readFile(p, 'utf8');
      if (modes) modes[p] = (await stat(p)).mode & 0o7777;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      out[p] = null;
    }
  }
  return out;
}

/**
 * Writes (content) and deletions (null) of a plan; see the module doc for the order. With `roots`, every
 * write and deletion is confined to them (`confined-fs.ts`) and made at the path recorded, exactly: a
 * directory an agent swapped for a symlink since the change was recorded cannot make a reject write or delete
 * outside, nor anywhere else inside (a review of 6 December rewrote `.skein/policy.json` through `d -> .skein`,
 * and a sub-agent's file outside its own workspace through `sub/d -> ../app`).
 */
export async function applyWrites(writes: readonly FileWrite[], roots?: readonly string[]): Promise<string[]> {
  return (await stageWrites(writes, roots)).commit();
}

/**
 * A plan's writes staged beside their files: `commit` puts them in place and deletes, and returns the paths it
 * left alone: a file the plan creates (it read none there, `from: null`) is never put over one made there since
 * (a person's, a build's), which the commit keeps; `discard` drops them all.
 */
export type StagedWrites = { commit(): Promise<string[]>; discard(): Promise<void> };

/**
 * Stages a plan's writes (temporary files beside their targets, written and synced: what a full disk can
 * refuse), to be committed once the facts that say so are stored, or discarded if they cannot be.
 */
export async function stageWrites(writes: readonly FileWrite[], roots?: readonly string[]): Promise<StagedWrites> {
  const staged: Array<{ s: Staged; path: string; create: boolean }> = [];
  try {
    for (const w of writes) {
      if (w.content === null) continue;
      const mode = w.mode ?? (await modeOf(w.path));
      const create = w.from === null;
      const path = w.path;
      if (roots)
        staged.push({ s: await stageConfined(roots, path, w.content, mode, true, true, create), path, create });
      else {
        await mkdir(dirname(path), { recursive: true });
        staged.push({ s: await stageFile(path, w.content, mode, create), path, create });
      }
    }
  } catch (err) {
    await Promise.all(staged.map((x) => x.s.discard()));
    throw err;
  }
  return {
    discard: async () => void (await Promise.all(staged.map((x) => x.s.discard()))),
    async commit() {
      const leftAlone: string[] = [];
      for (const { s, path, create } of staged) {
        await s.commit().catch((err: NodeJS.ErrnoException) => {
          if (!create || err.code !== 'EEXIST') throw err;
          leftAlone.push(path);
        });
      }
      for (const w of writes) {
        if (w.content !== null) continue;
        if (roots) {
          await removeConfined(roots, w.path, true);
          continue;
        }
        try {
          await unlink(w.path);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
      return leftAlone;
    },
  };
}

async function modeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mode & 0o7777;
  } catch {
    return undefined;
  }
}

/** Resolves once every one of `work` has settled, or after `maxMs`. */
export async function settledWithin(work: Array<Promise<unknown>>, maxMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, maxMs);
  });
  await Promise.race([Promise.allSettled(work), deadline]);
  clearTimeout(timer);
}
