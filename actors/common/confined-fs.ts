/**
 * @module
 * Race-proof file access inside an agent's workspace roots. A path is walked one component at a time from
 * an open descriptor of the root: each directory is opened through `/proc/self/fd/<parent>/<name>` with
 * `O_NOFOLLOW | O_DIRECTORY`, so the kernel never follows a symlink on skein's behalf. A symlink met on the
 * way is read (`readlink`) and its target walked the same way, from the root it lands in; a target outside
 * every root, or a `..` that would climb above a root, is refused. The file itself is opened with
 * `O_NOFOLLOW` from the descriptor of its directory, and a write's temp file is created and renamed in that
 * same directory (`atomic-write.ts`). Whatever a concurrent process renames or swaps meanwhile, every step
 * acts on an object reached from the root without following a link: it can fail, never escape.
 *
 * Files are refused when they are not regular (FIFOs, devices, sockets: opening them can block or have
 * effects) or have more than one hard link (a hard link can share its content with a file outside).
 */
import { constants } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readlink, realpath, unlink } from 'node:fs/promises';
import { confine, normalizePath } from '../../machines/common/confine.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { pathProblem } from '../../schemas/paths.ts';
import { atFd, atomicWriteIn, type Staged, stageIn } from './atomic-write.ts';

/** Linux's limit on symlinks followed in one resolution (MAXSYMLINKS). */
const MAX_SYMLINKS = 40;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** A path resolved inside a root: its real absolute path and what is there. */
export type ResolvedPath = { path: string; exists: boolean; isDirectory: boolean };

/** Real paths of the roots (resolved once per call; roots must exist). */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of roots) {
    try {
      out.push(await realpath(r));
    } catch {
      throw new RuntimeError(
        ErrorCode.NotFound,
        `Worktree at '${r}' does not exist. Configure an existing workspace root for this agent.`,
      );
    }
  }
  return out;
}

/** The end of a walk: the open directory that holds `name` (undefined name: the root itself). */
type Walked = {
  dir: FileHandle;
  /** Real absolute path of `dir`. */
  dirPath: string;
  name: string | undefined;
  close(): Promise<void>;
};

function checkGiven(given: string, roots: readonly string[]): void {
  const problem = pathProblem(given);
  if (problem)
    throw new RuntimeError(ErrorCode.InvalidMessage, `Path ${JSON.stringify(given.slice(0, 80))} ${problem}.`, {
      details: { field: 'path' },
    });
  if (roots.length === 0)
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      'This agent has no workspace roots, so it cannot touch files. Configure a workspace root for the agent.',
    );
}

/**
 * Walks `given` from the roots without following symlinks, down to the directory that holds its last
 * component. Symlinks met on the way are resolved by the walk itself, inside the roots. The caller closes.
 */
