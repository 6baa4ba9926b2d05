/**
 * @module
 * What a sandbox's first process does before the agent's shell (pure: the numbers and the script). bubblewrap
 * gives it three capabilities in the sandbox's own user namespace, where they act on the sandbox's namespaces
 * alone; it sets two kernel limits that a capability-less process cannot change, then drops every capability,
 * its bounding set too, and becomes the shell (same pid, `exec`):
 *
 * - `kernel.shm_rmid_forced = 1` in the sandbox's IPC namespace: a System V shared memory segment goes when its
 *   last process detaches. Without it, `shmget` + `shmwrite` from an allowed `perl` leaves memory charged to the
 *   agent that no process holds, so the OOM killer cannot free it and picks another agent's process instead.
 * - `user.max_inotify_instances` and `user.max_inotify_watches` in the sandbox's user namespace: the kernel counts
 *   inotify per user, and a sandboxed shell runs as the runtime's user, so one agent's watchers could use up the
 *   allowance of the runtime (its shell side-effect tracking falls back to scans) and of the user's own programs.
 *   A child namespace's count is charged to every namespace above it, each against its own maximum.
 * - `user.max_user_namespaces = 0`: no user namespace inside. In one of its own a process has every capability
 *   over what it mounts there: a live review mounted the cgroup v1 hierarchies in one and, being the host's uid 0
 *   (a runtime run as root), moved itself out of its terminal's cgroup and wrote the host's root cgroup files.
 *
 * Then it makes `/proc/sys` read-only (a read-only bind of itself): a process whose uid is the host's root may
 * write the host's global sysctls (`kernel.core_pattern`, `fs.file-max`) with no capability at all, and a runtime
 * run as root gives its sandboxes uid 0.
 */

/** Per-sandbox inotify maxima. */
export type SandboxKernelLimits = { inotifyInstances: number; inotifyWatches: number };

/** Floors, whatever the share: a watcher or two always start. */
export const MIN_INOTIFY_INSTANCES = 1;
export const MIN_INOTIFY_WATCHES = 1024;

/** `share` ("5%") of the runtime user's inotify maxima (/proc/sys/user/max_inotify_*), floored. */
export function inotifyShare(
  share: `${number}%`,
  userMax: { instances: number; watches: number },
): SandboxKernelLimits {
  const part = Number(share.slice(0, -1)) / 100;
  return {
    inotifyInstances: Math.max(MIN_INOTIFY_INSTANCES, Math.floor(userMax.instances * part)),
    inotifyWatches: Math.max(MIN_INOTIFY_WATCHES, Math.floor(userMax.watches * part)),
  };
}

/** The capabilities the init needs, in the sandbox's user namespace only (bwrap `--cap-add`). */
export const INIT_CAPABILITIES = ['CAP_SYS_ADMIN', 'CAP_SYS_RESOURCE', 'CAP_SETPCAP'] as const;

/** What the init writes: /proc/sys path → value. */
export function initSettings(limits: SandboxKernelLimits): Array<[string, string]> {
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${key} must be a whole number ≥ 1, got ${value}`);
  }
  return [
    ['/proc/sys/kernel/shm_rmid_forced', '1'],
    ['/proc/sys/user/max_inotify_instances', String(limits.inotifyInstances)],
    ['/proc/sys/user/max_inotify_watches', String(limits.inotifyWatches)],
    ['/proc/sys/user/max_user_namespaces', '0'],
  ];
}

/** What the init prints when a setting cannot be written (the terminal then does not open). */
export const INIT_FAILED =
  'skein: the sandbox cannot set its kernel limits (shm_rmid_forced, inotify, user namespaces) or make /proc/sys ' +
  'read-only; no shell starts without them. Ask the operator to check that bubblewrap may make user namespaces here.';

/** The programs the init runs (absolute paths, util-linux): `mount` and `setpriv`. */
export type InitPrograms = { mount: string; setpriv: string };

/**
 * The POSIX sh script of the init, run as `sh -c <script> <name> <command…>`: each setting written, `/proc/sys`
 * made read-only, then `setpriv` clears the inheritable, ambient and bounding sets and execs the command, which
 * therefore has no capability and cannot regain one (not even by exec'ing a set-uid or uid-0 program). A step
 * that fails stops the start: no shell runs without its limits.
 */
export function initScript(limits: SandboxKernelLimits, programs: InitPrograms): string {
  for (const name of ['mount', 'setpriv'] as const) {
    const path = programs[name];
    if (!/^\/[A-Za-z0-9/._+-]+$/.test(path)) {
      throw new Error(`${name} path '${path}' must be absolute and plain (letters, digits, / . _ + -)`);
    }
  }
  const steps = initSettings(limits).map(([path, value]) => `echo ${value} > ${path}`);
  steps.push(`${programs.mount} --bind -o ro /proc/sys /proc/sys`);
  const refuse = `echo "${INIT_FAILED}" >&2; exit 126`;
  const drop = `exec ${programs.setpriv} --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- "$@"`;
  return `{ ${steps.join(' && ')}; } || { ${refuse}; }; ${drop}`;
}
