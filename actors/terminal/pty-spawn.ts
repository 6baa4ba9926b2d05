/**
 * @module
 * Turns a validated `terminal.open` into a spawned PTY: resolves and checks
 * the shell, the cwd and the environment, and wraps the shell in bubblewrap
 * (sandbox) and prlimit (memory/CPU limits) when asked. Every refusal is a
 * RuntimeError naming the bad value, raised before anything is spawned.
 */
import { isInside } from '../../machines/common/confine.ts';
import {
  accessSync,
  constants,
  existsSync,
  lstatSync,
  readdirSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir, hostname, userInfo } from 'node:os';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { spawn, type IPty } from '@lydell/node-pty';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { ttyInjectionFilter } from '../../machines/terminal/seccomp-filter.ts';
import { SUPPORTED_SHELLS } from './shell-integration.ts';
import { holdPlaceholders } from './sandbox-placeholders.ts';

/** PATH when the host process has none. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export type SpawnSpec = {
  terminalId: string;
  agentId: string;
  cwd: string;
  /** Writable root of a sandboxed terminal. */
  workspace: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  shellPath: string;
  sandbox: boolean;
  /** What the sandbox lets through besides the workspace: network, and more paths to hide. */
  sandboxOptions?: SandboxOptions;
  bwrapPath: string;
  memoryLimitBytes: number;
  cpuLimitSeconds: number;
  /** The `cgroup.procs` of the terminal's process-limit cgroup (process-cgroups.ts), joined before anything runs. */
  cgroupProcs?: string;
};

export type SandboxOptions = {
  /** Keep the host's network (default: a new, empty network namespace). */
  network?: boolean;
  /** Absolute paths hidden inside the sandbox (the runtime's data dir, anything the operator lists). */
  hide?: string[];
};

function invalid(message: string): RuntimeError {
  return new RuntimeError(ErrorCode.InvalidMessage, message);
}

/** Finds an executable on PATH (or checks a path); undefined when there is none. */
export function which(program: string, path = process.env.PATH ?? DEFAULT_PATH): string | undefined {
  const candidates = program.includes('/')
    ? [resolve(program)]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((d) => join(d, program));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      if (statSync(c).isFile()) return c;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** `which(program)`, or an `unavailable` error saying what needs it and what to do (`remedy`). */
function required(program: string, needed: string, remedy: string): string {
  const found = which(program);
  if (found) return found;
  throw new RuntimeError(ErrorCode.Unavailable, `${needed}; ${remedy}.`);
}

export function resolveShell(shell: string): string {
  const path = which(shell);
  if (!path) throw invalid(`Shell '${shell}' was not found on PATH; install it or omit "shell" to use bash.`);
  const name = basename(path);
  if (!(SUPPORTED_SHELLS as readonly string[]).includes(name)) {
    throw invalid(
      `Shell '${shell}' has no skein shell integration (supported: ` +
        `${SUPPORTED_SHELLS.join(', ')}); omit "shell" to use bash.`,
    );
  }
  return path;
}

/** Resolves `cwd` against `base` and checks it is an existing directory. */
export function resolveCwd(cwd: string | undefined, base: string): string {
  const path = cwd === undefined ? base : isAbsolute(cwd) ? cwd : resolve(base, cwd);
  let isDir: boolean;
  try {
    isDir = statSync(path).isDirectory();
  } catch {
    throw invalid(`cwd '${path}' does not exist; create it first or pass an existing directory.`);
  }
  if (!isDir) throw invalid(`cwd '${path}' is not a directory; pass a directory.`);
  return path;
}

export function checkEnv(env: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env ?? {})) {
    if (typeof value !== 'string') {
      throw invalid(
        `env '${key}' has a ${value === null ? 'null' : typeof value} value; environment values must be strings.`,
      );
    }
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
      throw invalid(`env name '${key}' is not a valid variable name; use [A-Za-z_][A-Za-z0-9_]*.`);
    if (value.includes('\0')) throw invalid(`env '${key}' contains a NUL byte; remove it.`);
    out[key] = value;
  }
  return out;
}

