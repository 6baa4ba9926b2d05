/**
 * @module
 * Watches the global and project policy files for changes made on disk (an editor, `git checkout`): one
 * non-recursive `fs.watch` on each file's directory, or on its nearest existing ancestor until the directory
 * appears. Changes are debounced, then the file is read and validated with the policy schema, and `onChange`
 * gets the new policy (an absent file is an empty layer) or the error naming the bad key.
 *
 * The project file is read, and its directory watched, from the workspace root skein pinned
 * (`actors/common/root-cache.ts`), through the root's open descriptor, never through whatever the root's name
 * points to now. A root renamed away, deleted, or swapped for a symlink (an agent's shell can do each) tells
 * nothing about the project's policy: its file is then neither read (a symlink out would have skein load a
 * policy from outside, a missing root would read as a deleted file and drop the project's rules) nor applied;
 * the layer in force holds, the root's parent is watched, and the file is read again once the root is back.
 */
import { type FSWatcher, statSync, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Policy } from '../../schemas/policy.ts';
import { atFd } from '../common/atomic-write.ts';
import { type OpenRoot, openRoot } from '../common/root-cache.ts';
import { parsePolicyText } from './policy-files.ts';

/** Quiet time after the last change before the file is read: editors write in several steps. */
export const POLICY_DEBOUNCE_MS = 100;

export type PolicyFileLayer = 'global' | 'project';
export type PolicyFileRead = { ok: true; policy: Policy | undefined } | { ok: false; error: string };

/** A policy file to watch; `root` is the workspace that holds it (the project file), read from the pinned root. */
export type WatchedPolicyFile = { layer: PolicyFileLayer; path: string; root?: string };

export type PolicyWatch = { close: () => void };

/** Reads and validates one policy file: the policy, undefined when absent, or the error text. */
export async function readPolicyFile(path: string, shown = path): Promise<PolicyFileRead> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, policy: undefined };
    return { ok: false, error: `Policy file '${shown}' cannot be read (${(err as Error).message}).` };
  }
  try {
    return { ok: true, policy: parsePolicyText(text, shown) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/** Watches each file; `onChange` runs once per settled change, never twice at once for one file. */
export function watchPolicyFiles(
  files: ReadonlyArray<WatchedPolicyFile>,
  onChange: (layer: PolicyFileLayer, path: string, read: PolicyFileRead) => Promise<void>,
  logger: Logger,
  debounceMs = POLICY_DEBOUNCE_MS,
): PolicyWatch {
  const closers = files.map((file) =>
    watchOne(file, (read) => onChange(file.layer, file.path, read), logger, debounceMs),
  );
  return { close: () => closers.forEach((c) => c()) };
}

/** Where a file is now: the directories to watch (nearest first) and its reader, or why it cannot be read. */
type Located = {
  dirs: Array<{ watch: string; shown: string }>;
  read?: () => Promise<PolicyFileRead>;
  unavailable?: string;
  release: () => void;
};

function watchOne(
  file: WatchedPolicyFile,
  onChange: (read: PolicyFileRead) => Promise<void>,
  logger: Logger,
  debounceMs: number,
): () => void {
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let closed = false;
  const { path } = file;

  // Located, watched, then read: a change after the watch is armed is an event, one before it is in the read.
  const settle = () => {
    running = running
      .then(async () => {
        if (closed) return;
        const at = await locate(file);
        try {
          arm(at.dirs);
          if (!at.read) {
            logger.warn({ path, reason: at.unavailable }, 'policy file not read; the policy in force holds');
            return;
          }
          await onChange(await at.read());
        } finally {
          at.release();
        }
      })
      .catch((err: unknown) => logger.warn({ err, path }, 'policy file change not applied'));
  };
  const changed = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(settle, debounceMs);
  };
  // Armed afresh at every settled change, even on a directory of the same name and inode number: a directory
  // removed and made again often gets the freed inode back (ext4), and the old watch died with the old one.
  const arm = (dirs: Located['dirs']) => {
    if (closed) return;
    for (const { watch: dir, shown } of dirs) {
      if (!isDirectory(dir)) continue;
      try {
        const next = watch(dir, { persistent: false }, changed);
        next.on('error', (err) => {
          logger.warn({ err, path: shown }, 'policy watch failed; watching again');
          changed();
        });
        watcher?.close();
        watcher = next;
        if (shown !== dirs[0]?.shown)
          logger.debug({ path, watching: shown }, 'policy directory missing; watching above');
        return;
      } catch {
        // Gone between the check and the watch, or not watchable: the next one up.
      }
    }
    logger.warn({ path }, 'policy file cannot be watched; changes apply at restart');
  };
  // Read once armed too: an edit between the load at startup and this watch is not lost (equal content is a no-op).
  settle();
  logger.debug({ path, file: basename(path) }, 'watching policy file');
  return () => {
    closed = true;
    if (timer) clearTimeout(timer);
    watcher?.close();
  };
}

/**
 * A file without a root: its directory and each ancestor by name. A file in a root: its directories from the
 * root's descriptor (held until `release`), or, when the root is missing or moved, the ancestors above it.
 */
async function locate(file: WatchedPolicyFile): Promise<Located> {
  if (file.root === undefined)
    return { dirs: ancestors(dirname(file.path)), read: () => readPolicyFile(file.path), release: () => undefined };
  const root = resolve(file.root);
  const rel = relative(root, resolve(file.path));
  // Not inside its root (never so as wired): watched and read by name.
  if (rel === '' || rel === '..' || rel.startsWith('../') || isAbsolute(rel))
    return locate({ layer: file.layer, path: file.path });
  let held: OpenRoot;
  try {
    held = await openRoot(root);
  } catch (err) {
    return { dirs: ancestors(dirname(root)), unavailable: (err as Error).message, release: () => undefined };
  }
  const dirs: Located['dirs'] = [];
  for (let d = dirname(rel); ; d = dirname(d)) {
    const inRoot = d === '.' ? '' : d;
    dirs.push({ watch: atFd(held.dir.fd, inRoot), shown: join(root, inRoot) });
    if (d === '.' || d === dirname(d)) break;
  }
  return {
    dirs,
    read: () => readPolicyFile(atFd(held.dir.fd, rel), file.path),
    release: () => held.release(),
  };
}

function ancestors(dir: string): Located['dirs'] {
  const out: Located['dirs'] = [];
  for (let d = dir; ; d = dirname(d)) {
    out.push({ watch: d, shown: d });
    if (d === dirname(d)) return out;
  }
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
