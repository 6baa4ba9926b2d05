/**
 * @module
 * The sandbox's mount plan: the bubblewrap arguments of a sandboxed terminal (what is hidden, read-only,
 * writable, which namespaces), and the workspace paths it protects. Pure of effects but for `realSandboxHost`,
 * which reads the host once per terminal.
 */
import { existsSync, lstatSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, isAbsolute, join } from 'node:path';
import { isInside } from '../../machines/common/confine.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';

export type SandboxOptions = {
  /** Keep the host's network (default: a new, empty network namespace). */
  network?: boolean;
  /** Absolute paths hidden inside the sandbox (the runtime's data dir, anything the operator lists). */
  hide?: string[];
};

/**
 * Files and directories of the workspace an agent must not change from a sandbox, because something outside it
 * reads them later: `.git` (hooks and repository config run by the user's git), `.skein` (the project policy,
 * reloaded live, and `.skein/config.json`), `skein.config.json` (read by the next `skein up` and by the CLI) and
 * `.gitmodules` (the submodules `git submodule update` fetches). Each is read-only in a sandbox, and blocked
 * when missing: the agent cannot create it either.
 */
export const PROTECTED_IN_WORKSPACE = ['.git', '.skein', 'skein.config.json', '.gitmodules'] as const;

/** The protected paths of a workspace (absolute). */
export function protectedPaths(workspace: string): string[] {
  return PROTECTED_IN_WORKSPACE.map((name) => join(workspace, name));
}

/** Secrets of the host user that a sandboxed shell never sees (under the home directory). */
export const HIDDEN_IN_HOME = ['.config', '.ssh', '.gnupg', '.aws', '.kube', '.docker', '.netrc', '.git-credentials'];

/** Host files replaced by an empty file inside the sandbox. */
export const HIDDEN_FILES = ['/etc/shadow', '/etc/gshadow', '/etc/shadow-', '/etc/gshadow-', '/etc/sudoers'];

/** What bwrapArgs needs to know of the host (injected by tests). */
export type SandboxHost = {
  home: string;
  homes: string[];
  exists: (path: string) => boolean;
  isDir: (path: string) => boolean;
  /** Whether the path is a symlink (bwrap follows it: /var/run → /run is hidden with /run). */
  isLink: (path: string) => boolean;
};

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The host as it is: the user's home, and every home directory under /home plus /root. */
export function realSandboxHost(): SandboxHost {
  let homes: string[] = [];
  try {
    homes = readdirSync('/home').map((n) => join('/home', n));
  } catch {
    // no /home
  }
  return { home: homedir(), exists: existsSync, isDir, isLink, homes: [...homes, '/root'] };
}

/**
 * The descriptors bwrap reads from, opened by the launcher (pty-spawn.ts): its seccomp filter, and each kernel
 * setting it writes into the sandbox's `/proc/sys` (`sandboxSysctls`, machines/terminal/sandbox-sysctls.ts).
 */
export type SandboxFds = { seccomp?: number; sysctls: ReadonlyArray<{ fd: number; path: string }> };

/**
 * The directories of the user's home hidden from a sandbox (HIDDEN_IN_HOME that exist as directories and do not
 * hold the workspace): each is replaced by an empty, writable directory of the terminal's scratch, so that tools
 * writing their config there still work, on disk.
 */
export function hiddenHomeDirs(workspace: string, host: SandboxHost): string[] {
  return HIDDEN_IN_HOME.map((name) => join(host.home, name)).filter(
    (path) => host.exists(path) && host.isDir(path) && !isInside(path, workspace),
  );
}

/**
 * Where a sandbox writes besides the workspace, all in the terminal's scratch directory on the runtime's data disk
 * (`scratch`, made by pty-spawn.ts and removed after the shell ended): `/tmp`, `/dev/shm`, and the hidden
 * directories of the home (`home/<name>`). Never a tmpfs: a tmpfs's pages and inodes are charged to the agent's
 * memory cgroup with no process holding them, so the OOM killer could not free them and would kill another
 * agent's process instead; a file on disk is page cache, written back and reclaimed.
 */
export function scratchDirs(scratch: string, workspace: string, host: SandboxHost): Record<string, string> {
  const dirs: Record<string, string> = { '/tmp': join(scratch, 'tmp'), '/dev/shm': join(scratch, 'shm') };
  for (const path of hiddenHomeDirs(workspace, host)) dirs[path] = join(scratch, 'home', basename(path));
  return dirs;
}

