/**
 * @module
 * Policy files on disk: the global file (`$SKEIN_POLICY`, else
 * `$XDG_CONFIG_HOME/skein/policy.json`, else `~/.config/skein/policy.json`)
 * and the project file (`<workspace>/.skein/policy.json`). Loading validates
 * with the zod schema (errors name the key); learned rules are persisted
 * into the project file atomically (temp file + fsync + rename), keeping the
 * file's own shape (bare, or wrapped in `tool_permissions`). Also resolves a
 * path's symlinks for the file tools' escape check.
 */
import { readFile, realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { atFd, writeFileAtomic } from '../common/atomic-write.ts';
import { openRoot } from '../common/root-cache.ts';
import type { LearnedRules } from '../../schemas/permission.ts';
import { formatPolicyIssues, type Policy, PolicyFile } from '../../schemas/policy.ts';
import type { PathFacts } from '../../machines/permission/permission-paths.ts';
import { normalizePath } from '../../machines/permission/permission-paths.ts';
import type { PolicyLayer } from '../../machines/permission/policy.ts';

export const PROJECT_POLICY_FILE = '.skein/policy.json';

/** A policy file that is not valid JSON or not a valid policy. */
export class PolicyFileError extends RuntimeError {
  override name = 'PolicyFileError';
  constructor(path: string, detail: string, cause?: unknown) {
    super(ErrorCode.InvalidMessage, `Policy file '${path}' is invalid: ${detail}. Fix the file and try again.`, {
      cause,
      details: { path },
    });
  }
}

/** The global policy file path. */
export function globalPolicyPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SKEIN_POLICY) return resolve(env.SKEIN_POLICY);
  const base = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(base, 'skein', 'policy.json');
}

/** The project policy file of a workspace. */
export function projectPolicyPath(workspace: string): string {
  return join(resolve(workspace), PROJECT_POLICY_FILE);
}

/** Parses policy JSON text; throws PolicyFileError naming the bad key. */
export function parsePolicyText(text: string, source: string): Policy {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new PolicyFileError(source, `not valid JSON (${(err as Error).message})`, err);
  }
  const parsed = PolicyFile.safeParse(raw);
  if (!parsed.success) throw new PolicyFileError(source, formatPolicyIssues(parsed.error));
  return parsed.data;
}

/** Loads one policy file; undefined when it does not exist. */
export async function loadPolicyFile(path: string): Promise<Policy | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new PolicyFileError(path, `cannot be read (${(err as Error).message})`, err);
  }
  return parsePolicyText(text, path);
}

/** The global and project layers that exist, in merge order. */
export async function loadPolicyLayers(options: { workspace: string; globalPath?: string }): Promise<PolicyLayer[]> {
  const layers: PolicyLayer[] = [];
  const global = await loadPolicyFile(options.globalPath ?? globalPolicyPath());
  if (global) layers.push({ name: 'global', policy: global });
  const project = await loadPolicyFile(projectPolicyPath(options.workspace));
  if (project) layers.push({ name: 'project', policy: project });
  return layers;
}

const writeQueues = new Map<string, Promise<unknown>>();

/** Runs `fn` after every earlier write to `path` in this process. */
function serialized<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const prev = writeQueues.get(path) ?? Promise.resolve();
  const next = prev.catch(() => undefined).then(fn);
  writeQueues.set(path, next);
  return next;
}

/**
 * Adds learned rules to the project file (created if missing) atomically and
 * returns the whole new layer. Patterns already present are not added twice.
 */
export function persistLearnedRules(
  workspace: string,
  learned: LearnedRules,
): Promise<{ path: string; policy: Policy }> {
  const path = projectPolicyPath(workspace);
  return serialized(path, () => inProjectRoot(workspace, (at) => learnInto(path, at, learned)));
}

