/**
 * @module
 * File operations on v1 cgroup directories that agent-cgroups.ts and agents-oom.ts share: the processes in one
 * (from its files, bounded, or from every process's own `/proc/<pid>/cgroup`), the lowest memory limit above one,
 * removal (emptied of page cache first in the memory hierarchy), and the cgroups of runtimes that are gone.
 */
import { closeSync, constants, openSync, readdirSync, readFileSync, readlinkSync, rmdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type CgroupController, cgroupIn, cgroupPaths } from '../../machines/terminal/cgroup-v1.ts';
import { type RuntimeOwner, staleVerdict } from '../../machines/terminal/stale-cgroups.ts';
import { readStat } from './terminal-proc.ts';

/** What v1 reports as "no limit" (a page-rounded LLONG_MAX): anything at or above it is none. */
const NO_LIMIT = 2 ** 62;

export function procTexts(): [string, string] {
  return [readFileSync('/proc/self/mountinfo', 'utf8'), readFileSync('/proc/self/cgroup', 'utf8')];
}

/**
 * The lowest memory limit on this runtime's own cgroup and its ancestors as far as the mount shows them (a
 * container's or a service's bound): a share is taken of what the runtime may really use.
 */
export function ownMemoryLimit(dir: string): number {
  let lowest = Number.POSITIVE_INFINITY;
  for (let at = dir; ; at = dirname(at)) {
    try {
      const limit = Number(readFileSync(join(at, 'memory.limit_in_bytes'), 'utf8'));
      if (limit > 0 && limit < NO_LIMIT) lowest = Math.min(lowest, limit);
    } catch {
      break; // above the mount point
    }
    if (dirname(at) === at) break;
  }
  return lowest;
}

/**
 * Sub-cgroups `readCgroup` reads below one cgroup at most (a walk that blocks the event loop for ~6 ms): a process
 * that made more and hid below them is found by the release anyway, from its own `/proc/<pid>/cgroup`
 * (`cgroupMembers`, agent-cgroups.ts).
 */
const MAX_SUB_CGROUPS = 256;

/**
 * The processes of a cgroup and of the cgroups below it, `MAX_SUB_CGROUPS` of them at most (none when it is
 * gone), and whether that was all of them. A process whose user owns its leaf (an unsandboxed terminal's) can
 * make a sub-cgroup there and move into it, out of the leaf's own `cgroup.procs`; v1's limits still count it
 * (they are hierarchical), and so must whatever kills or measures.
 */
export function readCgroup(dir: string): { pids: number[]; complete: boolean } {
  const pids: number[] = [];
  const dirs = [dir];
  const fds = new Map<string, number>();
  let complete = true;
  try {
    for (let i = 0; i < dirs.length; i++) {
      try {
        const text = readFileSync(join(dirs[i]!, 'cgroup.procs'), 'utf8');
        for (const line of text.split('\n')) if (line) pids.push(Number(line));
      } catch (err) {
        complete &&= isGone(err);
        continue;
      }
      try {
        for (const e of readdirSync(dirs[i]!, { withFileTypes: true })) {
          if (!e.isDirectory()) continue;
          if (dirs.length > MAX_SUB_CGROUPS) {
            complete = false;
            break;
          }
          dirs.push(childPath(dirs[i]!, e.name, fds));
        }
      } catch (err) {
        complete &&= isGone(err);
      }
    }
  } finally {
    for (const fd of fds.values()) closeSync(fd);
  }
  return { pids, complete };
}

/**
 * Paths longer than this name a directory through a descriptor of its parent (`/proc/self/fd/<n>/<name>`): a
 * process can make sub-cgroups relative to a directory until their path passes PATH_MAX (4,096), which no path
 * from here could name (ENAMETOOLONG), so nothing could read or remove them.
 */
const LONG_PATH = 2_048;

/** `join(parent, name)`, or the same directory through a descriptor of `parent` (kept in `fds`) when too long. */
function childPath(parent: string, name: string, fds: Map<string, number>): string {
  const path = join(parent, name);
  if (path.length <= LONG_PATH) return path;
  let fd = fds.get(parent);
  if (fd === undefined) {
    fd = openSync(parent, constants.O_RDONLY | constants.O_DIRECTORY);
    fds.set(parent, fd);
  }
  return `/proc/self/fd/${fd}/${name}`;
}

