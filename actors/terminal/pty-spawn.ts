/**
 * @module
 * Turns a validated `terminal.open` into a spawned PTY: resolves and checks
 * the shell, the cwd and the environment, and wraps the shell in bubblewrap
 * (sandbox, its mounts planned by sandbox-args.ts), prlimit (memory/CPU
 * limits) and its process-limit cgroup when asked. Every refusal is a
 * RuntimeError naming the bad value, raised before anything is spawned.
 */
import { accessSync, constants, realpathSync, statSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { spawn, type IPty } from '@lydell/node-pty';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import type { TerminalConfig, TerminalOpen } from '../../schemas/terminal.ts';
import type { DataOf } from './command-data.ts';
import { ttyInjectionFilter } from '../../machines/terminal/seccomp-filter.ts';
import { type SandboxKernelLimits, sandboxSysctls } from '../../machines/terminal/sandbox-sysctls.ts';
import { SUPPORTED_SHELLS } from './shell-integration.ts';
import { holdPlaceholders } from './sandbox-placeholders.ts';
import { bwrapArgs, protectedPaths, realSandboxHost, scratchDirs, type SandboxOptions } from './sandbox-args.ts';
import { makeScratch } from './sandbox-scratch.ts';

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
  /** The `cgroup.procs` files of the terminal's cgroups (agent-cgroups.ts), joined before anything runs. */
  cgroupProcs?: readonly string[];
  /** A sandbox's scratch directory (sandbox-scratch.ts), made here and removed after its shell ended. */
  scratch?: string;
  /** The kernel limits bwrap sets in a sandbox (sandbox-sysctls.ts). */
  sandboxLimits?: SandboxKernelLimits;
  /** The user namespace a sandbox starts below (`/proc/<pid>/ns/user`): its agent's (agent-userns.ts). */
  userns?: string;
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
    // A missing entry (most of PATH's directories) is told without an exception: an error built per directory
    // was most of a lookup (bash on a PATH of ten under npm: ~80 → ~30 µs).
    try {
      if (!statSync(c, { throwIfNoEntry: false })?.isFile()) continue;
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not here, or not executable by us
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
 * What a `terminal.open` (`open`, validated) asks for, as a spawn spec: its shell, cwd and env checked (throws
 * naming a bad one), the rest from the terminal config. `workspace`: the agent's (cwd base, sandbox root).
 */
export function openSpec(
  terminalId: string,
  agentId: string,
  open: DataOf<typeof TerminalOpen>,
  config: TerminalConfig,
  workspace?: string,
): SpawnSpec {
  const cwd = resolveCwd(open.cwd, workspace ?? process.cwd());
  return {
    terminalId,
    agentId,
    cwd,
    workspace: workspace ?? cwd,
    env: checkEnv(open.env),
    cols: open.cols ?? config.defaultCols,
    rows: open.rows ?? config.defaultRows,
    shellPath: resolveShell(open.shell ?? config.shell),
    sandbox: open.sandbox ?? config.sandbox ?? false,
    sandboxOptions: { network: config.sandboxNetwork, hide: config.sandboxHide },
    bwrapPath: config.bwrapPath,
    memoryLimitBytes: config.memoryLimitBytes,
    cpuLimitSeconds: config.cpuLimitSeconds,
  };
}

/**
 * The environment a terminal's processes start with, the host-side wrappers (setsid, stty, sh, bwrap) too:
 * nothing inherited but PATH, HOME, USER, LOGNAME and LANG; set so that agents get predictable,
 * non-interactive output (TERM=xterm-256color, PAGER/GIT_PAGER/MANPAGER/SYSTEMD_PAGER=cat,
 * DEBIAN_FRONTEND=noninteractive) plus SKEIN_TERMINAL_ID/SKEIN_AGENT_ID and the git and readline protections
 * (GIT_PROTECTIONS, READLINE_PROTECTIONS). Never the caller's `env`: an `LD_PRELOAD` in it would run the
 * agent's code in those wrappers, outside the sandbox and before the cgroup join. The caller's `env` reaches the
 * shell alone (`agentEnv`, set by `env` just before the shell, inside the sandbox).
 */
export function terminalEnv(spec: Pick<SpawnSpec, 'terminalId' | 'agentId' | 'shellPath'>): Record<string, string> {
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
    ...GIT_PROTECTIONS,
    ...READLINE_PROTECTIONS,
  };
}

/** The caller's `env` as the shell gets it: over `terminalEnv`, but never over the git or readline protections. */
export function agentEnv(spec: Pick<SpawnSpec, 'env'>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(spec.env).filter(([key]) => !(key in GIT_PROTECTIONS) && !(key in READLINE_PROTECTIONS)),
  );
}

/**
 * Readline's settings every terminal starts with, after the caller's env: no init file (`INPUTRC=/dev/null`:
 * neither `~/.inputrc` nor /etc/inputrc). skein types each command's line through readline, and a key bound to a
 * macro in a file the agent wrote (a workspace `.inputrc`, with HOME pointed at the workspace in the open's env)
 * turned that line into another command (`test/hostile/readline-state`). Keys keep readline's own defaults.
 */
export const READLINE_PROTECTIONS: Record<string, string> = { INPUTRC: '/dev/null' };

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

function realWorkspace(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // bwrap cannot bind it either, and says so
  }
}

/** The descriptor bwrap reads its seccomp filter from. */
const SECCOMP_FD = 9;
/** The first descriptor bwrap reads a kernel setting from (one each, `sandboxSysctls`). */
const FIRST_SYSCTL_FD = 4;

