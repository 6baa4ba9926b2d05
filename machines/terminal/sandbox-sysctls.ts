/**
 * @module
 * The kernel settings of a sandbox (pure: the numbers and where they go). bubblewrap writes them while it sets
 * the sandbox up (`--file`, sandbox-args.ts), in the sandbox's own user namespace where its setup holds every
 * capability and acts on the sandbox's namespaces alone, then makes `/proc/sys` read-only and runs the shell
 * with no capability, its bounding set empty (`--cap-drop ALL`). A capability-less process cannot change them:
 *
 * - `kernel.shm_rmid_forced = 1` in the sandbox's IPC namespace: a System V shared memory segment goes when its
 *   last process detaches. Without it, `shmget` + `shmwrite` from an allowed `perl` leaves memory charged to the
 *   agent that no process holds, so the OOM killer cannot free it and picks another agent's process instead.
 * - `user.max_inotify_instances` and `user.max_inotify_watches` in the sandbox's user namespace: the kernel counts
 *   inotify per user, and a sandboxed shell runs as the runtime's user, so one agent's watchers could use up the
 *   allowance of the runtime (its shell side-effect tracking falls back to scans) and of the user's own programs.
 *   A child namespace's count is charged to every namespace above it, each against its own maximum: the shell's
 *   namespace, below (next paragraph), shows no maximum of its own and is held to these.
 *
 * bubblewrap then starts the shell in a user namespace below that one (`--disable-userns`: it sets
 * `user.max_user_namespaces = 1` where it wrote the rest and uses that one itself), so no user namespace can be
 * made inside. In one of its own a process has every capability over what it mounts there: a live review mounted
 * the cgroup v1 hierarchies in one and, being the host's uid 0 (a runtime run as root), moved itself out of its
 * terminal's cgroup and wrote the host's root cgroup files. Writing 0 there ourselves instead would stop bwrap's
 * own second namespace, which it needs whenever the runtime is not root (to give the shell the runtime's uid
 * after `/dev`'s devpts was mounted as the namespace's root).
 *
 * `/proc/sys` is then read-only (a read-only bind): a process whose uid is the host's root may write the host's
 * global sysctls (`kernel.core_pattern`, `fs.file-max`) with no capability at all, and a runtime run as root
 * gives its sandboxes uid 0.
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

/** What bubblewrap writes, in this order: /proc/sys path → value. Throws on a limit that is not a whole number ≥ 1. */
export function sandboxSysctls(limits: SandboxKernelLimits): Array<[string, string]> {
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new Error(`${key} must be a whole number ≥ 1, got ${value}`);
  }
  return [
    ['/proc/sys/kernel/shm_rmid_forced', '1'],
    ['/proc/sys/user/max_inotify_instances', String(limits.inotifyInstances)],
    ['/proc/sys/user/max_inotify_watches', String(limits.inotifyWatches)],
  ];
}
