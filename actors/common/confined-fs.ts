/**
 * @module
 * Race-proof file operations inside an agent's workspace roots, on what the confined walk
 * (`confined-walk.ts`) reaches: resolve, read, write (atomic, the temp file created and renamed in the
 * walked directory: `atomic-write.ts`), stage for all-or-nothing plans, and remove.
 *
 * Files are refused when they are not regular (FIFOs, devices, sockets: opening them can block or have
 * effects) or have more than one hard link (a hard link can share its content with a file outside).
 */
import { closeSync, fstatSync, openSync, read, readFile } from 'node:fs';
import { readdir, unlink } from 'node:fs/promises';
import { promisify } from 'node:util';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { atFd, atomicWriteIn, isTempFor, type Staged, stageIn } from './atomic-write.ts';
import { type Walked, walk } from './confined-walk.ts';
import { READ_NOFOLLOW } from './read-regular.ts';
import { lstatNow } from './stat-now.ts';

export { realRoots } from './confined-walk.ts';

/** A path resolved inside a root: its real absolute path and what is there. */
export type ResolvedPath = { path: string; exists: boolean; isDirectory: boolean };

/**
 * The entry a walk ended on (`name` in the directory it reached): its real path and lstat, undefined when
 * missing. The walk follows symlinks inside the roots, so a symlink still here points at nothing: refused.
 */
function lastEntry(w: Walked, name: string, given: string) {
  const st = lstatNow(atFd(w.dir.fd, name));
  if (st?.isSymbolicLink())
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `Path ${JSON.stringify(given)} is a symlink to a missing target. Edit a regular file inside the workspace.`,
    );
  return { path: `${w.dirPath}/${name}`, st };
}

/**
 * Resolves `given` (absolute, or relative to the first root) to its real path inside a root, following
 * symlinks only inside the roots. A missing file is allowed (for creation) when its directory exists, or,
 * with `createParents`, once the walk has created the missing directories (each one inside the directory it
 * reached, so a parent that is a symlink out of the workspace is refused before anything is created), or, with
 * `plan`, as where it would be once they are (nothing created); a dangling symlink is refused.
 */
export async function resolveInWorkspace(
  roots: readonly string[],
  given: string,
  createParents: boolean | 'plan' = false,
): Promise<ResolvedPath> {
  const w = await walk(roots, given, true, createParents);
  try {
    if (w.missing) return { path: `${w.dirPath}/${w.name}`, exists: false, isDirectory: false };
    if (w.name === undefined) return { path: w.dirPath, exists: true, isDirectory: true };
    const { path, st } = lastEntry(w, w.name, given);
    return { path, exists: st !== undefined, isDirectory: st?.isDirectory() ?? false };
  } finally {
    await w.close();
  }
}

/**
 * A file read through the confined walk. `stamp`: its inode, size, mtime and ctime as read (`stampOf`): a write
 * given it replaces the file only while it still has them (`writeConfined`).
 */
export type ConfinedFile = { path: string; bytes: Buffer; mode: number; mtimeMs: number; stamp: string };

/** What tells a file changed since it was read: inode, size, mtime and ctime (a chmod or a new link too). */
export function stampOf(st: { ino: number; size: number; mtimeMs: number; ctimeMs: number }): string {
  return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/** Refuses what is not a single-link regular file, naming `shown` and saying why. */
function checkFile(st: { isDirectory(): boolean; isFile(): boolean; nlink: number }, shown: string, verb: string) {
  if (st.isDirectory())
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `Can't ${verb} file: path is a directory: ${JSON.stringify(shown)}. Give the path of a file.`,
    );
  if (!st.isFile())
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `Can't ${verb} file: ${JSON.stringify(shown)} is not a regular file (a FIFO, socket or device). ` +
        `Only regular files can be read and written.`,
    );
  if (st.nlink > 1)
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `Can't ${verb} file: ${JSON.stringify(shown)} has ${st.nlink} hard links, and a hard link can share its ` +
        `content with a file outside the workspace, so skein refuses it. Replace it with a copy ` +
        `(cp --remove-destination) if it is meant to be in the workspace.`,
      { details: { path: shown, nlink: st.nlink } },
    );
}

/**
 * Reads a file confined to the roots: the file is opened with `O_NOFOLLOW` from its directory's
 * descriptor, checked on that descriptor (regular, one link, at most `maxBytes`) and read from it. Returns
 * undefined when the file does not exist.
 */
