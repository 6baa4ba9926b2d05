/**
 * @module
 * Emptying a terminal's cgroup leaf at its close (`AgentCgroups.release`): stop its forks, kill what it holds until
 * a read finds nothing, remove it bottom-up, and read again until it is gone. What a leaf holds comes from its
 * files and, when those cannot show everything, from every process's own `/proc/<pid>/cgroup` (`HiddenScans`,
 * which the OOM watch uses too).
 */
import { writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { Logger } from 'pino';
import type { CgroupController } from '../../machines/terminal/cgroup-v1.ts';
import { cgroupMembersOf, readCgroup, removeTree } from './cgroup-files.ts';

/** How long a closed terminal's leftovers get to die after SIGKILL before the leaf is left behind. */
const RELEASE_WAIT_MS = 2_000;
/** How long the removal of a closed terminal's leaf and the sub-cgroups its processes made below it may take. */
const REMOVE_WAIT_MS = 20_000;
/** A scan reads every process's cgroup file (a few ms with a few hundred processes) at most this often, a user. */
const SCAN_EVERY_MS = 250;

/** A hierarchy the leaves live in: this runtime's cgroup there, as a path and as `/proc/<pid>/cgroup` shows it. */
export type LeafHierarchy = { controller: CgroupController; base: string; path: string };

/**
 * The processes in leaves (paths below each base) and below them by their own `/proc/<pid>/cgroup`, each hierarchy
 * and every thread's (a process whose main thread ended shows the root cgroup in its own file): one scan, a read
 * per process (~17 µs) and per thread of a process at the root. Undefined when a scan ran less than SCAN_EVERY_MS
 * ago for the same user: the releases of a runtime share one budget, the OOM watch has its own (a stream of
 * releases must not keep it from deciding), so ten hiders cannot stall the event loop.
 */
export class HiddenScans {
  readonly #hierarchies: readonly LeafHierarchy[];
  readonly #at = { release: Number.NEGATIVE_INFINITY, oom: Number.NEGATIVE_INFINITY };

  constructor(hierarchies: readonly LeafHierarchy[]) {
    this.#hierarchies = hierarchies;
  }

  scan(rels: readonly string[], by: 'release' | 'oom'): number[][] | undefined {
    const now = performance.now();
    if (now - this.#at[by] < SCAN_EVERY_MS) return undefined;
    this.#at[by] = now;
    return cgroupMembersOf(
      rels.map((rel) => this.#hierarchies.map((h) => ({ controller: h.controller, path: posix.join(h.path, rel) }))),
    );
  }
}

/**
 * Kills what a leaf holds and removes it. The removal is the proof that nothing is left: a cgroup still holding
 * a process (one that moved in meanwhile, or one no read found) cannot go. So the leaf's processes are killed
 * until a read finds none, then it is removed bottom-up, and read again if that failed, until it is gone; each
 * process found gets RELEASE_WAIT_MS to die after its SIGKILL, the whole REMOVE_WAIT_MS. A read takes each
 * process's own `/proc/<pid>/cgroup` too when the leaf's files cannot show them all (more sub-cgroups than a
 * read takes) or a removal failed with nothing found. The passes back off from 20 to 500 ms.
 */
export async function emptyLeaf(leaf: string, hierarchies: readonly LeafHierarchy[], scans: HiddenScans) {
  const dirs = hierarchies.map((h) => join(h.base, leaf));
  const removeBy = Date.now() + REMOVE_WAIT_MS;
  const killedAt = new Map<number, number>();
  let scan = false;
  for (let pass = 0; ; pass++) {
    stopForks(dirs, hierarchies);
    const pids = members(leaf, dirs, scan, scans);
    const now = Date.now();
    for (const pid of pids) {
      if (!killedAt.has(pid)) killedAt.set(pid, now);
      try {
        process.kill(pid, 'SIGKILL');
      } catch {} // gone already
    }
    const stuck = [...pids].filter((pid) => now - killedAt.get(pid)! > RELEASE_WAIT_MS);
    if (stuck.length > 0) throw new Error(`processes ${stuck.join(', ')} in ${dirs.join(', ')} outlived SIGKILL`);
    let failed: unknown;
    if (pids.size === 0) {
      failed = await removeAll(dirs, hierarchies, removeBy);
      if (failed === undefined) return;
      scan = true;
    }
    if (Date.now() > removeBy)
      throw new Error(`could not remove ${dirs.join(', ')} in time: ${String((failed as Error)?.message ?? failed)}`);
    await new Promise((r) => setTimeout(r, Math.min(20 * 2 ** pass, 500)));
  }
}

/**
 * The cgroups of runtimes that died in this pid namespace (`staleCgroups`, by name: the same name in each
 * hierarchy), emptied like a leaf at its close and removed: what an agent left running there (a daemon it
 * detached) no longer outlives a crashed runtime. One at a time, after the start; a failure is logged.
 */
export async function emptyStale(stale: ReadonlyMap<string, LeafHierarchy[]>, log: Logger): Promise<void> {
  for (const [name, hierarchies] of stale) {
    try {
      await emptyLeaf('', hierarchies, new HiddenScans(hierarchies));
      log.info({ cgroup: name }, "killed what a dead runtime's cgroups held, and removed them");
    } catch (err) {
      log.warn({ cgroup: name, err: (err as Error).message }, "a dead runtime's cgroups left behind");
    }
  }
}

/**
 * No fork in a leaf being emptied, nor below it (v1's pids bound is hierarchical): a fork bomb whose parents exit
 * after each fork changes pids faster than kills land, and every slot a kill freed was taken again. Written every
 * pass: an unsandboxed shell owns its leaf and could raise it back. Not there without a pids bound.
 */
function stopForks(dirs: readonly string[], hierarchies: readonly LeafHierarchy[]): void {
  for (const [i, h] of hierarchies.entries()) {
    if (h.controller !== 'pids') continue;
    try {
      writeFileSync(join(dirs[i]!, 'pids.max'), '0');
    } catch {} // gone already
  }
}

/**
 * The processes in a leaf (below each base as `rel`, at `dirs`) and its sub-cgroups: from their files, and from
 * every process's own cgroup file when those cannot show them all or `scan`.
 */
function members(rel: string, dirs: readonly string[], scan: boolean, scans: HiddenScans): Set<number> {
  const pids = new Set<number>();
  const reads = dirs.map((dir) => readCgroup(dir));
  for (const read of reads) for (const pid of read.pids) pids.add(pid);
  if (scan || reads.some((r) => !r.complete)) for (const pid of scans.scan([rel], 'release')?.[0] ?? []) pids.add(pid);
  return pids;
}

/** Removes each hierarchy's leaf tree; the first failure (a cgroup still in use), or undefined when all went. */
async function removeAll(dirs: readonly string[], hierarchies: readonly LeafHierarchy[], deadline: number) {
  let failed: unknown;
  for (const [i, dir] of dirs.entries()) {
    try {
      await removeTree(dir, hierarchies[i]!, deadline);
    } catch (err) {
      failed ??= err;
    }
  }
  return failed;
}