/**
 * Runs `fn` with the project file's path through the descriptor of the workspace root skein pinned
 * (`root-cache.ts`). A root moved or swapped for a symlink is refused, naming both places, and a missing one is
 * NotFound: the project file is never read from, nor written to, wherever the root's name points now.
 */
async function inProjectRoot<T>(workspace: string, fn: (at: string) => Promise<T>): Promise<T> {
  const root = await openRoot(workspace);
  try {
    return await fn(atFd(root.dir.fd, PROJECT_POLICY_FILE));
  } finally {
    root.release();
  }
}

/** Adds `learned` to the project file (shown as `path`, reached at `at`). */
async function learnInto(path: string, at: string, learned: LearnedRules): Promise<{ path: string; policy: Policy }> {
  let raw: Record<string, unknown> = {};
  let text: string | undefined;
  try {
    text = await readFile(at, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new PolicyFileError(path, `cannot be read (${(err as Error).message})`, err);
  }
  if (text !== undefined) {
    parsePolicyText(text, path); // refuse to extend an invalid file
    raw = JSON.parse(text) as Record<string, unknown>;
  }
  const target = policyObject(raw);
  const tools = (target.tools ??= {}) as Record<string, Record<string, unknown>>;
  const tool = (tools[learned.tool] ??= {});
  const list = ((tool[learned.list] as Array<{ pattern: string }> | undefined) ??= []);
  for (const pattern of learned.patterns) if (!list.some((r) => r.pattern === pattern)) list.push({ pattern });
  const out = `${JSON.stringify(raw, null, 2)}\n`;
  const policy = parsePolicyText(out, path);
  await writeFileAtomic(at, out, 0o644);
  return { path, policy };
}

/**
 * Replaces a policy file with `policy` (for `policy.set` on the project or global layer), atomically. With
 * `workspace`, `path` is that workspace's project file, written through the root skein pinned.
 */
export function writePolicyFile(path: string, policy: unknown, workspace?: string): Promise<Policy> {
  return serialized(path, async () => {
    const out = `${JSON.stringify(policy, null, 2)}\n`;
    const parsed = parsePolicyText(out, path);
    if (workspace === undefined) await writeFileAtomic(path, out, 0o644);
    else await inProjectRoot(workspace, (at) => writeFileAtomic(at, out, 0o644));
    return parsed;
  });
}

function policyObject(raw: Record<string, unknown>): Record<string, unknown> {
  const agent = raw.agent as Record<string, unknown> | undefined;
  if (agent && typeof agent === 'object' && agent.tool_permissions)
    return agent.tool_permissions as Record<string, unknown>;
  if (raw.tool_permissions && typeof raw.tool_permissions === 'object')
    return raw.tool_permissions as Record<string, unknown>;
  return raw;
}

/**
 * The path facts for a file tool: roots (lexical and real), the realpath of
 * the path (or of its deepest existing ancestor, plus the rest), and the
 * policy files as sensitive paths.
 */
export async function resolvePathFacts(path: string, roots: string[], sensitive: string[] = []): Promise<PathFacts> {
  const lexicalRoots = roots.map((r) => normalizePath(resolve(r)));
  // The confined walk's cached roots (one stat while a root names the same directory), not a realpath per call.
  const realRoots = await Promise.all(
    lexicalRoots.map((r) =>
      openRoot(r).then(
        (root) => (root.release(), root.real),
        () => r,
      ),
    ),
  );
  const absolute = normalizePath(path.startsWith('/') ? path : `${lexicalRoots[0] ?? '/'}/${path}`);
  return { roots: lexicalRoots, realRoots, resolved: await realpathOfDeepest(absolute), sensitive };
}

async function realpathOfDeepest(absolute: string): Promise<string> {
  const rest: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = await realpath(current);
      return normalizePath([real, ...rest.reverse()].join('/'));
    } catch {
      if (current === '/') return absolute;
      rest.push(current.slice(current.lastIndexOf('/') + 1));
      current = dirname(current);
    }
  }
}
