/**
 * @module
 * The confined walk under every workspace file access: a path is walked one component at a time from an
 * open descriptor of its root; each directory is opened through `/proc/self/fd/<parent>/<name>` with
 * `O_NOFOLLOW | O_DIRECTORY`, so the kernel never follows a symlink on skein's behalf. A symlink met on the
 * way is read (`readlink`) and its target walked the same way, from the root it lands in; a target outside
 * every root, or a `..` that would climb above a root, is refused. Whatever a concurrent process renames or
 * swaps meanwhile, the walk ends at a directory reached from the root without following a link: it can fail
 * (bounded retries), never escape. The operations on what it reaches are in `confined-fs.ts`.
 */
import { constants } from 'node:fs';
import { lstatSync, readlinkSync } from 'node:fs';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { lstatNow } from './stat-now.ts';
import { confine, normalizePath } from '../../machines/common/confine.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { pathProblem } from '../../schemas/paths.ts';
import { atFd } from './atomic-write.ts';
import { type OpenRoot, openRoot } from './root-cache.ts';

/** Linux's limit on symlinks followed in one resolution (MAXSYMLINKS). */
const MAX_SYMLINKS = 40;
/** Times one walk looks again at components that changed under it before giving up. */
const MAX_RETRIES = 16;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/** Real paths of the roots (roots must exist; cached while each names the same directory: `root-cache.ts`). */
export async function realRoots(roots: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of roots) {
    const root = await openRoot(r);
    root.release();
    out.push(root.real);
  }
  return out;
}

/** The end of a walk: the open directory that holds `name` (undefined name: the root itself). */
export type Walked = {
  dir: FileHandle;
  /** Real absolute path of `dir`. */
  dirPath: string;
  name: string | undefined;
  /**
   * A `plan` walk met a missing directory: `dirPath` is where the parents would be (the deepest existing one's
   * real path and the missing names after it), and `dir` the deepest existing one, which does not hold `name`.
   */
  missing?: true;
  close(): Promise<void>;
};

/**
 * What a walk does with a missing parent directory: `false` refuses it, `true` creates it (each inside the
 * directory the walk reached), `plan` creates nothing and ends the walk where the path would be (see `missing`).
 * With `within`, a directory is created only on the way to that real path: a directory on the way swapped for
 * a link after the path was judged creates nothing elsewhere.
 */
export type Parents = boolean | 'plan' | { create: true; within: string };

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
export async function walk(
  roots: readonly string[],
  given: string,
  followFinal: boolean,
  createParents: Parents = false,
): Promise<Walked> {
  checkGiven(given, roots);
  const opened: OpenRoot[] = [];
  const release = () => {
    for (const r of opened.splice(0)) r.release();
  };
  try {
    for (const r of roots) opened.push(await openRoot(r));
  } catch (err) {
    release();
    throw err;
  }
  const real = opened.map((r) => r.real);
  const spellings = roots.map((r, i) => [real[i]!, normalizePath(r.startsWith('/') ? r : `${process.cwd()}/${r}`)]);
  const start = confine(spellings, given);
  if (!start.ok) {
    release();
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `Path ${JSON.stringify(given)} is outside the agent's workspace ` +
        `(${real.join(', ')}). Use a path inside a workspace root.`,
      { details: { path: given } },
    );
  }
  const held: FileHandle[] = [];
  const close = async () => {
    for (const h of held.splice(0)) await h.close().catch(() => undefined);
    release();
  };
  // `stack` holds the descriptors of the directories from the root down; `names` their real names.
  let names: string[] = [];
  let rootIndex = start.root;
  // The roots' descriptors are the cache's, held open across walks (released, never closed, by `close`).
  const rootDir = (i: number): FileHandle => opened[i]!.dir;
  let stack: FileHandle[] = [];
  try {
    stack = [rootDir(rootIndex)];
    const queue = [...start.parts];
    let hops = 0;
    let retries = 0;
    /** A component that changed between two looks is looked at again, a bounded number of times. */
    const retry = (name: string) => {
      if (++retries > MAX_RETRIES)
        throw new RuntimeError(
          ErrorCode.Conflict,
          `Path ${JSON.stringify(given)} keeps changing while it is resolved (something renames it in a loop). ` +
            `Retry when it is stable.`,
          { retryable: true },
        );
      queue.unshift(name);
    };
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
      // On this thread (stat-now.ts): a walk looks at each component, ~1 µs here against ~35 through the pool.
      const st = lstatSync(at, { throwIfNoEntry: false });
      if (st?.isSymbolicLink() && (!last || followFinal)) {
        if (++hops > MAX_SYMLINKS)
          throw new RuntimeError(
            ErrorCode.InvalidMessage,
            `Path ${JSON.stringify(given)} goes through more than ${MAX_SYMLINKS} symlinks. Use a direct path.`,
          );
        let target: string;
        try {
          target = readlinkSync(at);
        } catch (err) {
          // Swapped for something else since the lstat: look at this component again.
          if ((err as NodeJS.ErrnoException).code === 'EINVAL' || (err as NodeJS.ErrnoException).code === 'ENOENT') {
            retry(name);
            continue;
          }
          throw err;
        }
        const absolute = normalizePath(target.startsWith('/') ? target : `${here()}/${target}`);
        if (target.startsWith('/')) {
          const landed = confine(spellings, target);
          if (!landed.ok) throw escaped(absolute);
          rootIndex = landed.root;
          stack = [rootDir(rootIndex)];
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
      const rest = queue.filter((n) => n !== '' && n !== '.');
      // Nothing below a missing directory exists, so the rest is read as written; a `..` there climbs back into
      // directories that do exist (and may hold links): that is walked only once the directory exists.
      if (!st && createParents === 'plan' && !rest.includes('..')) {
        const dirPath = [here(), name, ...rest.slice(0, -1)].join('/');
        return { dir: top, dirPath, name: rest.at(-1), missing: true, close };
      }
      if (!st && createParents && createParents !== 'plan') {
        const within = typeof createParents === 'object' ? createParents.within : undefined;
        if (within !== undefined && !within.startsWith(`${here()}/${name}/`))
          throw new RuntimeError(
            ErrorCode.PermissionDenied,
            `${JSON.stringify(given)} now leads to ${JSON.stringify(`${here()}/${name}`)}, not toward ` +
              `${JSON.stringify(within)} as when it was judged (a directory on the way changed); nothing was ` +
              'created. Check the path and call again.',
          );
        await mkdir(at).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== 'EEXIST') throw err;
        });
      } else if (!st)
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
          const now = lstatNow(at);
          if (now?.isSymbolicLink()) {
            retry(name); // became a symlink since the lstat: resolve it as one
            continue;
          }
          throw new RuntimeError(
            ErrorCode.InvalidMessage,
            `Can't create file: parent is not a directory: ` +
              `${JSON.stringify(`${here()}/${name}`)}. Choose a path whose parent is a directory.`,
          );
        }
        if (code === 'ENOENT') {
          retry(name);
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
