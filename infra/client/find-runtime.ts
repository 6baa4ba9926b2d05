/**
 * @module
 * Finding the runtime that serves a workspace from any directory inside it:
 * walk up from `cwd` to the first directory whose config (file, environment)
 * names a data dir holding a `runtime.json`, stopping at the workspace root
 * (a directory with `.skein/` or a config file) or the filesystem root.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { CONFIG_FILES, isConfigFile, loadConfig, type LoadedConfig } from '../kernel/config.ts';
import { readRuntimeInfo, type RuntimeInfo } from '../kernel/runtime-info.ts';

export type FoundRuntime = {
  /** The directory the search settled on: the workspace root, or `cwd` when none was found. */
  dir: string;
  config: LoadedConfig;
  /** The live runtime's runtime.json, or undefined when none serves this workspace. */
  info: RuntimeInfo | undefined;
};

/**
 * True when `dir` looks like a workspace root: it has `.skein/` or a skein config file. An empty `.skein` is not
 * one: a sandboxed terminal of a sub-agent's workspace covers a missing `.skein` with an empty directory while it
 * is open (actors/terminal/pty-spawn.ts), and the search must go on up to the runtime's workspace.
 */
function isWorkspaceRoot(dir: string): boolean {
  const skein = join(dir, '.skein');
  return (existsSync(skein) && !isEmptyDir(skein)) || CONFIG_FILES.some((f) => isConfigFile(join(dir, f)));
}

function isEmptyDir(path: string): boolean {
  try {
    return readdirSync(path).length === 0;
  } catch {
    return false;
  }
}

/**
 * Walks up from `cwd`. The first directory with a runtime.json in its data dir wins; else the first workspace
 * root (so a runtime started there lands where `skein up` would put it); else `cwd` itself.
 */
export function findRuntime(options: { cwd?: string; env?: NodeJS.ProcessEnv; dataDir?: string } = {}): FoundRuntime {
  const start = resolve(options.cwd ?? process.cwd());
  const flags = options.dataDir ? { dataDir: resolve(start, options.dataDir) } : {};
  let firstRoot: string | undefined;
  for (let dir = start; ; dir = dirname(dir)) {
    const config = loadConfig({ cwd: dir, env: options.env ?? process.env, flags });
    const info = readRuntimeInfo(config.dataDir);
    if (info && isAlive(info.pid)) return { dir, config, info };
    if (!firstRoot && isWorkspaceRoot(dir)) firstRoot = dir;
    // An explicit data dir or a workspace root ends the search: going further would find a stranger's runtime.
    if (options.dataDir || firstRoot || dirname(dir) === dir) break;
  }
  const dir = firstRoot ?? start;
  return { dir, config: loadConfig({ cwd: dir, env: options.env ?? process.env, flags }), info: undefined };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
