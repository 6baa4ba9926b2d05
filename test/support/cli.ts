/**
 * @module
 * Runs the real `skein` executable as a child process, as a user would.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SKEIN_BIN = fileURLToPath(new URL('../../infra/cli/skein.mjs', import.meta.url));

/** The environment without SKEIN_* from the developer's shell, so tests see only what they set. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SKEIN_')));
  // Never the developer's global policy file.
  return { ...env, SKEIN_POLICY: '/nonexistent/skein-test-policy.json', ...extra };
}

export type CliResult = { code: number; stdout: string; stderr: string };

export function runCli(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number; bin?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [options.bin ?? SKEIN_BIN, ...args],
      {
        cwd: options.cwd,
        env: options.env ?? cleanEnv(),
        timeout: options.timeoutMs ?? 30_000,
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

export type LongRunning = {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
};

/** `ownGroup`: the process leads a process group of its own, as a command started from a shell does. */
export function startCli(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; ownGroup?: boolean } = {},
): LongRunning {
  const child = spawn(process.execPath, [SKEIN_BIN, ...args], {
    cwd: options.cwd,
    env: options.env ?? cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.ownGroup ?? false,
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor: (pattern, timeoutMs = 60_000) =>
      new Promise((resolve, reject) => {
        const started = Date.now();
        const poll = () => {
          const m = out.match(pattern);
          if (m) return resolve(m);
          if (child.exitCode !== null || Date.now() - started > timeoutMs) {
            return reject(
              new Error(`no ${pattern} in output (exit ${child.exitCode}).\nstdout: ${out}\nstderr: ${err}`),
            );
          }
          setTimeout(poll, 25);
        };
        poll();
      }),
  };
}

export type EmbeddedRun = {
  dir: string;
  data: string;
  workspace: string;
  up: LongRunning;
  /** The private broker's URL (`mode: 'private'`). */
  url?: string;
  dispose(): Promise<void>;
};

/** `skein up --embedded` in a temp dir with `policy` as the project policy; resolves once it serves. */
export async function startEmbeddedCli(options: {
  policy: unknown;
  prepare?: (workspace: string, dir: string) => void;
}): Promise<EmbeddedRun> {
  return startCliRuntime({ ...options, mode: 'embedded' });
}

/** `skein up --embedded` or `--private` in a temp dir with `policy` as the project policy, once it serves. */
export async function startCliRuntime(options: {
  mode: 'embedded' | 'private';
  policy: unknown;
  prepare?: (workspace: string, dir: string) => void;
}): Promise<EmbeddedRun> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-cli-'));
  const data = join(dir, 'data');
  const workspace = join(dir, 'ws');
  mkdirSync(join(workspace, '.skein'), { recursive: true });
  writeFileSync(join(workspace, '.skein', 'policy.json'), JSON.stringify(options.policy));
  options.prepare?.(workspace, dir);
  const up = startCli(['up', `--${options.mode}`, '--data', data, '--workspace', workspace]);
  const [, url] =
    options.mode === 'private'
      ? await up.waitFor(/mode private, private broker at (\S+)/)
      : await up.waitFor(/mode embedded/);
  return {
    dir,
    data,
    workspace,
    up,
    ...(url ? { url } : {}),
    async dispose() {
      if (up.child.exitCode === null) {
        up.child.kill('SIGTERM');
        await up.exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