/**
 * The environment of a terminal: nothing inherited but PATH, HOME, USER,
 * LOGNAME and LANG; set so that agents get predictable, non-interactive
 * output (TERM=xterm-256color, PAGER/GIT_PAGER/MANPAGER/SYSTEMD_PAGER=cat,
 * DEBIAN_FRONTEND=noninteractive) plus SKEIN_TERMINAL_ID/SKEIN_AGENT_ID.
 * The caller's `env` overrides all of it but the git protections (GIT_PROTECTIONS).
 */
export function terminalEnv(
  spec: Pick<SpawnSpec, 'terminalId' | 'agentId' | 'env' | 'shellPath'>,
): Record<string, string> {
  let user = process.env.USER ?? '';
  try {
    user ||= userInfo().username;
  } catch {
    // no passwd entry
  }
  return {
    PATH: process.env.PATH ?? DEFAULT_PATH,
    HOME: process.env.HOME ?? '/',
    USER: user,
    LOGNAME: user,
    LANG: process.env.LANG ?? 'C.UTF-8',
    SHELL: spec.shellPath,
    HOSTNAME: hostname(),
    TERM: 'xterm-256color',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    MANPAGER: 'cat',
    SYSTEMD_PAGER: 'cat',
    DEBIAN_FRONTEND: 'noninteractive',
    SKEIN_TERMINAL_ID: spec.terminalId,
    SKEIN_AGENT_ID: spec.agentId,
    ...spec.env,
    ...GIT_PROTECTIONS,
  };
}

/**
 * Git settings every terminal runs with, after the caller's env (a floor, like the sandbox): an allow rule
 * for `git status` must never run code an agent planted. Passed as command-line scope config
 * (`GIT_CONFIG_COUNT`/`KEY_n`/`VALUE_n`), which wins over repository config:
 * - `safe.bareRepository=explicit`: a planted bare repository (`evil/HEAD`, `evil/config` with
 *   `core.fsmonitor`, `core.worktree = ..`) is not discovered from its directory;
 * - `core.fsmonitor=false`: no fsmonitor hook from any repository's config;
 * - `core.hooksPath=/dev/null`: no hook (pre-commit, post-checkout…) an agent wrote into a repository runs.
 * Not covered: `filter.<driver>` and `diff.<driver>.textconv` in a repository config an agent can write;
 * the sandbox keeps `.git` read-only for that.
 */
export const GIT_PROTECTIONS: Record<string, string> = gitConfigEnv([
  ['safe.bareRepository', 'explicit'],
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
]);

function gitConfigEnv(pairs: Array<[string, string]>): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(pairs.length) };
  pairs.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

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
 * bubblewrap arguments: read-only root, writable workspace, private /tmp, new pid/net/ipc namespaces, no
 * capabilities. `--as-pid-1` makes the shell the namespace's init: it reaps orphans itself, and no bwrap
 * init is left as a zombie for the host's PID 1 when the terminal closes. No `--new-session`: the shell
 * must keep the PTY as its controlling terminal (job control, ^C).
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
 */
export function bwrapArgs(
  spec: Pick<SpawnSpec, 'workspace' | 'cwd' | 'sandboxOptions'>,
  rcDir: string,
  host: SandboxHost = realSandboxHost(),
  /** The descriptor bwrap reads the seccomp filter from (`ttyInjectionFilter`), when there is one. */
  seccompFd?: number,
): string[] {
  const opts = spec.sandboxOptions ?? {};
  const ws = spec.workspace;
  const within = (path: string, dir: string) => isInside(dir, path);
  // The rc file's dir first: a later mount can hide or protect, never be undone by it.
  const args = [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    '--ro-bind',
    rcDir,
    rcDir,
  ];
  // Host daemons listen on unix sockets under /run (mysqld, postgres, dbus, docker): an empty /run instead.
  for (const run of ['/run', '/var/run']) if (host.isDir(run) && !host.isLink(run)) args.push('--tmpfs', run);
  for (const home of host.homes) {
    if (home === host.home || !host.isDir(home) || within(ws, home)) continue;
    args.push('--tmpfs', home);
  }
  for (const name of HIDDEN_IN_HOME) {
    const path = join(host.home, name);
    if (!host.exists(path) || within(ws, path)) continue;
    if (host.isDir(path)) args.push('--tmpfs', path);
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
  args.push('--unshare-pid', '--as-pid-1');
  if (!opts.network) args.push('--unshare-net');
  args.push('--unshare-ipc', '--unshare-uts', '--cap-drop', 'ALL', '--die-with-parent');
  if (seccompFd !== undefined) args.push('--seccomp', String(seccompFd));
  args.push('--chdir', spec.cwd, '--');
  return args;
}

function realWorkspace(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // bwrap cannot bind it either, and says so
  }
}

