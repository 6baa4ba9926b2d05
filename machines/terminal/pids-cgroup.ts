/**
 * @module
 * Where this process's pids cgroup is (the process limit, `actors/terminal/process-cgroups.ts`), read from
 * the texts of `/proc/self/mountinfo` and `/proc/self/cgroup`. Pure.
 *
 * Only a cgroup v1 `pids` hierarchy is used: there a cgroup may hold processes and child cgroups at once, so
 * the runtime can make its cgroups below its own. Under cgroup v2 it would first have to move itself into a
 * leaf of a delegated cgroup (the "no internal processes" rule), which is not built.
 */

export type PidsCgroup = { ok: true; dir: string } | { ok: false; reason: string };

/** `\040` and the like, as mountinfo escapes spaces, tabs, newlines and backslashes in paths. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** The directory of this process's own cgroup in the v1 `pids` hierarchy, or why there is none. */
export function pidsCgroupDir(mountinfo: string, cgroup: string): PidsCgroup {
  let own: string | undefined;
  let v2 = false;
  for (const line of cgroup.split('\n')) {
    const [, , controllers, path] = /^(\d+):([^:]*):(.*)$/.exec(line) ?? [];
    if (controllers === undefined || path === undefined) continue;
    if (controllers.split(',').includes('pids')) own = path;
    if (controllers === '') v2 = true;
  }
  if (own === undefined) {
    return {
      ok: false,
      reason: v2
        ? 'only cgroup v2 is mounted (the process limit uses a cgroup v1 pids hierarchy)'
        : 'no pids cgroup hierarchy is mounted',
    };
  }
  for (const line of mountinfo.split('\n')) {
    const sep = line.indexOf(' - ');
    if (sep < 0) continue;
    const fields = line.slice(0, sep).split(' ');
    const [fstype, , superOptions = ''] = line.slice(sep + 3).split(' ');
    if (fstype !== 'cgroup' || !superOptions.split(',').includes('pids')) continue;
    const root = unescapeMountPath(fields[3] ?? '');
    const mountPoint = unescapeMountPath(fields[4] ?? '');
    if (!mountPoint) continue;
    const inside = root === '/' ? own : own === root ? '/' : own.startsWith(`${root}/`) ? own.slice(root.length) : '';
    if (!inside) continue;
    return { ok: true, dir: inside === '/' ? mountPoint : `${mountPoint}${inside}` };
  }
  return { ok: false, reason: `this process's pids cgroup (${own}) is not mounted here` };
}
