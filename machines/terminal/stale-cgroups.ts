/**
 * @module
 * Whose a runtime's cgroup is, from its name, and what a starting runtime may do with another's. A runtime names
 * its cgroups `skein-<pid>-<random>-s<start>-n<pidns>`: its pid, the process's start time (clock ticks after
 * boot, /proc/<pid>/stat field 22) and its pid namespace's inode. A runtime is alive when a process with that pid
 * and that start time is: a pid reused by another process has another start time. A name from another pid
 * namespace says nothing here (that pid may be alive there), nor does one of an older skein (`skein-<pid>-<random>`,
 * without them): those are removed only when empty, as before. The cgroups of a runtime that died in this
 * namespace (a SIGKILL, an OOM kill, a power cut with cgroups kept) still hold what its agents left running (a
 * daemon a command detached, a bwrap caught in its spawn): the next start kills that and removes them.
 */

/** Who made a runtime's cgroups: enough to tell it from every other process that had its pid. */
export type RuntimeOwner = { pid: number; start: string; pidns: string };

const NAME = /^skein-(\d+)-([0-9a-f]+)(?:-s(\d+)-n(\d+))?$/;

export function runtimeCgroupName(owner: RuntimeOwner, random: string): string {
  return `skein-${owner.pid}-${random}-s${owner.start}-n${owner.pidns}`;
}

/**
 * What a starting runtime (`me`) does with a sibling cgroup named `name`, given the start time of the process
 * with a pid now (undefined: none, or a zombie):
 * - `skip`: not a runtime's, this process's own (a test runs several runtimes in one), or a runtime alive;
 * - `remove-empty`: a runtime that cannot be told alive or dead (another namespace, an older name) and whose pid
 *   is not alive here: removed if empty, its processes left alone;
 * - `kill`: a runtime of this namespace that is gone: what its cgroups hold is killed, then they are removed.
 */
export function staleVerdict(
  name: string,
  me: RuntimeOwner,
  startOf: (pid: number) => string | undefined,
): 'skip' | 'remove-empty' | 'kill' {
  const m = NAME.exec(name);
  if (!m) return 'skip';
  const pid = Number(m[1]);
  const [start, pidns] = [m[3], m[4]];
  if (pid === me.pid && (start === undefined || pidns !== me.pidns || start === me.start)) return 'skip';
  const now = startOf(pid);
  // '0': a namespace that could not be read, which tells nothing.
  if (start === undefined || pidns !== me.pidns || pidns === '0') return now === undefined ? 'remove-empty' : 'skip';
  return now === start ? 'skip' : 'kill';
}
