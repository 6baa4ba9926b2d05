/**
 * @module
 * Where a workspace's runtime keeps its data (event log, broker store, socket, runtime.json) when no
 * `--data`/`SKEIN_DATA`/`dataDir` says otherwise: `$XDG_STATE_HOME/skein/<workspace id>`, falling back to
 * `~/.local/state/skein/<workspace id>`. Never inside the workspace, so a shell an agent runs there (even
 * sandboxed with the workspace writable) can neither reach the runtime's socket nor rewrite its log. `skein up`
 * and every client command derive it by this one rule, so they meet without a flag.
 */
import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

/** A short, stable, readable id of a workspace: its basename and 12 hex chars of sha256 of its real path. */
export function workspaceId(workspace: string): string {
  let real: string;
  try {
    real = realpathSync(workspace);
  } catch {
    real = resolve(workspace);
  }
  const name = (basename(real) || 'root').replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 48);
  return `${name}-${createHash('sha256').update(real).digest('hex').slice(0, 12)}`;
}

/** The default data dir of `workspace` (see the module doc). `env` gives XDG_STATE_HOME and HOME. */
export function defaultDataDir(workspace: string, env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  // The XDG spec ignores a relative XDG_STATE_HOME.
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
  const state = xdg && isAbsolute(xdg) ? xdg : join(home, '.local', 'state');
  return join(state, 'skein', workspaceId(workspace));
}

/**
 * The nearest directory at or above `start` whose default data dir holds a `runtime.json` (a runtime serves
 * it), so a client command run from `src/` of a workspace meets the runtime started at the workspace root.
 * Stops at `/`; undefined when none serves.
 */
export function findServedWorkspace(start: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let dir = resolve(start);
  for (;;) {
    if (existsSync(join(defaultDataDir(dir, env), 'runtime.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}
