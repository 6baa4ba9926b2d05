/**
 * @module
 * Watches the global and project policy files for changes made on disk (an editor, `git checkout`): one
 * non-recursive `fs.watch` on each file's directory, or on its nearest existing ancestor until the directory
 * appears. Changes are debounced, then the file is read and validated with the policy schema, and `onChange`
 * gets the new policy (an absent file is an empty layer) or the error naming the bad key.
 */
import { type FSWatcher, statSync, watch } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from 'pino';
import type { Policy } from '../../schemas/policy.ts';
import { parsePolicyText } from './policy-files.ts';

/** Quiet time after the last change before the file is read: editors write in several steps. */
export const POLICY_DEBOUNCE_MS = 100;

export type PolicyFileLayer = 'global' | 'project';
export type PolicyFileRead = { ok: true; policy: Policy | undefined } | { ok: false; error: string };

export type PolicyWatch = { close: () => void };

/** Reads and validates one policy file: the policy, undefined when absent, or the error text. */
export async function readPolicyFile(path: string): Promise<PolicyFileRead> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, policy: undefined };
    return { ok: false, error: `Policy file '${path}' cannot be read (${(err as Error).message}).` };
  }
  try {
    return { ok: true, policy: parsePolicyText(text, path) };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/** Watches each file; `onChange` runs once per settled change, never twice at once for one file. */
export function watchPolicyFiles(
  files: ReadonlyArray<{ layer: PolicyFileLayer; path: string }>,
  onChange: (layer: PolicyFileLayer, path: string, read: PolicyFileRead) => Promise<void>,
  logger: Logger,
  debounceMs = POLICY_DEBOUNCE_MS,
): PolicyWatch {
  const closers = files.map(({ layer, path }) =>
    watchOne(path, (read) => onChange(layer, path, read), logger, debounceMs),
  );
  return { close: () => closers.forEach((c) => c()) };
}

function watchOne(
  path: string,
  onChange: (read: PolicyFileRead) => Promise<void>,
  logger: Logger,
  debounceMs: number,
): () => void {
  let watcher: FSWatcher | undefined;
  let watched: { dir: string; ino: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let closed = false;

  const settle = () => {
    if (closed) return;
    // The directory may have appeared (or gone): watch the deepest existing one.
    arm();
    running = running.then(async () => {
      if (closed) return;
      await onChange(await readPolicyFile(path)).catch((err: unknown) =>
        logger.warn({ err, path }, 'policy file change not applied'),
      );
    });
  };
  const changed = () => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(settle, debounceMs);
  };
  const arm = () => {
    for (let dir = dirname(path); ; dir = dirname(dir)) {
      // The same directory, not one removed and made again (`git checkout`, `rm -r .skein; mkdir .skein`).
      if (dir === watched?.dir && inode(dir) === watched.ino) return;
      try {
        const ino = inode(dir);
        if (ino === undefined) throw new Error(`${dir} does not exist`);
        const next = watch(dir, { persistent: false }, changed);
        next.on('error', (err) => {
          logger.warn({ err, path: dir }, 'policy watch failed; watching again');
          changed();
        });
        watcher?.close();
        watcher = next;
        watched = { dir, ino };
        if (dir !== dirname(path))
          logger.debug({ path, watching: dir }, 'policy directory missing; watching its parent');
        return;
      } catch (err) {
        if (dir === dirname(dir)) {
          logger.warn({ err, path }, 'policy file cannot be watched; changes apply at restart');
          return;
        }
      }
    }
  };
  arm();
  logger.debug({ path, file: basename(path) }, 'watching policy file');
  return () => {
    closed = true;
    if (timer) clearTimeout(timer);
    watcher?.close();
  };
}

function inode(dir: string): number | undefined {
  try {
    return statSync(dir).ino;
  } catch {
    return undefined;
  }
}