/** A descriptor the launcher opens for bwrap: `fd` reads the file at `path`. */
export type LaunchFile = { fd: number; path: string };

/**
 * What bwrap reads from descriptors (node-pty can hand a child none but its terminal): the seccomp filter and
 * each kernel setting, written as files into the terminal's rc directory (private, read-only in the sandbox)
 * for the launcher to open. Returns the files and the descriptors bwrap is told of.
 */
export function sandboxFiles(rcDir: string, limits: SandboxKernelLimits, filter: Uint8Array | undefined) {
  const files: LaunchFile[] = [];
  const sysctls = sandboxSysctls(limits).map(([path, value], i) => {
    const file = join(rcDir, `sysctl-${basename(path)}`);
    writeFileSync(file, `${value}\n`, { mode: 0o600 });
    files.push({ fd: FIRST_SYSCTL_FD + i, path: file });
    return { fd: FIRST_SYSCTL_FD + i, path };
  });
  if (!filter) return { files, fds: { sysctls } };
  const path = join(rcDir, 'seccomp.bpf');
  writeFileSync(path, filter, { mode: 0o600 });
  files.push({ fd: SECCOMP_FD, path });
  return { files, fds: { sysctls, seccomp: SECCOMP_FD } };
}

/**
 * `nsenter` into the agent's user namespace (agent-userns.ts), keeping the runtime's uid (the namespace's root),
 * then the rest (bwrap makes the sandbox's own namespaces below it).
 */
function enterUserns(path: string): string[] {
  const nsenter = required(
    'nsenter',
    "The sandbox needs util-linux's 'nsenter' to start in its agent's user namespace",
    'install util-linux or open the terminal without "sandbox"',
  );
  return [nsenter, `--user=${path}`, '--preserve-credentials', '--'];
}

/**
 * The uid and gid the shell gets in a sandbox started below its agent's namespace: the runtime's (bwrap would
 * otherwise keep that namespace's root, which the runtime's uid is there).
 */
function sandboxIds(spec: SpawnSpec): { uid: number; gid: number } | undefined {
  if (!spec.userns || !process.getuid || !process.getgid) return undefined;
  return { uid: process.getuid(), gid: process.getgid() };
}

/** The program and arguments that run the shell with the rc file, wrapped as asked. */
export function commandLine(spec: SpawnSpec, rcPath: string, rcDir: string): { file: string; args: string[] } {
  let argv = [spec.shellPath, '--noprofile', '--rcfile', rcPath, '-i'];
  let files: LaunchFile[] = [];
  // Innermost: the caller's env is set by `env` for the shell alone, after the sandbox and the cgroup join.
  const extra = Object.entries(agentEnv(spec));
  if (extra.length > 0) {
    const env = required('env', "A terminal's env needs 'env' on PATH", 'install coreutils or open it without env');
    argv = [env, ...extra.map(([key, value]) => `${key}=${value}`), ...argv];
  }
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
    const { scratch, sandboxLimits } = spec;
    if (!scratch || !sandboxLimits) throw new Error('a sandboxed SpawnSpec needs scratch and sandboxLimits');
    const sandbox = sandboxFiles(rcDir, sandboxLimits, filter);
    files = sandbox.files;
    argv = [bwrap, ...bwrapArgs({ ...spec, scratch, ids: sandboxIds(spec) }, rcDir, sandbox.fds, host), ...argv];
    if (spec.userns) argv = [...enterUserns(spec.userns), ...argv];
    makeScratch(spec.terminalId, scratch, scratchDirs(scratch, spec.workspace, host));
    // Last, once nothing can throw: the terminal's end releases them (terminal-session.ts). By real path, so
    // that two spellings of one workspace hold the same placeholders.
    const paths = protectedPaths(realWorkspace(spec.workspace));
    holdPlaceholders(spec.terminalId, paths, (path) => !host.exists(path));
  }
  const procs = spec.cgroupProcs ?? [];
  if (procs.length || files.length) argv = [...launcher(procs, files), ...argv];
  return { file: argv[0]!, args: argv.slice(1) };
}

/** The launcher's `$0`: how `sessionCommand` (session-command.ts) knows a command line that starts with one. */
export const LAUNCH_NAME = 'skein-launch';

/**
 * Outermost, one POSIX sh: it writes its pid to each cgroup (`procs`), opens each of `files` on its descriptor,
 * then becomes the rest (`exec`, same pid); a failed step: no run. The paths are its arguments `$1`…, shifted off
 * before the exec.
 */
export function launcher(procs: readonly string[], files: readonly LaunchFile[]): string[] {
  const sh = required(
    'sh',
    "The sandbox and the per-agent limits need a POSIX 'sh' on PATH",
    'install one (dash), or open the terminal without "sandbox" and set domains.terminal.maxProcessesPerAgent ' +
      'and maxMemoryPerAgent to 0',
  );
  const steps = procs.map((_, i) => `echo $$ > "\${${i + 1}}"`);
  const opens = files.map(({ fd }, i) => `${fd}<"\${${procs.length + i + 1}}"`);
  if (opens.length) steps.push(`exec ${opens.join(' ')}`);
  const script = `${steps.join(' && ')} && shift ${procs.length + files.length} && exec "$@"`;
  return [sh, '-c', script, LAUNCH_NAME, ...procs, ...files.map((f) => f.path)];
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