export async function readConfined(
  roots: readonly string[],
  given: string,
  maxBytes: number,
  shown = given,
): Promise<ConfinedFile | undefined> {
  const w = await walk(roots, given, true);
  try {
    if (w.name === undefined) checkFile({ isDirectory: () => true, isFile: () => false, nlink: 1 }, shown, 'read');
    const at = atFd(w.dir.fd, w.name!);
    const pre = lstatNow(at);
    if (!pre) return undefined;
    return await readWalked(w, pre, maxBytes, shown);
  } finally {
    await w.close();
  }
}

/**
 * Resolves `given` like resolveInWorkspace and, when it is a file, reads it like readConfined, in one walk
 * (the file is opened from the directory the walk reached, so nothing can be swapped between the two).
 */
export async function resolveAndRead(
  roots: readonly string[],
  given: string,
  maxBytes: number,
  createParents: boolean | 'plan' = false,
): Promise<ResolvedPath & { file: ConfinedFile | undefined }> {
  const w = await walk(roots, given, true, createParents);
  try {
    if (w.missing) return { path: `${w.dirPath}/${w.name}`, exists: false, isDirectory: false, file: undefined };
    if (w.name === undefined) return { path: w.dirPath, exists: true, isDirectory: true, file: undefined };
    const { path, st } = lastEntry(w, w.name, given);
    if (!st || st.isDirectory())
      return { path, exists: st !== undefined, isDirectory: st !== undefined, file: undefined };
    const file = await readWalked(w, st, maxBytes, given);
    return { path, exists: file !== undefined, isDirectory: false, file };
  } finally {
    await w.close();
  }
}

/** Reads the file `w` reached, whose lstat was `pre`; undefined when it is gone meanwhile. */
async function readWalked(
  w: Walked,
  pre: { isDirectory(): boolean; isFile(): boolean; nlink: number },
  maxBytes: number,
  shown: string,
): Promise<ConfinedFile | undefined> {
  {
    const at = atFd(w.dir.fd, w.name!);
    // Checked before opening too: opening a FIFO or a device can block or act.
    checkFile(pre, shown, 'read');
    // Opened and checked on this thread: a few µs each against ~35 through the pool (stat-now.ts). A regular
    // file, checked by the lstat (and opened O_NONBLOCK in case it was swapped since): opening it cannot block.
    let fd: number;
    try {
      fd = openSync(at, READ_NOFOLLOW);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ELOOP')
        throw new RuntimeError(
          ErrorCode.Conflict,
          `Path ${JSON.stringify(shown)} was replaced by a symlink while being read. Read it again.`,
        );
      if (code === 'ENOENT') return undefined;
      throw err;
    }
    try {
      const st = fstatSync(fd);
      checkFile(st, shown, 'read');
      if (st.size > maxBytes)
        throw new RuntimeError(
          ErrorCode.LimitExceeded,
          `Can't edit file: ${JSON.stringify(shown)} is ${st.size} bytes, over the ${maxBytes}-byte limit. ` +
            'Edit a smaller file, or raise domains.edit.maxFileBytes in the runtime config.',
        );
      const bytes = await readAll(fd, st.size);
      const file = { path: `${w.dirPath}/${w.name}`, bytes, mode: st.mode & 0o7777, mtimeMs: st.mtimeMs };
      return { ...file, stamp: stampOf(st) };
    } finally {
      closeSync(fd);
    }
  }
}

const readFd = promisify(read);
const readFileFd = promisify(readFile);

/**
 * The whole file, in one read when it still has the size fstat gave (a byte more is asked for, to see the end);
 * a file that grew meanwhile is read to its end. `readFile` would fstat again and read once more to find EOF.
 * The bytes are copied in the thread pool, unlike the open, fstat and close around them: 1,000 reads of a 30 KB
 * file at once took 1,250-1,320 ms (networked) and 1,640-1,780 ms (embedded) with the copy on the loop's thread,
 * 960-1,000 and 1,110-1,160 ms with it in the pool, where it runs beside the loop on the other core
 * (`npm run bench -- file-read`).
 */
async function readAll(fd: number, size: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafeSlow(size + 1);
  const { bytesRead } = await readFd(fd, buffer, 0, size + 1, 0);
  if (bytesRead <= size) return buffer.subarray(0, bytesRead);
  // Grew since the fstat. The read above was positioned (the descriptor's offset is still 0): all of it again.
  return readFileFd(fd);
}