/**
 * The processes in a cgroup or below it, in any of `cgroups` (`path` of `controller`, as this process's cgroup
 * namespace shows it), each found by its own `/proc/<pid>/cgroup`: a read per process on the machine, whatever
 * number of sub-cgroups one hides below. A process whose main thread ended shows the root cgroup there (v1) while
 * its other threads run on where they are: such a process's threads are read too.
 */
export function cgroupMembers(cgroups: ReadonlyArray<{ controller: CgroupController; path: string }>): number[] {
  return cgroupMembersOf([cgroups])[0]!;
}

/**
 * `cgroupMembers` of several groups of cgroups in one scan of /proc (the OOM watch reads every leaf it cannot read
 * whole at once): the processes of each group, in order. A process in several goes to the first.
 */
export function cgroupMembersOf(
  groups: ReadonlyArray<ReadonlyArray<{ controller: CgroupController; path: string }>>,
): number[][] {
  const out = groups.map((): number[] => []);
  // Each process's file is parsed once and looked up by path, whatever the number of groups.
  const index = new Map<string, Map<string, number>>();
  let maxLength = 0;
  for (const [i, group] of groups.entries()) {
    for (const { controller, path } of group) {
      const key = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
      const paths = index.get(controller) ?? new Map<string, number>();
      index.set(controller, paths);
      if (!paths.has(key)) paths.set(key, i);
      maxLength = Math.max(maxLength, key.length);
    }
  }
  const which = (text: string) => cgroupIn(cgroupPaths(text), index, maxLength) ?? -1;
  for (const name of readdirSync('/proc')) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    try {
      const text = readFileSync(`/proc/${name}/cgroup`, 'utf8');
      const own = cgroupPaths(text);
      let i = cgroupIn(own, index, maxLength) ?? -1;
      // Only a process shown at the root of every hierarchy asked (as one whose main thread ended is): most
      // processes of the machine sit elsewhere in one of them, and reading their threads would double the scan.
      if (i < 0 && [...index.keys()].every((controller) => own.get(controller) === '/')) {
        const tasks = readdirSync(`/proc/${name}/task`);
        for (const t of tasks.length > 1 ? tasks : []) {
          try {
            i = which(readFileSync(`/proc/${name}/task/${t}/cgroup`, 'utf8'));
          } catch {} // that thread ended
          if (i >= 0) break;
        }
      }
      if (i >= 0) out[i]!.push(Number(name));
    } catch {} // gone meanwhile
  }
  return out;
}

/** This runtime as its cgroups' names tell it (stale-cgroups.ts): pid, start time and pid namespace. */
export function thisRuntime(): RuntimeOwner {
  const start = readStat(process.pid)?.startTime ?? '0';
  let pidns = '0';
  try {
    pidns = /\d+/.exec(readlinkSync('/proc/self/ns/pid'))?.[0] ?? '0';
  } catch {} // unreadable: '0', which staleVerdict never takes for this namespace
  return { pid: process.pid, start, pidns };
}

/** The start time of the process `pid` if it is alive (not a zombie), for `staleVerdict`. */
function startOf(pid: number): string | undefined {
  const s = readStat(pid);
  return s && s.state !== 'Z' && s.state !== 'X' ? s.startTime : undefined;
}

/**
 * The cgroups in `dir` of runtimes that are gone (`staleVerdict`): those that cannot be told dead are removed now
 * if they are empty; the names of those whose runtime died in this pid namespace are returned, for their
 * processes to be killed first (agent-cgroups.ts).
 */
export function staleCgroups(dir: string, me: RuntimeOwner): string[] {
  const dead: string[] = [];
  for (const name of readdirSync(dir)) {
    const verdict = staleVerdict(name, me, startOf);
    if (verdict === 'remove-empty') removeTree(join(dir, name)).catch(() => undefined);
    else if (verdict === 'kill') dead.push(name);
  }
  return dead;
}

/**
 * Removes an empty cgroup. A memory cgroup's page cache (files its processes read or wrote) stays charged to it
 * after `rmdir`: the kernel keeps it, offline, until the cache is reclaimed, and allows 65,535 memory cgroups in
 * all, so a loop of terminal opens and closes could use them up for the whole machine. `memory.force_empty`
 * reclaims that cache first (in the thread pool: it can take a while); what it cannot free (a tmpfs still
 * mounted elsewhere) stays, as before.
 */
export async function remove(h: { controller: CgroupController }, dir: string): Promise<void> {
  if (h.controller === 'memory') await writeFile(join(dir, 'memory.force_empty'), '0').catch(() => undefined);
  rmdirSync(dir);
}