async function walk(
  roots: readonly string[],
  given: string,
  followFinal: boolean,
  createParents = false,
): Promise<Walked> {
  checkGiven(given, roots);
  const real = await realRoots(roots);
  const spellings = roots.map((r, i) => [real[i]!, normalizePath(r.startsWith('/') ? r : `${process.cwd()}/${r}`)]);
  const start = confine(spellings, given);
  if (!start.ok)
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `Path ${JSON.stringify(given)} is outside the agent's workspace ` +
        `(${real.join(', ')}). Use a path inside a workspace root.`,
      { details: { path: given } },
    );
  const held: FileHandle[] = [];
  const close = async () => {
    for (const h of held.splice(0)) await h.close().catch(() => undefined);
  };
  // `stack` holds the descriptors of the directories from the root down; `names` their real names.
  let names: string[] = [];
  let rootIndex = start.root;
  const openRoot = async (i: number): Promise<FileHandle> => {
    const h = await open(real[i]!, constants.O_RDONLY | constants.O_DIRECTORY);
    held.push(h);
    return h;
  };
  let stack: FileHandle[] = [];
  try {
    stack = [await openRoot(rootIndex)];
    const queue = [...start.parts];
    let hops = 0;
    const here = () => [real[rootIndex]!, ...names].join('/');
    const escaped = (target: string) =>
      new RuntimeError(
        ErrorCode.PermissionDenied,
        `Path ${JSON.stringify(given)} resolves through a symlink to ${JSON.stringify(target)}, ` +
          `outside the agent's workspace. Edit files inside the workspace, or ask for permission.`,
        { details: { path: given, target } },
      );
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (name === '' || name === '.') continue;
      const last = queue.every((n) => n === '' || n === '.');
      if (name === '..') {
        // Only reachable from a symlink's target (the request itself was normalized): never above a root.
        if (stack.length === 1) throw escaped(normalizePath(`${here()}/..`));
        stack.pop();
        names = names.slice(0, -1);
        continue;
      }
      const top = stack[stack.length - 1]!;
      const at = atFd(top.fd, name);
      const st = await lstat(at).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'ENOENT') return undefined;
        throw err;
      });
      if (st?.isSymbolicLink() && (!last || followFinal)) {
        if (++hops > MAX_SYMLINKS)
          throw new RuntimeError(
            ErrorCode.InvalidMessage,
            `Path ${JSON.stringify(given)} goes through more than ${MAX_SYMLINKS} symlinks. Use a direct path.`,
          );
        let target: string;
        try {
          target = await readlink(at);
        } catch (err) {
          // Swapped for something else since the lstat: look at this component again.
          if ((err as NodeJS.ErrnoException).code === 'EINVAL' || (err as NodeJS.ErrnoException).code === 'ENOENT') {
            queue.unshift(name);
            continue;
          }
          throw err;
        }
        const absolute = normalizePath(target.startsWith('/') ? target : `${here()}/${target}`);
        if (target.startsWith('/')) {
          const landed = confine(spellings, target);
          if (!landed.ok) throw escaped(absolute);
          rootIndex = landed.root;
          stack = [await openRoot(rootIndex)];
          names = [];
          queue.unshift(...landed.parts);
        } else {
          // A relative target is walked from this directory; its `..` pop the stack, never past the root.
          const lexical = confine(spellings, absolute);
          if (!lexical.ok) throw escaped(absolute);
          queue.unshift(...target.split('/'));
        }
        continue;
      }
      if (last) return { dir: top, dirPath: here(), name, close };
      if (!st && createParents)
        await mkdir(at).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'EEXIST') throw err;
        });
      else if (!st)
        throw new RuntimeError(
          ErrorCode.NotFound,
          `Can't create file: parent directory doesn't exist: ` +
            `${JSON.stringify([here(), name, ...queue.slice(0, -1)].join('/'))}. ` +
            `Create the directory first, then write the file.`,
        );
      let dir: FileHandle;
      try {
        dir = await open(at, DIR_FLAGS);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOTDIR' || code === 'ELOOP') {
          const now = await lstat(at).catch(() => undefined);
          if (now?.isSymbolicLink()) {
            queue.unshift(name); // became a symlink since the lstat: resolve it as one
            continue;
          }
          throw new RuntimeError(
            ErrorCode.InvalidMessage,
            `Can't create file: parent is not a directory: ` +
              `${JSON.stringify(`${here()}/${name}`)}. Choose a path whose parent is a directory.`,
          );
        }
        if (code === 'ENOENT') {
          queue.unshift(name);
          continue;
        }
        throw err;
      }
      held.push(dir);
      stack.push(dir);
      names = [...names, name];
    }
    return { dir: stack[stack.length - 1]!, dirPath: here(), name: undefined, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Resolves `given` (absolute, or relative to the first root) to its real path inside a root, following
 * symlinks only inside the roots. A missing file is allowed (for creation) when its directory exists; a
 * dangling symlink is refused.
 */
export async function resolveInWorkspace(roots: readonly string[], given: string): Promise<ResolvedPath> {
  const w = await walk(roots, given, true);
  try {
    if (w.name === undefined) return { path: w.dirPath, exists: true, isDirectory: true };
    const path = `${w.dirPath}/${w.name}`;
    const st = await lstat(atFd(w.dir.fd, w.name)).catch(() => undefined);
    if (st?.isSymbolicLink())
      throw new RuntimeError(
        ErrorCode.PermissionDenied,
        `Path ${JSON.stringify(given)} is a symlink to a missing target. Edit a regular file inside the workspace.`,
      );
    return { path, exists: st !== undefined, isDirectory: st?.isDirectory() ?? false };
  } finally {
    await w.close();
  }
}

/** A file read through the confined walk. */
export type ConfinedFile = { path: string; bytes: Buffer; mode: number; mtimeMs: number };

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
    const pre = await lstat(at).catch(() => undefined);
    if (!pre) return undefined;
    // Checked before opening too: opening a FIFO or a device can block or act.
    checkFile(pre, shown, 'read');
    const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;
    const fh = await open(at, flags).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ELOOP')
        throw new RuntimeError(
          ErrorCode.Conflict,
          `Path ${JSON.stringify(shown)} was replaced by a symlink while being read. Read it again.`,
        );
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!fh) return undefined;
    try {
      const st = await fh.stat();
      checkFile(st, shown, 'read');
      if (st.size > maxBytes)
        throw new RuntimeError(
          ErrorCode.LimitExceeded,
          `Can't edit file: ${JSON.stringify(shown)} is ${st.size} bytes, over ` +
            `the ${maxBytes}-byte limit. Edit a smaller file or raise maxFileBytes.`,
        );
      const bytes = await fh.readFile();
      return { path: `${w.dirPath}/${w.name}`, bytes, mode: st.mode & 0o7777, mtimeMs: st.mtimeMs };
    } finally {
      await fh.close();
    }
  } finally {
    await w.close();
  }
}