/** The descriptor bwrap reads its seccomp filter from. */
const SECCOMP_FD = 9;

/**
 * node-pty can hand a child no descriptor but its terminal, so a POSIX sh opens the filter (written beside the
 * rc file, which the sandbox sees read-only) on `fd` and then becomes bwrap (`exec`, same pid).
 */
function withFilterOn(fd: number, filter: Uint8Array, rcDir: string, argv: string[]): string[] {
  const sh = required(
    'sh',
    "The sandbox needs a POSIX 'sh' on PATH to load its seccomp filter",
    'install one (dash) or open the terminal without "sandbox"',
  );
  const path = join(rcDir, 'seccomp.bpf');
  writeFileSync(path, filter, { mode: 0o600 });
  return [sh, '-c', `exec "$@" ${fd}<"$0"`, path, ...argv];
}

/** The program and arguments that run the shell with the rc file, wrapped as asked. */
export function commandLine(spec: SpawnSpec, rcPath: string, rcDir: string): { file: string; args: string[] } {
  let argv = [spec.shellPath, '--noprofile', '--rcfile', rcPath, '-i'];
  if (spec.memoryLimitBytes > 0 || spec.cpuLimitSeconds > 0) {
    const prlimit = required(
      'prlimit',
      "Memory/CPU limits are configured but 'prlimit' is not installed",
      'install util-linux or set memoryLimitBytes/cpuLimitSeconds to 0',
    );
    const limits = [];
    if (spec.memoryLimitBytes > 0) limits.push(`--as=${spec.memoryLimitBytes}`);
    if (spec.cpuLimitSeconds > 0) limits.push(`--cpu=${spec.cpuLimitSeconds}`);
    argv = [prlimit, ...limits, '--', ...argv];
  }
  if (spec.sandbox) {
    const bwrap = required(
      spec.bwrapPath,
      `Sandbox requested but bubblewrap ('${spec.bwrapPath}') is not installed`,
      'install it (apt-get install -y bubblewrap) or open the terminal without "sandbox"',
    );
    if (!isAbsolute(spec.workspace))
      throw invalid(`workspace '${spec.workspace}' must be an absolute path for the sandbox.`);
    const filter = ttyInjectionFilter(process.arch);
    const host = realSandboxHost();
    argv = [bwrap, ...bwrapArgs(spec, rcDir, host, filter ? SECCOMP_FD : undefined), ...argv];
    if (filter) argv = withFilterOn(SECCOMP_FD, filter, rcDir, argv);
    // Last, once nothing can throw: the terminal's end releases them (terminal-session.ts). By real path, so
    // that two spellings of one workspace hold the same placeholders.
    const paths = protectedPaths(realWorkspace(spec.workspace));
    holdPlaceholders(spec.terminalId, paths, (path) => !host.exists(path));
  }
  if (spec.cgroupProcs) {
    // Outermost: a POSIX sh writes its pid to the cgroup, then becomes the rest (same pid); a failed write: no run.
    const sh = required(
      'sh',
      "The process limit needs a POSIX 'sh' on PATH",
      'install one (dash) or set domains.terminal.maxProcessesPerAgent to 0',
    );
    argv = [sh, '-c', 'echo $$ > "$0" && exec "$@"', spec.cgroupProcs, ...argv];
  }
  return { file: argv[0]!, args: argv.slice(1) };
}

export function spawnPty(spec: SpawnSpec, rcPath: string, rcDir: string): IPty {
  const { file, args } = commandLine(spec, rcPath, rcDir);
  return spawn(file, args, {
    name: 'xterm-256color',
    cols: spec.cols,
    rows: spec.rows,
    cwd: spec.cwd,
    env: terminalEnv(spec),
  });
}