/** Checks what a write would replace: nothing, or a single-link regular file. */
function checkTarget(dirFd: number, name: string, shown: string): void {
  const st = lstatNow(atFd(dirFd, name));
  if (st?.isSymbolicLink())
    throw new RuntimeError(
      ErrorCode.Conflict,
      `Path ${JSON.stringify(shown)} became a symlink while being written. Read it again and retry.`,
    );
  if (st) checkFile(st, shown, 'write');
}

const CHANGED_WHILE_WRITING = 'changedWhileWriting';

/** Whether `err` is writeConfined's refusal of a file changed (or made) since the stamp it was given. */
export function changedWhileWriting(err: unknown): boolean {
  return err instanceof RuntimeError && err.details?.[CHANGED_WHILE_WRITING] === true;
}

/**
 * Atomically writes `data` to `given` confined to the roots: the temp file is created and renamed inside the
 * directory reached by the walk (never through a path that could be swapped). Returns the real path written.
 * `replaces`: the stamp (`stampOf`) of the file the data was made from, checked once the data is staged, just
 * before the rename: a file written since (a command's) is not lost under it, the write fails as a conflict;
 * null: the write creates the file and is never put over one made since. Undefined: replaces whatever is there.
 */
export async function writeConfined(
  roots: readonly string[],
  given: string,
  data: Uint8Array | string,
  mode?: number,
  shown = given,
  expected?: string,
  replaces?: string | null,
): Promise<{ path: string; mtimeMs: number }> {
  // `dir/` names a directory: the walk drops the empty last part and would write a file `dir`.
  if (/\/\.?$/.test(given)) throw checkDirectory(shown);
  // Parents missing when the write was judged are created now, and only on the way to the judged path.
  const w = await walk(roots, given, true, expected === undefined ? false : { create: true, within: expected });
  try {
    if (w.name === undefined) throw checkDirectory(shown);
    // Where the walk leads now, not where it led when the write was judged: a directory on the way swapped for
    // a link in between (into .skein/ or .git/) would take the write there.
    if (expected !== undefined && `${w.dirPath}/${w.name}` !== expected) {
      throw new RuntimeError(
        ErrorCode.PermissionDenied,
        `${JSON.stringify(shown)} now leads to ${JSON.stringify(`${w.dirPath}/${w.name}`)}, not to ` +
          `${JSON.stringify(expected)} as when the write was judged (a directory on the way changed); nothing ` +
          'was written. Check the path and write again.',
      );
    }
    checkTarget(w.dir.fd, w.name, shown);
    if (replaces === undefined) {
      const { mtimeMs } = await atomicWriteIn(w.dir.fd, w.name, data, mode);
      return { path: `${w.dirPath}/${w.name}`, mtimeMs };
    }
    const staged = await stageIn(w.dir.fd, w.name, data, mode, replaces === null);
    const now = replaces === null ? undefined : lstatNow(atFd(w.dir.fd, w.name));
    const moved = () =>
      new RuntimeError(
        ErrorCode.Conflict,
        `${JSON.stringify(shown)} ${replaces === null ? 'was created' : 'changed'} on disk while this write was ` +
          'being made; that file was kept and nothing was written. Read it again and redo the change on it.',
        { details: { [CHANGED_WHILE_WRITING]: true } },
      );
    if (replaces !== null && (now === undefined || stampOf(now) !== replaces)) {
      await staged.discard();
      throw moved();
    }
    await staged.commit().catch((err: NodeJS.ErrnoException) => {
      throw err.code === 'EEXIST' ? moved() : err;
    });
    return { path: `${w.dirPath}/${w.name}`, mtimeMs: staged.mtimeMs };
  } catch (err) {
    throw writeFailure(shown, err);
  } finally {
    await w.close();
  }
}

const DISK_FULL = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/**
 * A workspace write's system error as one the agent can act on, naming the path it gave (not the temp file's
 * /proc path) and saying the file is unchanged (the write is atomic); any other error as it is. Found by a
 * review: a full or read-only workspace came back as `internal: ENOSPC: no space left on device, write`.
 */
