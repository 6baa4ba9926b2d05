/**
 * @module
 * Turns a validated `terminal.open` into a spawned PTY: resolves and checks
 * the shell, the cwd and the environment, and wraps the shell in bubblewrap
 * (sandbox) and prlimit (memory/CPU limits) when asked. Every refusal is a
 * RuntimeError naming the bad value, raised before anything is spawned.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { basename, delimiter, isAbsolute, join, resolve } from 'node:path';
import { spawn, type IPty } from '@lydell/node-pty';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { SUPPORTED_SHELLS } from './shell-integration.ts';

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
  bwrapPath: string;
  memoryLimitBytes: number;
  cpuLimitSeconds: number;
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
 * The caller's `env` overrides all of it.
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
  };
}

/**
 * bubblewrap arguments: read-only root, writable workspace, private /tmp, new
 * pid/net/ipc namespaces, no capabilities. `--as-pid-1` makes the shell the
 * namespace's init: it reaps orphans itself, and no bwrap init is left as a
 * zombie for the host's PID 1 when the terminal closes. No `--new-session`:
 * the shell must keep the PTY as its controlling terminal (job control, ^C).
 */
export function bwrapArgs(spec: Pick<SpawnSpec, 'workspace' | 'cwd'>, rcDir: string): string[] {
  return [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    '--bind',
    spec.workspace,
    spec.workspace,
    '--ro-bind',
    rcDir,
    rcDir,
    '--unshare-pid',
    '--as-pid-1',
    '--unshare-net',
    '--unshare-ipc',
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--chdir',
    spec.cwd,
    '--',
  ];
}

/** The program and arguments that run the shell with the rc file, wrapped as asked. */
export function commandLine(spec: SpawnSpec, rcPath: string, rcDir: string): { file: string; args: string[] } {
  let argv = [spec.shellPath, '--noprofile', '--rcfile', rcPath, '-i'];
  if (spec.memoryLimitBytes > 0 || spec.cpuLimitSeconds > 0) {
    const prlimit = which('prlimit');
    if (!prlimit)
      throw new RuntimeError(
        ErrorCode.Unavailable,
        "Memory/CPU limits are configured but 'prlimit' is not installed; " +
          'install util-linux or set memoryLimitBytes/cpuLimitSeconds to 0.',
      );
    const limits = [];
    if (spec.memoryLimitBytes > 0) limits.push(`--as=${spec.memoryLimitBytes}`);
    if (spec.cpuLimitSeconds > 0) limits.push(`--cpu=${spec.cpuLimitSeconds}`);
    argv = [prlimit, ...limits, '--', ...argv];
  }
  if (spec.sandbox) {
    const bwrap = which(spec.bwrapPath);
    if (!bwrap) {
      throw new RuntimeError(
        ErrorCode.Unavailable,
        `Sandbox requested but bubblewrap ('${spec.bwrapPath}') is not installed; ` +
          `install it (apt-get install -y bubblewrap) or open the terminal without "sandbox".`,
      );
    }
    if (!isAbsolute(spec.workspace))
      throw invalid(`workspace '${spec.workspace}' must be an absolute path for the sandbox.`);
    argv = [bwrap, ...bwrapArgs(spec, rcDir), ...argv];
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
