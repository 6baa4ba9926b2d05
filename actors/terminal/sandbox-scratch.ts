/**
 * @module
 * The scratch directory of each sandboxed terminal (sandbox-args.ts `scratchDirs`: its `/tmp`, `/dev/shm` and
 * the hidden directories of the home), on the runtime's data disk. Made when the terminal's command line is
 * built; removed once its shell has ended, never earlier: removing a mount point from another mount namespace
 * detaches the mount in every namespace (as for sandbox-placeholders.ts). One registry per process.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { inotifyShare, type SandboxKernelLimits } from '../../machines/terminal/sandbox-init.ts';

/** Terminal id → its scratch directory. */
const held = new Map<string, string>();

/**
 * Makes `scratch` and the directories in it that the sandbox binds (`dirs`: sandbox path → host path); `/tmp` and
 * `/dev/shm` get the sticky, world-writable mode programs expect of them. Throws a clear error (a full disk) after
 * removing what it made.
 */
export function makeScratch(terminalId: string, scratch: string, dirs: Record<string, string>): void {
  try {
    mkdirSync(scratch, { recursive: true, mode: 0o700 });
    for (const [inside, dir] of Object.entries(dirs)) {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      if (inside === '/tmp' || inside === '/dev/shm') chmodSync(dir, 0o1777);
    }
  } catch (err) {
    rmSync(scratch, { recursive: true, force: true });
    throw new RuntimeError(
      ErrorCode.Unavailable,
      `cannot make the sandbox's scratch directory '${scratch}' (${(err as Error).message}); ask the operator ` +
        'to free space on the disk of the data dir, then open the terminal again',
    );
  }
  held.set(terminalId, scratch);
}

/** After `terminalId`'s shell ended (or never started): removes its scratch, in the thread pool (it can be big). */
export function releaseScratch(terminalId: string): Promise<void> {
  const dir = held.get(terminalId);
  if (!dir) return Promise.resolve();
  held.delete(terminalId);
  return rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

/**
 * A terminal manager's sandbox resources: the directory its terminals' scratch goes in, and the kernel limits each
 * sandbox's init sets (`domains.terminal.sandboxInotifyShare` of the runtime user's inotify maxima, read once).
 */
export class SandboxScratch {
  readonly #base: string;
  readonly #limits: SandboxKernelLimits;

  /**
   * `dir`: the runtime's `<dataDir>/sandbox`, emptied of what a runtime that died left there (the data dir's lock
   * says no other runtime uses it); else a new one under the system's temporary directory (tests).
   */
  constructor(dir: string | undefined, share: `${number}%`) {
    if (dir) rmSync(dir, { recursive: true, force: true });
    this.#base = dir ?? join(tmpdir(), `skein-scratch-${process.pid}-${randomBytes(4).toString('hex')}`);
    this.#limits = inotifyShare(share, userInotifyMax());
  }

  /** A sandboxed terminal's `SpawnSpec.scratch` and `sandboxLimits`. */
  of(terminalId: string): { scratch: string; sandboxLimits: SandboxKernelLimits } {
    return { scratch: join(this.#base, terminalId), sandboxLimits: this.#limits };
  }

  /** After every terminal closed (host stop). */
  async dispose(): Promise<void> {
    await rm(this.#base, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The runtime user's inotify maxima (/proc/sys/user), or Linux's defaults where they cannot be read. */
export function userInotifyMax(): { instances: number; watches: number } {
  const read = (name: string, fallback: number) => {
    try {
      const value = Number(readFileSync(`/proc/sys/user/max_inotify_${name}`, 'utf8').trim());
      return Number.isSafeInteger(value) && value > 0 ? value : fallback;
    } catch {
      return fallback;
    }
  };
  return { instances: read('instances', 128), watches: read('watches', 8192) };
}
