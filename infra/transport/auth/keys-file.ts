/**
 * @module
 * `keys.json` is read, changed and written by several processes: the runtime (every agent spawned and finished),
 * `skein creds`, `skein ui` (every console credential). Each change is one read-change-write under a lock file,
 * written through a temporary file of its own: with one shared temporary name and no lock, two processes at once
 * made the file invalid JSON (every later spawn, revocation and start failed) or dropped the users one of them
 * had just minted (credentials revocation would no longer reach).
 */
import { closeSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { ownerGone, processOwner } from './process-owner.ts';

/**
 * A lock whose holder has ended (a runtime SIGKILLed while it minted a user: the next start failed on it) is
 * taken over at once; one whose holder this process cannot judge (another pid namespace) once it is older than
 * this (a change takes milliseconds).
 */
const STALE_MS = 10_000;
/** Longer than STALE_MS: a waiter outlasts any lock left behind. */
const WAIT_MS = 15_000;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Runs `fn` holding the lock file `lockPath` (made with O_EXCL), waiting for another holder up to WAIT_MS. */
export function withFileLock<T>(lockPath: string, fn: () => T): T {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      writeSync(fd, `${process.pid}\n${processOwner() ?? ''}`);
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (stale(lockPath)) continue;
      if (Date.now() > deadline) {
        throw new Error(`${lockPath} is held by another skein process for over ${WAIT_MS} ms; if none runs, remove it`);
      }
      Atomics.wait(sleeper, 0, 0, 2);
    }
  }
  try {
    return fn();
  } finally {
    try {
      unlinkSync(lockPath);
    } catch {
      // Taken away as stale by another process: nothing left to release.
    }
  }
}

/** Moves a stale lock aside (one process wins the rename); true when the lock is free to take again. */
function stale(lockPath: string): boolean {
  try {
    const [pid, owner] = readFileSync(lockPath, 'utf8').split('\n');
    const ended = Number(pid) > 0 && ownerGone(Number(pid), owner || undefined);
    if (!ended && Date.now() - statSync(lockPath).mtimeMs < STALE_MS) return false;
    const aside = `${lockPath}.${randomBytes(6).toString('hex')}.stale`;
    renameSync(lockPath, aside);
    unlinkSync(aside);
    return true;
  } catch {
    // Gone meanwhile (released, or moved by another process): try to take it again.
    return true;
  }
}

/** Writes `text` to `path` (mode 0600) through a temporary file of this write's own, renamed over it. */
export function writeFileAtomic(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // Not made.
    }
    throw err;
  }
}