/** How long `removeTree` works before it yields to the event loop. */
const YIELD_MS = 10;
/**
 * Descriptors the `removeTree` walks hold at most, all of them together (one per ~2,048 characters of path down a
 * chain): a chain deep enough to need more (~4,000 levels of 255-character names, a minute of the kernel's time to
 * make) is left, logged, rather than take the runtime's descriptors from every terminal; so is one that needs a
 * descriptor while other walks hold the rest (32 terminals releasing deep chains at once held 32 × 512 when the
 * bound was per walk). Its processes were killed before the removal; the next pass of its release tries again.
 */
export class WalkDescriptors {
  readonly max: number;
  #held = 0;
  constructor(max: number) {
    this.max = max;
  }
  get held(): number {
    return this.#held;
  }
  /** Counts `n` more held; false (nothing counted) when that would pass `max`. */
  take(n: number): boolean {
    if (this.#held + n > this.max) return false;
    this.#held += n;
    return true;
  }
  give(n: number): void {
    this.#held = Math.max(0, this.#held - n);
  }
}

/** The runtime's one budget of walk descriptors (`WalkDescriptors`). */
export const WALK_FDS = new WalkDescriptors(512);

/**
 * Removes a cgroup tree bottom-up (a cgroup directory is removed empty, its control files with it). A cgroup that
 * cannot go (a process still in it) does not stop the removal of its siblings: each pass of a release leaves
 * less to read. Throws the first failure once all were tried, or as soon as `deadline` (ms since the epoch) has
 * passed. The walk keeps its own stack (a chain of 5,000 nested cgroups overflowed the JS stack of a recursive one)
 * and yields to the event loop every YIELD_MS, down or up: the kernel's mkdir and rmdir of a nested cgroup cost
 * time in proportion to its depth (~1 ms at 5,000 levels), so a tree a process made deep or keeps growing never
 * stalls the runtime.
 */
export async function removeTree(
  dir: string,
  h?: { controller: CgroupController },
  deadline?: number,
  budget: WalkDescriptors = WALK_FDS,
): Promise<void> {
  type Frame = { dir: string; names: string[]; next: number; failed?: unknown; fds: Map<string, number> };
  const enter = (at: string): Frame | undefined => {
    try {
      const names = readdirSync(at, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
      return { dir: at, names, next: 0, fds: new Map() };
    } catch (err) {
      if (isGone(err)) return undefined;
      throw err;
    }
  };
  const root = enter(dir);
  if (!root) return;
  const stack: Frame[] = [root];
  let ran = performance.now();
  try {
    while (stack.length > 0) {
      if (deadline !== undefined && Date.now() > deadline) throw new Error(`gave up removing ${dir}: out of time`);
      if (performance.now() - ran > YIELD_MS) {
        await new Promise((r) => setImmediate(r));
        ran = performance.now();
      }
      const top = stack.at(-1)!;
      if (top.next < top.names.length) {
        const name = top.names[top.next++]!;
        const had = top.fds.size;
        let child: Frame | undefined;
        try {
          child = enter(childPath(top.dir, name, top.fds));
        } catch (err) {
          top.failed ??= err;
        }
        const opened = top.fds.size - had;
        if (opened > 0 && !budget.take(opened)) {
          // Not counted, so closed here: the finally gives back only what was taken.
          closeSync(top.fds.get(top.dir)!);
          top.fds.delete(top.dir);
          throw new Error(
            `gave up removing ${dir}: its depth needs another descriptor and the runtime's removals hold ` +
              `${budget.held} of the ${budget.max} they share; the next pass tries again`,
          );
        }
        if (child) stack.push(child);
        continue;
      }
      stack.pop();
      let failed = top.failed;
      if (failed === undefined) {
        try {
          if (h) await remove(h, top.dir);
          else rmdirSync(top.dir);
        } catch (err) {
          if (!isGone(err)) failed = err;
        }
      }
      for (const fd of top.fds.values()) closeSync(fd);
      budget.give(top.fds.size);
      top.fds.clear();
      if (failed === undefined) continue;
      const parent = stack.at(-1);
      if (!parent) throw failed;
      parent.failed ??= failed;
    }
  } finally {
    for (const frame of stack) {
      for (const fd of frame.fds.values()) closeSync(fd);
      budget.give(frame.fds.size);
    }
  }
}

/** Whether a read failed because the cgroup is not there (any more). */
function isGone(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}