/** Checks what a write would replace: nothing, or a single-link regular file. */
async function checkTarget(dirFd: number, name: string, shown: string): Promise<void> {
  const st = await lstat(atFd(dirFd, name)).catch(() => undefined);
  if (st?.isSymbolicLink())
    throw new RuntimeError(
      ErrorCode.Conflict,
      `Path ${JSON.stringify(shown)} became a symlink while being written. Read it again and retry.`,
    );
  if (st) checkFile(st, shown, 'write');
}

/**
 * Atomically writes `data` to `given` confined to the roots: the temp file is created and renamed inside the
 * directory reached by the walk (never through a path that could be swapped). Returns the real path written.
 */
export async function writeConfined(
  roots: readonly string[],
  given: string,
  data: Uint8Array | string,
  mode?: number,
  shown = given,
): Promise<{ path: string; mtimeMs: number }> {
  const w = await walk(roots, given, true);
  try {
    if (w.name === undefined) throw checkDirectory(shown);
    await checkTarget(w.dir.fd, w.name, shown);
    const { mtimeMs } = await atomicWriteIn(w.dir.fd, w.name, data, mode);
    return { path: `${w.dirPath}/${w.name}`, mtimeMs };
  } finally {
    await w.close();
  }
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
): Promise<Staged> {
  const w = await walk(roots, given, true, createParents);
  let staged: Staged;
  try {
    if (w.name === undefined) throw checkDirectory(given);
    await checkTarget(w.dir.fd, w.name, given);
    staged = await stageIn(w.dir.fd, w.name, data, mode);
  } catch (err) {
    await w.close();
    throw err;
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
export async function removeConfined(roots: readonly string[], given: string): Promise<void> {
  const w = await walk(roots, given, false).catch((err: unknown) => {
    if (err instanceof RuntimeError && err.code === ErrorCode.NotFound) return undefined; // its directory is gone
    throw err;
  });
  if (!w) return;
  try {
    if (w.name === undefined) throw checkDirectory(given);
    await unlink(atFd(w.dir.fd, w.name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  } finally {
    await w.close();
  }
}

function checkDirectory(shown: string): RuntimeError {
  return new RuntimeError(
    ErrorCode.InvalidMessage,
    `Can't write to file: path is a directory: ${JSON.stringify(shown)}. Give the path of a file.`,
  );
}
