/**
 * @module
 * The disk bound of sandboxed terminals, enforced (the bounds and the choice: machines/terminal/scratch-guard.ts).
 * Every `scratchCheckMs` while an agent's sandboxed terminal is open, the guard reads the scratch disk (statfs) and
 * has its measuring thread (scratch-measure-worker.mjs) count what each such terminal holds there, then closes the
 * terminals the bounds choose. Closing one kills every process of its sandbox (its pid namespace), which frees
 * the deleted files they kept open; its scratch directory is removed once its shell has ended.
 *
 * Not a kernel quota: between two checks a sandbox can write what the disk takes in `scratchCheckMs`, so the
 * reserve is kept well above that. The workspace is not counted against an agent's bound: it is the user's
 * project, shared by agents. Below the reserve, though, what a terminal's processes wrote to disk since the last
 * check counts (when its workspace is on the data disk): many small files written there, each closed at once.
 */
import { statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import {
  type DiskState,
  type ScratchLimits,
  reserveShortOf,
  type ScratchUse,
  scratchVictims,
} from '../../machines/terminal/scratch-guard.ts';

const WORKER = fileURLToPath(new URL('../../actors/terminal/scratch-measure-worker.mjs', import.meta.url));
/**
 * A measure taking longer than this (the thread stuck) is given up, and the thread started again: each terminal's
 * walk stops at 5 s by itself (scratch-measure-worker.mjs), so this leaves every one of them its time.
 */
const measureTimeoutMs = (terminals: number) => 10_000 + terminals * 6_000;

/** A sandboxed terminal of an agent, as the guard measures it. */
export type GuardedTerminal = {
  terminalId: string;
  /** The agents from the top one down to its owner, the root agent left out (it is not bounded). */
  lineage: readonly string[];
  /** Its scratch directory. */
  dir: string;
  /** The PTY's leader: every process of the sandbox is below it. */
  leader: number;
  /** Its cgroup leaf's `cgroup.procs`, where it has one: its processes without a walk of /proc. */
  procs?: string;
  /** Its workspace: what its processes write to disk is counted only when that is the data disk. */
  workspace?: string;
};

export type ScratchGuardDeps = {
  /** The scratch directories' parent (`<dataDir>/sandbox`): the disk measured. */
  base: string;
  limits: ScratchLimits;
  checkMs: number;
  /** The agents' sandboxed terminals open now. */
  terminals: () => GuardedTerminal[];
  /** Closes a terminal the bounds chose, with the words its agent is given. */
  close: (terminalId: string, why: string) => void;
  log: Logger;
};

type Measured = ScratchUse & { complete: boolean; written: number; hidden: number };

/** What the guard needs of a terminal session. */
type SessionView = {
  terminalId: string;
  agentId: string;
  status: string;
  spec: { sandbox: boolean; scratch?: string; workspace?: string };
  pty: { pid: number };
};

/** The terminals a host's guard measures: its agents' open sandboxed terminals, the root agent's left out. */
export function guardedTerminals(
  sessions: Iterable<SessionView>,
  lineage: (agentId: string) => readonly string[],
  rootAgentId: string,
  procsFile: (terminalId: string) => string | undefined = () => undefined,
): GuardedTerminal[] {
  const guarded: GuardedTerminal[] = [];
  for (const s of sessions) {
    if (!s.spec.sandbox || !s.spec.scratch || s.agentId === rootAgentId) continue;
    if (s.status === 'closing' || s.status === 'closed') continue;
    const agents = lineage(s.agentId).filter((id) => id !== rootAgentId);
    const procs = procsFile(s.terminalId);
    guarded.push({
      terminalId: s.terminalId,
      lineage: agents,
      dir: s.spec.scratch,
      leader: s.pty.pid,
      ...(procs ? { procs } : {}),
      ...(s.spec.workspace ? { workspace: s.spec.workspace } : {}),
    });
  }
  return guarded;
}

export class ScratchGuard {
  readonly #deps: ScratchGuardDeps;
  #worker: Worker | undefined;
  #pending = new Map<number, { resolve: (uses: Measured[]) => void; reject: (err: Error) => void }>();
  #next = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** The disk's free bytes at the last check: how much it lost since, against what was counted written. */
  #lastFree: number | undefined;
  /** What each terminal's processes had written to disk at the last check (`written`), for the growth since. */
  #written = new Map<string, number>();
  /** The disk was below the reserve at the last check with nothing to close (told once, until it is back). */
  #shortUntold = true;

  /** Starts checking, or undefined when both bounds are 0 (none). */
  static start(deps: ScratchGuardDeps): ScratchGuard | undefined {
    if (deps.limits.maxPerAgent === 0 && deps.limits.reserve === 0) return undefined;
    return new ScratchGuard(deps);
  }

  private constructor(deps: ScratchGuardDeps) {
    this.#deps = deps;
    this.#schedule();
  }

  /** One check now (tests; the timer's own). Resolves with the terminals closed. */
  async check(): Promise<string[]> {
    const terminals = this.#deps.terminals();
    if (terminals.length === 0) {
      this.#lastFree = undefined;
      return [];
    }
    const disk = diskOf(this.#deps.base);
    if (!disk) return [];
    const measured = await this.#measure(disk.dev, terminals);
    const lineage = new Map(terminals.map((t) => [t.terminalId, t.lineage]));
    const before = this.#written;
    this.#written = new Map(measured.map((m) => [m.terminalId, m.written]));
    const uses = measured.map((m) => ({
      ...m,
      lineage: lineage.get(m.terminalId) ?? [],
      wrote: Math.max(0, m.written - (before.get(m.terminalId) ?? m.written)),
    }));
    const fell = this.#lastFree === undefined ? 0 : Math.max(0, this.#lastFree - disk.state.freeBytes);
    this.#lastFree = disk.state.freeBytes;
    const victims = scratchVictims(disk.state, this.#deps.limits, uses, fell);
    this.#tellShort(disk.state, victims.length === 0);
    for (const { terminalId, why } of victims) {
      const use = uses.find((u) => u.terminalId === terminalId);
      this.#deps.log.warn({ terminalId, bytes: use?.bytes, inodes: use?.inodes }, `closing a terminal: ${why}`);
      this.#deps.close(terminalId, why);
    }
    return victims.map((v) => v.terminalId);
  }

  /** Below the reserve with no sandbox to blame: the operator is told, once until the disk is back above it. */
  #tellShort(disk: DiskState, nothingClosed: boolean): void {
    const short = reserveShortOf(disk, this.#deps.limits.reserve);
    if (!short) {
      this.#shortUntold = true;
      return;
    }
    if (!nothingClosed || !this.#shortUntold) return;
    this.#shortUntold = false;
    this.#deps.log.warn(
      { freeBytes: disk.freeBytes, freeInodes: disk.freeInodes, reserve: this.#deps.limits.reserve },
      `the data disk is below domains.terminal.scratchDiskReserve (short of ${short}), and no agent's sandbox ` +
        'holds or writes enough of it to be closed: free space on that disk, or the event log will refuse facts',
    );
  }

  dispose(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    void this.#worker?.terminate();
    this.#worker = undefined;
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.check()
        .catch((err) => this.#deps.log.warn({ err: (err as Error).message }, 'scratch check failed'))
        .finally(() => this.#schedule());
    }, this.#deps.checkMs);
    this.#timer.unref();
  }

  #measure(dev: number, terminals: GuardedTerminal[]): Promise<Measured[]> {
    const worker = this.#thread();
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        // A thread still walking is stopped: the next check starts another.
        void worker.terminate();
        if (this.#worker === worker) this.#worker = undefined;
        reject(new Error(`measuring the sandboxes' scratch took over ${measureTimeoutMs(terminals.length)} ms`));
      }, measureTimeoutMs(terminals.length));
      this.#pending.set(id, {
        resolve: (uses) => {
          clearTimeout(timer);
          resolve(uses);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      worker.postMessage({ id, dev, terminals: askedOf(terminals, dev) });
    });
  }

  #thread(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(WORKER);
    worker.unref();
    worker.on('message', ({ id, uses }: { id: number; uses: Measured[] }) => {
      const done = this.#pending.get(id);
      this.#pending.delete(id);
      done?.resolve(uses);
    });
    worker.on('error', (err) => this.#deps.log.warn({ err: err.message }, 'scratch measuring thread failed'));
    // Gone (an error, a timeout, dispose): what it was asked fails, and the next check starts another.
    worker.on('exit', () => {
      if (this.#worker === worker) this.#worker = undefined;
      for (const done of this.#pending.values()) done.reject(new Error('the scratch measuring thread ended'));
      this.#pending.clear();
    });
    this.#worker = worker;
    return worker;
  }
}

/** The scratch disk's state and device, read at `base` (or its parent, before the first scratch is made). */
function diskOf(base: string): { state: DiskState; dev: number } | undefined {
  for (const path of [base, dirname(base)]) {
    try {
      const fs = statfsSync(path);
      const state = {
        sizeBytes: fs.blocks * fs.bsize,
        freeBytes: fs.bavail * fs.bsize,
        inodes: fs.files,
        freeInodes: fs.ffree,
      };
      return { state, dev: statSync(path).dev };
    } catch {} // not made yet: its parent
  }
  return undefined;
}

/**
 * What the measuring thread is asked of each terminal: `io` (count what its processes write) only when its
 * workspace is on the data disk `dev`, each distinct workspace stat'ed once.
 */
function askedOf(terminals: readonly GuardedTerminal[], dev: number) {
  const onDisk = new Map<string, boolean>();
  const io = (workspace: string | undefined) => {
    if (workspace === undefined) return false;
    let same = onDisk.get(workspace);
    if (same === undefined) {
      same = devOf(workspace) === dev;
      onDisk.set(workspace, same);
    }
    return same;
  };
  return terminals.map(({ terminalId, dir, leader, procs, workspace }) => ({
    terminalId,
    dir,
    leader,
    procs,
    io: io(workspace),
  }));
}

function devOf(path: string): number | undefined {
  try {
    return statSync(path).dev;
  } catch {
    return undefined;
  }
}
