/**
 * @module
 * The one atomic write in skein: a temp file created beside the target (`.name.skein-<pid>-<hex>.tmp`, a
 * name the workspace snapshots ignore), written, mode set, fsync'd, renamed over the target, then the
 * directory fsync'd. Readers see the old file or the new one, never a torn one; the temp file is removed on
 * every failure path.
 *
 * Everything happens relative to an open directory descriptor, through `/proc/self/fd/<dirfd>/<name>`, so
 * once the directory is open nothing can redirect the write elsewhere (a directory swapped for a symlink
 * mid-write changes nothing: the descriptor still names the directory that was opened). The confined file
 * tools pass a descriptor they reached without following symlinks (`confined-fs.ts`); trusted locations
 * skein owns (the data dir, policy files) use `writeFileAtomic`, which opens the parent by path.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsync,
  linkSync,
  lstatSync,
  mkdir,
  open,
  openSync,
  renameSync,
  unlinkSync,
  writeFile,
  writeSync,
} from 'node:fs';
import { promisify } from 'node:util';
import { basename, dirname } from 'node:path';

/** A path through an open directory descriptor: the kernel resolves `name` inside exactly that directory. */
export function atFd(dirFd: number, name: string): string {
  return `/proc/self/fd/${dirFd}/${name}`;
}

const fsyncFd = promisify(fsync);
const writeFd = promisify(writeFile);
const openFd = promisify(open);
const mkdirAsync = promisify(mkdir);

/**
 * Content up to this size is written on the event loop's thread (a page-cache copy: ~0.1 ms for 256 KiB);
 * more goes through the thread pool. The stats, renames and closes around it are made here too, each a system
 * call of a few µs against ~35 µs of CPU and a loop turn through the pool (stat-now.ts). Two calls stay in
 * the pool:
 * - the fsyncs, which wait for the disk;
 * - the temp file's creation. Allocating an inode is CPU the kernel spends searching the inode bitmaps, and
 *   on a file system that has seen much churn (ext4 skips recently deleted inodes) it was 0.4-0.8 ms a file
 *   here, where a rename was 20 µs: on the loop's thread that was ~10% of a fleet's main thread, which every
 *   agent shares (issue 15). In the pool it runs on another core.
 */
const WRITE_HERE_MAX = 256 * 1024;

/** Writes all of `data` at the descriptor's offset. */
async function writeAll(fd: number, data: Uint8Array | string): Promise<void> {
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  if (bytes.byteLength > WRITE_HERE_MAX) return writeFd(fd, bytes);
  let done = 0;
  while (done < bytes.byteLength) done += writeSync(fd, bytes, done, bytes.byteLength - done);
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed, or the file system refused: nothing to keep.
  }
}

