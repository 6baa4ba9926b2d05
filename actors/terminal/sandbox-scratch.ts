/**
 * @module
 * The scratch directory of each sandboxed terminal (sandbox-args.ts `scratchDirs`: its `/tmp`, `/dev/shm` and
 * the hidden directories of the home), on the runtime's data disk. Made when the terminal's command line is
 * built; removed once its shell has ended, never earlier: removing a mount point from another mount namespace
 * detaches the mount in every namespace (as for sandbox-placeholders.ts). One registry per process.
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { releasePlaceholders } from './sandbox-placeholders.ts';
import { inotifyShare, type SandboxKernelLimits } from '../../machines/terminal/sandbox-sysctls.ts';

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

/** After `terminalId`'s shell ended (or never started): removes its scratch, in another process (it can be big). */
export function releaseScratch(terminalId: string): Promise<void> {
  const dir = held.get(terminalId);
  if (!dir) return Promise.resolve();
  held.delete(terminalId);
  return removeDir(dir);
}

/**
 * Once `terminalId`'s shell has ended (or never started), nothing inside its sandbox can act: what the host kept for
 * it goes, its rc directory (`rc`), the sandbox's placeholders and its scratch.
 */
export function releaseShellFiles(terminalId: string, rc: { remove(): Promise<void> }): void {
  void rc.remove();
  releasePlaceholders(terminalId);
  void releaseScratch(terminalId);
}

/**
 * Removes a directory an agent filled, whatever it holds, off this event loop: GNU `rm -rf` walks a tree of any
 * depth (a live review made one 2,045 levels deep, and `fs.rm` stopped at ENAMETOOLONG and left it), and
 * `--one-file-system` never descends into a mount. `fs.rm` only where there is no `rm`.
 */
export function removeDir(dir: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn('rm', ['-rf', '--one-file-system', '--', dir], { stdio: 'ignore' });
    child.on(
      'error',
      () =>
        void rm(dir, { recursive: true, force: true })
          .catch(() => undefined)
          .then(resolve),
    );
    child.on('exit', () => resolve());
  });
}

/**
 * A terminal manager's sandbox resources: the directory its terminals' scratch goes in, and the kernel limits bwrap
 * sets in each sandbox (sandbox-sysctls.ts: `domains.terminal.sandboxInotifyShare` of the runtime user's inotify
 * maxima, read once).
 */
export class SandboxScratch {
  readonly #base: string;
  readonly #limits: SandboxKernelLimits;

  /**
   * `dir`: the runtime's `<dataDir>/sandbox`, emptied of what a runtime that died left there (the data dir's lock
   * says no other runtime uses it); else a new one under the system's temporary directory (tests).
   */
  constructor(dir: string | undefined, share: `${number}%`) {
    if (dir) {
      // Moved aside in one step, removed in the background: never a start that fails on what an agent left. Also
      // what an earlier start moved aside and did not finish removing.
      const stale = `${basename(dir)}.stale-`;
      try {
        renameSync(dir, join(dirname(dir), `${stale}${process.pid}-${randomBytes(4).toString('hex')}`));
      } catch {} // none left
      let old: string[] = [];
      try {
        old = readdirSync(dirname(dir)).filter((name) => name.startsWith(stale));
      } catch {} // no data dir yet
      for (const name of old) void removeDir(join(dirname(dir), name));
    }
    this.#base = dir ?? join(tmpdir(), `skein-scratch-${process.pid}-${randomBytes(4).toString('hex')}`);
    this.#limits = inotifyShare(share, userInotifyMax());
  }

  /** The directory the scratch directories go in. */
  get base(): string {
    return this.#base;
  }

  /** A sandboxed terminal's `SpawnSpec.scratch` and `sandboxLimits`. */
  of(terminalId: string): { scratch: string; sandboxLimits: SandboxKernelLimits } {
    return { scratch: join(this.#base, terminalId), sandboxLimits: this.#limits };
  }

  /** After every terminal closed (host stop). */
  async dispose(): Promise<void> {
    await removeDir(this.#base);
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