function writeFailure(shown: string, err: unknown): unknown {
  if (err instanceof RuntimeError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const what = `Path ${JSON.stringify(shown)} could not be written`;
  if (code && DISK_FULL.has(code))
    return new RuntimeError(
      ErrorCode.Unavailable,
      `${what}: the disk holding it is full (${code}); the file is unchanged. Free space on that disk and retry.`,
      { retryable: true, cause: err },
    );
  if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM')
    return new RuntimeError(
      ErrorCode.InvalidState,
      `${what}: ${code === 'EROFS' ? 'its file system is read-only' : "the runtime's user may not write there"} ` +
        `(${code}); the file is unchanged. Ask the user to make it writable.`,
      { cause: err },
    );
  return err;
}

/**
 * Stages a confined write (for plans that write several files all-or-nothing): the directory stays open
 * until `commit()` or `discard()`.
 */
export async function stageConfined(
  roots: readonly string[],
  given: string,
  data: Uint8Array | string,
  mode?: number,
  createParents = false,
  exact = false,
  noReplace = false,
): Promise<Staged> {
  if (/\/\.?$/.test(given)) throw checkDirectory(given);
  const parents = exact && createParents ? { create: true as const, within: given } : createParents;
  const w = await walk(roots, given, true, parents).catch((err: unknown) => {
    throw writeFailure(given, err);
  });
  let staged: Staged;
  try {
    if (w.name === undefined) throw checkDirectory(given);
    if (exact) checkExact(w, given);
    checkTarget(w.dir.fd, w.name, given);
    staged = await stageIn(w.dir.fd, w.name, data, mode, noReplace);
  } catch (err) {
    await w.close();
    throw writeFailure(given, err);
  }
  return {
    mtimeMs: staged.mtimeMs,
    commit: () => staged.commit().finally(w.close),
    discard: () => staged.discard().finally(w.close),
  };
}

/**
 * Removes the file `given` confined to the roots (unlinked from the directory the walk reached, so a
 * directory swapped for a symlink cannot make it delete a file outside). A missing file is not an error.
 */
export async function removeConfined(roots: readonly string[], given: string, exact = false): Promise<void> {
  const w = await walk(roots, given, false).catch((err: unknown) => {
    if (err instanceof RuntimeError && err.code === ErrorCode.NotFound) return undefined; // its directory is gone
    throw err;
  });
  if (!w) return;
  try {
    if (w.name === undefined) throw checkDirectory(given);
    if (exact) checkExact(w, given);
    await unlink(atFd(w.dir.fd, w.name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  } finally {
    await w.close();
  }
}

/**
 * With `exact`, a path recorded as a real path (a review's) must still lead to itself: a directory on the way
 * swapped for a link since (to `.skein/`, or out of a sub-agent's workspace) would take the write elsewhere.
 */
function checkExact(w: Walked, given: string): void {
  const now = `${w.dirPath}/${w.name}`;
  if (now !== given) throw leadsElsewhere(given, now);
}

function leadsElsewhere(given: string, now: string): RuntimeError {
  return new RuntimeError(
    ErrorCode.PermissionDenied,
    `${JSON.stringify(given)} now leads to ${JSON.stringify(now)} (a directory on the way became a link since ` +
      'the change was recorded); nothing was read or written. Put the directory back, or review the file where ' +
      'it is now.',
    { details: { path: given, now } },
  );
}

/**
 * Reads a file recorded at the real path `given` (a review's), confined like readConfined and at that exact path
 * (see checkExact); null when it or its directory is missing.
 */
export async function readExact(roots: readonly string[], given: string, maxBytes: number): Promise<Buffer | null> {
  return (await readExactFile(roots, given, maxBytes))?.bytes ?? null;
}

/** readExact with the file's mode and mtime. */
export async function readExactFile(
  roots: readonly string[],
  given: string,
  maxBytes: number,
): Promise<ConfinedFile | null> {
  let file: ConfinedFile | undefined;
  try {
    file = await readConfined(roots, given, maxBytes);
  } catch (err) {
    if (err instanceof RuntimeError && err.code === ErrorCode.NotFound) return null; // its directory is gone
    throw err;
  }
  if (file && file.path !== given) throw leadsElsewhere(given, file.path);
  return file ?? null;
}

function checkDirectory(shown: string): RuntimeError {
  return new RuntimeError(
    ErrorCode.InvalidMessage,
    `Can't write to file: path is a directory: ${JSON.stringify(shown)}. Give the path of a file.`,
  );
}

/**
 * Removes the temp files an atomic write of `given` left beside it (a host killed between staging and
 * rename), confined like every other access. Returns how many were removed; a missing directory is none.
 */
export async function removeStaleTemps(roots: readonly string[], given: string): Promise<number> {
  const w = await walk(roots, given, false).catch(() => undefined);
  if (!w) return 0;
  try {
    if (w.name === undefined) return 0;
    const name = w.name;
    const stale = (await readdir(atFd(w.dir.fd, '.'))).filter((entry) => isTempFor(name, entry));
    for (const entry of stale) await unlink(atFd(w.dir.fd, entry)).catch(() => undefined);
    return stale.length;
  } finally {
    await w.close();
  }
}
