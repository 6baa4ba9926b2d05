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
 *   A child namespace's count is charged to every namespace above it, each against its own maximum, so a nested
 *   namespace made inside cannot raise it.
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
  ];
}

/** What the init prints when a setting cannot be written (the terminal then does not open). */
export const INIT_FAILED =
  'skein: the sandbox cannot set its kernel limits (shm_rmid_forced, inotify); no shell starts without them. ' +
  'Ask the operator to check that bubblewrap may make user namespaces here.';

/**
 * The POSIX sh script of the init, run as `sh -c <script> <name> <command…>`: each setting written, then
 * `setpriv` (absolute path, util-linux) clears the inheritable, ambient and bounding sets and execs the command,
 * which therefore has no capability and cannot regain one (not even by exec'ing a set-uid or uid-0 program). A
 * write that fails stops the start: no shell runs without its limits.
 */
export function initScript(limits: SandboxKernelLimits, setpriv: string): string {
  if (!/^\/[A-Za-z0-9/._+-]+$/.test(setpriv)) {
    throw new Error(`setpriv path '${setpriv}' must be absolute and plain (letters, digits, / . _ + -)`);
  }
  const writes = initSettings(limits).map(([path, value]) => `echo ${value} > ${path}`);
  const refuse = `echo "${INIT_FAILED}" >&2; exit 126`;
  const drop = `exec ${setpriv} --inh-caps=-all --ambient-caps=-all --bounding-set=-all -- "$@"`;
  return `{ ${writes.join(' && ')}; } || { ${refuse}; }; ${drop}`;
}