/** Temp names keep a readable prefix of the target but stay under NAME_MAX (255 bytes). */
function tempName(name: string): string {
  let prefix = name;
  while (Buffer.byteLength(prefix, 'utf8') > 200) prefix = prefix.slice(0, -1);
  return `.${prefix}.skein-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
}

/** Whether `candidate` is a temp file `tempName(name)` made (by any process: a crashed host leaves them). */
export function isTempFor(name: string, candidate: string): boolean {
  const m = /^\.(.+)\.skein-\d+-[0-9a-f]{8}\.tmp$/.exec(candidate);
  return m !== null && name.startsWith(m[1]!) && Buffer.byteLength(m[1]!, 'utf8') <= 200;
}

/** A temp file written and fsync'd beside its target, waiting to be renamed into place or discarded. */
export type Staged = {
  /** Renames the temp file over the target (atomic), then fsyncs the directory. */
  commit(): Promise<void>;
  /** Removes the temp file (never throws). */
  discard(): Promise<void>;
  /** mtime of the written file, from its descriptor. */
  mtimeMs: number;
};

/**
 * Writes `data` into a new temp file in the directory `dirFd` and fsyncs it; `commit()` renames it onto
 * `name` in that same directory. `mode` (permission bits) is applied exactly when given.
 */
/**
 * `noReplace`: the file is created, never put over one: the commit links the temp in (link(2) fails with EEXIST
 * where anything, a dangling link too, has the name) instead of renaming it over whatever got there since.
 */
export async function stageIn(
  dirFd: number,
  name: string,
  data: Uint8Array | string,
  mode?: number,
  noReplace = false,
): Promise<Staged> {
  const tmp = tempName(name);
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const fd = await openFd(atFd(dirFd, tmp), flags, mode ?? 0o666);
  const discard = async () => {
    try {
      unlinkSync(atFd(dirFd, tmp));
    } catch {
      // Gone already: nothing to discard.
    }
  };
  let mtimeMs: number;
  try {
    await writeAll(fd, data);
    // The stat gives the mtime (chmod and fsync leave it) and whether the umask took bits of `mode` away: most
    // writes need no chmod then.
    const st = fstatSync(fd);
    mtimeMs = st.mtimeMs;
    if (mode !== undefined && (st.mode & 0o7777) !== mode) fchmodSync(fd, mode);
    await fsyncFd(fd);
  } catch (err) {
    closeQuietly(fd);
    await discard();
    throw err;
  }
  closeSync(fd);
  return {
    mtimeMs,
    discard,
    async commit() {
      try {
        if (noReplace) linkIn(atFd(dirFd, tmp), atFd(dirFd, name));
        else renameSync(atFd(dirFd, tmp), atFd(dirFd, name));
      } catch (err) {
        await discard();
        throw err;
      }
      if (noReplace) await discard();
      // Durability of the rename itself, on the descriptor the rename went through (opened O_RDONLY, so it can
      // be fsync'd); a file system that cannot fsync a directory still renamed.
      await fsyncFd(dirFd).catch(() => undefined);
    },
  };
}

/**
 * Puts `tmp` at `target` only where nothing is (EEXIST otherwise). A file system without hard links (EPERM,
 * ENOTSUP: some FUSE and FAT mounts) gets a check for a name there, then the rename: a window of one system call.
 */
function linkIn(tmp: string, target: string): void {
  try {
    linkSync(tmp, target);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw err;
    try {
      lstatSync(target);
    } catch (missing) {
      if ((missing as NodeJS.ErrnoException).code !== 'ENOENT') throw missing;
      renameSync(tmp, target);
      return;
    }
    throw Object.assign(new Error(`EEXIST: file already exists, '${target}'`), { code: 'EEXIST' });
  }
}

/** Stages and commits in one step: the atomic write of `name` in the open directory `dirFd`. */
export async function atomicWriteIn(
  dirFd: number,
  name: string,
  data: Uint8Array | string,
  mode?: number,
): Promise<{ mtimeMs: number }> {
  const staged = await stageIn(dirFd, name, data, mode);
  await staged.commit();
  return { mtimeMs: staged.mtimeMs };
}

/**
 * Stages a write of the file at `path` in a directory skein trusts (its data dir, a policy file's
 * directory), creating the directory when missing. Not for workspace files: those go through
 * `confined-fs.ts`.
 */
export async function stageFile(
  path: string,
  data: Uint8Array | string,
  mode?: number,
  noReplace = false,
): Promise<Staged> {
  const dirPath = dirname(path);
  const openDir = () => openSync(dirPath, constants.O_RDONLY | constants.O_DIRECTORY);
  // The directory is made only when missing (the blob store's 256 fan-out directories exist after their first blob).
  let dirFd: number;
  try {
    dirFd = openDir();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    // A new directory is an inode to allocate too (see WRITE_HERE_MAX): made in the pool.
    await mkdirAsync(dirPath, { recursive: true });
    dirFd = openDir();
  }
  let staged: Staged;
  try {
    staged = await stageIn(dirFd, basename(path), data, mode, noReplace);
  } catch (err) {
    closeQuietly(dirFd);
    throw err;
  }
  const close = async () => closeQuietly(dirFd);
  return {
    mtimeMs: staged.mtimeMs,
    commit: () => staged.commit().finally(close),
    discard: () => staged.discard().finally(close),
  };
}

/** Atomically replaces the file at `path` (a trusted location; see `stageFile`). */
export async function writeFileAtomic(path: string, data: Uint8Array | string, mode?: number): Promise<void> {
  const staged = await stageFile(path, data, mode);
  await staged.commit();
}
