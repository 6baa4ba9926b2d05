/**
 * @module
 * Where this process sits in a cgroup v1 hierarchy (the per-agent limits, `actors/terminal/agent-cgroups.ts`),
 * read from the texts of `/proc/self/mountinfo` and `/proc/self/cgroup`, and what a memory bound setting comes
 * to in bytes. Pure.
 *
 * Only cgroup v1 hierarchies (`pids`, `memory`) are used: there a cgroup may hold processes and child cgroups at
 * once, so the runtime can make its cgroups below its own. Under cgroup v2 it would first have to move itself
 * into a leaf of a delegated cgroup (the "no internal processes" rule), which is not built.
 */

export type CgroupController = 'pids' | 'memory';

export type CgroupDir = { ok: true; dir: string } | { ok: false; reason: string };

/** `\040` and the like, as mountinfo escapes spaces, tabs, newlines and backslashes in paths. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * The cgroup of a process in the v1 hierarchy of `controller`, from its `/proc/<pid>/cgroup` text (as the reader's
 * cgroup namespace shows it), or undefined when that hierarchy is not in it.
 */
export function cgroupPath(cgroup: string, controller: CgroupController): string | undefined {
  for (const line of cgroup.split('\n')) {
    const [, , controllers, path] = /^(\d+):([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers !== undefined && path !== undefined && controllers.split(',').includes(controller)) return path;
  }
  return undefined;
}

/** Every hierarchy's path in a `/proc/<pid>/cgroup` text, by controller (parsed once, for scans of every process). */
export function cgroupPaths(cgroup: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of cgroup.split('\n')) {
    const [, , controllers, path] = /^(\d+):([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers === undefined || path === undefined) continue;
    for (const c of controllers.split(',')) if (!out.has(c)) out.set(c, path);
  }
  return out;
}

/**
 * Which of `cgroups` (paths without a trailing `/`, by controller, none below another: the terminals' leaves) holds
 * a process whose hierarchies' paths are `own` (`cgroupPaths`): its own path or an ancestor of it found there,
 * looked up prefix by prefix, shortest first, up to `maxLength` characters, so a path 5,000 levels deep costs no
 * more than a short one. The controllers are tried in the map's order: a process an unsandboxed shell put in one
 * leaf's pids cgroup and another's memory cgroup counts for the first.
 */
export function cgroupIn<T>(
  own: ReadonlyMap<string, string>,
  cgroups: ReadonlyMap<string, ReadonlyMap<string, T>>,
  maxLength: number,
): T | undefined {
  for (const [controller, paths] of cgroups) {
    const path = own.get(controller);
    if (path === undefined) continue;
    for (let end = path.indexOf('/', 1); ; end = path.indexOf('/', end + 1)) {
      const prefix = end < 0 ? path : path.slice(0, end);
      if (prefix.length > maxLength) break;
      const found = paths.get(prefix);
      if (found !== undefined) return found;
      if (end < 0) break;
    }
  }
  return undefined;
}

/** Whether a process whose `/proc/<pid>/cgroup` text is `cgroup` is in the cgroup `path` of `controller`, or below. */
export function inCgroup(cgroup: string, controller: CgroupController, path: string): boolean {
  const own = cgroupPath(cgroup, controller);
  return own !== undefined && (own === path || own.startsWith(path.endsWith('/') ? path : `${path}/`));
}

/** The directory of this process's own cgroup in the v1 hierarchy of `controller`, or why there is none. */
export function cgroupV1Dir(mountinfo: string, cgroup: string, controller: CgroupController): CgroupDir {
  const own = cgroupPath(cgroup, controller);
  const v2 = cgroup.split('\n').some((line) => /^\d+::/.test(line));
  if (own === undefined) {
    return {
      ok: false,
      reason: v2
        ? `only cgroup v2 is mounted (the limit uses a cgroup v1 ${controller} hierarchy)`
        : `no ${controller} cgroup hierarchy is mounted`,
    };
  }
  for (const line of mountinfo.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const fields = line.slice(0, sep).split(' ');
    const [fstype, , superOptions = ''] = line.slice(sep + 3).split(' ');
    if (fstype !== 'cgroup' || !superOptions.split(',').includes(controller)) continue;
    const root = unescapeMountPath(fields[3] ?? '');
    const mountPoint = unescapeMountPath(fields[4] ?? '');
    if (!mountPoint) continue;
    const inside = root === '/' ? own : own === root ? '/' : own.startsWith(`${root}/`) ? own.slice(root.length) : '';
    if (!inside) continue;
    return { ok: true, dir: inside === '/' ? mountPoint : `${mountPoint}${inside}` };
  }
  return { ok: false, reason: `this process's ${controller} cgroup (${own}) is not mounted here` };
}

/** A memory bound as configured: bytes, or a share (`"50%"`) of the memory the runtime may use. 0: none. */
export type MemoryBound = number | `${number}%`;

/**
 * The bound in bytes: a number as it is; a share of `available` (the machine's memory, or the runtime's own
 * cgroup limit where lower), rounded down to whole pages. 0: none.
 */
export function memoryBoundBytes(bound: MemoryBound, available: number): number {
  if (typeof bound === 'number') return bound;
  const share = Number(bound.slice(0, -1)) / 100;
  return Math.floor((available * share) / 4096) * 4096;
}

/** Whether a v1 `memory.oom_control` says tasks of that cgroup are waiting at its bound (`under_oom 1`). */
export function underOom(oomControl: string): boolean {
  return /^under_oom 1$/m.test(oomControl);
}

/** A terminal's leaf as the OOM decision sees it: the memory charged to it, and how many processes it has. */
export type LeafUsage = { terminalId: string; bytes: number; processes: number };

/**
 * The terminal to kill in at the bound of all agents: the one whose leaf holds the most memory (charged to it,
 * however held: mapped, in a file, in a descriptor a small process keeps open), among those with a process left;
 * undefined when there is none. Ties go to the first.
 */
export function oomVictim(leaves: readonly LeafUsage[]): string | undefined {
  let best: LeafUsage | undefined;
  for (const leaf of leaves) {
    if (leaf.processes === 0) continue;
    if (!best || leaf.bytes > best.bytes) best = leaf;
  }
  return best?.terminalId;
}