/**
 * bubblewrap arguments: read-only root, writable workspace, private /tmp, new user/pid/net/ipc namespaces, the
 * sandbox's kernel settings written during the setup (`fds.sysctls`, each `--file` right after the new `/proc`)
 * and then `/proc/sys` read-only, no user namespace inside (`--disable-userns`), no capability left (`--cap-drop
 * ALL` empties the bounding set too).
 * `--as-pid-1` makes the command the namespace's init: it reaps orphans itself, and no bwrap init is left as a
 * zombie for the host's PID 1 when the terminal closes. No `--new-session`: the shell must keep the PTY as its
 * controlling terminal (job control, ^C). The command follows the returned list.
 *
 * The sandbox is a floor an agent cannot lower from inside (issue 11): `/run` and `/var/run` (host daemons'
 * unix sockets), other users' homes, the user's `~/.config`, `~/.ssh` and other credentials, and
 * `/etc/shadow` are hidden; the workspace's protected paths (PROTECTED_IN_WORKSPACE) are read-only, and a
 * missing one is an empty read-only directory, so that no rename, link or `mkdir` from inside can create it
 * (bwrap makes the mount point on the host: sandbox-placeholders.ts removes it after the last sandbox); the
 * runtime's data dir (socket, event log) is hidden; no network unless the operator allows it. Order matters:
 * bwrap applies mounts in order, so the hiding comes before the workspace bind (a workspace under /home stays
 * visible) and the protections after. Throws when a protected path is a symlink: a mount lands on the link's
 * target, and the link itself could be replaced from inside.
 *
 * Nothing but the workspace and `scratchDirs` is writable: `/dev`, `/run` and the other homes are read-only
 * (a writable tmpfs there would hold memory no process holds, as above).
 */
export function bwrapArgs(
  spec: {
    workspace: string;
    cwd: string;
    scratch: string;
    sandboxOptions?: SandboxOptions | undefined;
    /** The shell's uid and gid inside, where bwrap would not give it the runtime's own (agent-userns.ts). */
    ids?: { uid: number; gid: number } | undefined;
  },
  rcDir: string,
  fds: SandboxFds,
  host: SandboxHost = realSandboxHost(),
): string[] {
  const opts = spec.sandboxOptions ?? {};
  const ws = spec.workspace;
  const within = (path: string, dir: string) => isInside(dir, path);
  const scratch = scratchDirs(spec.scratch, ws, host);
  // The rc file's dir first: a later mount can hide or protect, never be undone by it.
  const args = [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--bind',
    scratch['/dev/shm']!,
    '/dev/shm',
    '--remount-ro',
    '/dev',
    '--proc',
    '/proc',
    ...fds.sysctls.flatMap(({ fd, path }) => ['--file', String(fd), path]),
    // The host's /proc/sys as source (bwrap binds from the old root): sysctls show the reader's namespaces.
    '--ro-bind',
    '/proc/sys',
    '/proc/sys',
    '--bind',
    scratch['/tmp']!,
    '/tmp',
    '--ro-bind',
    rcDir,
    rcDir,
  ];
  // Host daemons listen on unix sockets under /run (mysqld, postgres, dbus, docker): an empty /run instead.
  for (const run of ['/run', '/var/run']) {
    if (host.isDir(run) && !host.isLink(run)) args.push('--tmpfs', run, '--remount-ro', run);
  }
  for (const home of host.homes) {
    if (home === host.home || !host.isDir(home) || within(ws, home)) continue;
    args.push('--tmpfs', home, '--remount-ro', home);
  }
  for (const name of HIDDEN_IN_HOME) {
    const path = join(host.home, name);
    if (!host.exists(path) || within(ws, path)) continue;
    if (host.isDir(path)) args.push('--bind', scratch[path]!, path);
    else args.push('--ro-bind', '/dev/null', path);
  }
  for (const file of HIDDEN_FILES) if (host.exists(file)) args.push('--ro-bind', '/dev/null', file);
  args.push('--bind', ws, ws);
  for (const path of protectedPaths(ws)) {
    if (host.isLink(path)) {
      throw new RuntimeError(
        ErrorCode.InvalidState,
        `'${path}' is a symbolic link, which the sandbox cannot keep read-only (a command could replace the ` +
          'link); ask the user to replace it with the file or directory it points to, then open the terminal again.',
      );
    }
    // A missing path becomes an empty read-only tmpfs: it exists inside, so nothing can be made in its place.
    if (host.exists(path)) args.push('--ro-bind', path, path);
    else args.push('--tmpfs', path, '--remount-ro', path);
  }
  for (const path of opts.hide ?? []) {
    if (!isAbsolute(path) || !host.exists(path)) continue;
    if (host.isDir(path)) args.push('--tmpfs', path, '--remount-ro', path);
    else args.push('--ro-bind', '/dev/null', path);
  }
  // --disable-userns: the shell in a second user namespace below the one the settings went into, none inside.
  args.push('--unshare-user', '--disable-userns', '--unshare-pid', '--as-pid-1');
  if (spec.ids) args.push('--uid', String(spec.ids.uid), '--gid', String(spec.ids.gid));
  if (!opts.network) args.push('--unshare-net');
  args.push('--unshare-ipc', '--unshare-uts', '--cap-drop', 'ALL', '--die-with-parent');
  if (fds.seccomp !== undefined) args.push('--seccomp', String(fds.seccomp));
  args.push('--chdir', spec.cwd, '--');
  return args;
}
