/**
 * @module
 * The workspace roots the confined walk starts from, each resolved once: its real path and an open
 * descriptor of the directory. Every walk used to `realpath` and `open` its root (and close it again); now it
 * checks with one `stat` that the real path still names the same directory (device, inode and ctime) and
 * walks from the descriptor it holds.
 *
 * Why that keeps confinement: the walk starts from the directory the descriptor holds, whatever happens to
 * the names leading to it. An agent that renames the root, or swaps it (or a directory above it) for a symlink,
 * changes what the path names, not what the descriptor is: the `stat` then sees another directory, and the
 * root is resolved again. Its real path is pinned at the first resolution: a root that now resolves to another
 * place (a symlink swapped in, a parent moved) is refused, naming both, where an uncached walk used to follow
 * it; the same real path naming a new directory (the root deleted and made again) is opened again. Between the
 * check and the walk the descriptor still holds the directory checked. The birth time is
 * compared too because a root deleted and made again can get the same inode number; where the file system
 * keeps none, the ctime stands in (any change of the root's own entries moves it as well, which only costs a
 * new resolution). A replaced descriptor is closed once the last walk holding it is done.
 */
import { type FileHandle, open, realpath } from 'node:fs/promises';
import { constants } from 'node:fs';
import { resolve } from 'node:path';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { statBigNow } from './stat-now.ts';

/**
 * A root as the walk uses it: its real path and an open descriptor of it, owned by the cache. The walk calls
 * `release()` once done with it (never `close()`).
 */
export type OpenRoot = { real: string; dir: FileHandle; release(): void };

type Identity = { dev: bigint; ino: bigint; birthtimeNs: bigint; ctimeNs: bigint };
type Entry = { real: string; dir: FileHandle; id: Identity; users: number; retired: boolean };

const cache = new Map<string, Promise<Entry>>();
/** Each root's real path at its first resolution (kept when its descriptor is let go: a few bytes per root). */
const pinned = new Map<string, string>();
/**
 * Roots kept open at most (the least recently resolved are let go): a host serves a few workspaces, but a
 * long-lived process that saw many (tests, temp workspaces) would otherwise hold a descriptor for each.
 */
const MAX_ROOTS = 64;

function same(a: Identity, b: Identity): boolean {
  if (a.dev !== b.dev || a.ino !== b.ino) return false;
  return a.birthtimeNs !== 0n && b.birthtimeNs !== 0n ? a.birthtimeNs === b.birthtimeNs : a.ctimeNs === b.ctimeNs;
}

function lease(entry: Entry): OpenRoot {
  entry.users++;
  let released = false;
  return {
    real: entry.real,
    dir: entry.dir,
    release: () => {
      if (released) return;
      released = true;
      if (--entry.users === 0 && entry.retired) void entry.dir.close().catch(() => undefined);
    },
  };
}

/**
 * The root `root` (as configured: absolute, or relative to the cwd), resolved and open; throws NotFound
 * when missing.
 */
export async function openRoot(root: string): Promise<OpenRoot> {
  const key = resolve(root);
  const cached = cache.get(key);
  if (cached) {
    const entry = await cached.catch(() => undefined);
    if (entry) {
      const now = statBigNow(entry.real);
      if (now?.isDirectory() && same(now, entry.id) && !entry.retired) return lease(entry);
      if (cache.get(key) === cached) {
        cache.delete(key);
        retire(entry);
      }
    }
  }
  let pending = cache.get(key);
  if (!pending || pending === cached) {
    // Not resolved yet, or what was cached names another directory now: resolve it as an uncached walk would.
    const fresh = resolveRoot(root, key);
    pending = fresh;
    cache.set(key, fresh);
    if (cache.size > MAX_ROOTS) {
      const [oldestKey, oldest] = cache.entries().next().value!;
      cache.delete(oldestKey);
      void oldest.then(retire, () => undefined);
    }
    fresh.catch(() => {
      if (cache.get(key) === fresh) cache.delete(key);
    });
  }
  return lease(await pending);
}

async function resolveRoot(root: string, key: string): Promise<Entry> {
  let real: string;
  try {
    real = await realpath(root);
  } catch (cause) {
    throw missing(root, cause);
  }
  const first = pinned.get(key);
  if (first !== undefined && first !== real)
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `The workspace root '${root}' now resolves to '${real}', not '${first}' as when skein started: it was ` +
        `moved or replaced by a symlink, so skein refuses to follow it. Put it back, or restart skein to use ` +
        `the new place.`,
      { details: { root, was: first, now: real } },
    );
  let dir: FileHandle;
  try {
    dir = await open(real, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (cause) {
    throw missing(root, cause);
  }
  pinned.set(key, real);
  try {
    // Taken from the descriptor: what the walks will use, even if the path changed since the realpath.
    const st = await dir.stat({ bigint: true });
    const id = { dev: st.dev, ino: st.ino, birthtimeNs: st.birthtimeNs, ctimeNs: st.ctimeNs };
    return { real, dir, id, users: 0, retired: false };
  } catch (err) {
    await dir.close().catch(() => undefined);
    throw err;
  }
}

/** Lets a replaced or evicted root go: its descriptor is closed once no walk holds it. */
function retire(entry: Entry): void {
  entry.retired = true;
  if (entry.users === 0) void entry.dir.close().catch(() => undefined);
}

function missing(root: string, cause: unknown): RuntimeError {
  return new RuntimeError(
    ErrorCode.NotFound,
    `Worktree at '${root}' does not exist. Configure an existing workspace root for this agent.`,
    { cause },
  );
}
