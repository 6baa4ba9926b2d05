/**
 * @module
 * Where a spawned agent may live and run: its workspace confined to its
 * parent's (on the same host) or to the named host's (placed elsewhere), and
 * its worker command checked before anything is appended. Pure checks over
 * the file system and the host registry's answer; no facts.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { isInside } from '../../machines/common/confine.ts';
import { ErrorCode, RuntimeError } from '../../schemas/index.ts';

/** What spawn needs to know of the named hosts (the registry, infra/kernel/host-registry.ts). */
export type HostPlacement = {
  /** The workspace of a live host, or why it cannot take an agent now (lost, stopped, never joined). */
  target(name: string): Promise<{ workspace: string } | { unavailable: string }>;
  /** The workspace a host joined with, live or not; undefined for a host never seen. */
  workspaceOf(name: string): string | undefined;
};

/** An agent as the placement checks read it. */
export type PlacedAgent = { agentId: string; workspace: string; host?: string | undefined };

/**
 * Refuses to place a child on another host when `lineage` (the parent, then its ancestors up to the root) holds
 * an agent confined to part of its host's workspace: there the child would get the other host's whole
 * workspace, and its own child, placed back, this host's whole workspace (the confinement would not travel).
 */
export function assertUnconfined(lineage: readonly PlacedAgent[], hosts: HostPlacement): void {
  for (const agent of lineage) {
    const whole = agent.host === undefined ? undefined : hosts.workspaceOf(agent.host);
    if (whole !== undefined && resolve(agent.workspace) === resolve(whole)) continue;
    const parent = lineage[0]!;
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `agent '${parent.agentId}' may not place a sub-agent on another host: ` +
        (agent === parent ? 'it is' : `its ancestor '${agent.agentId}' is`) +
        ` confined to ${agent.workspace}, part of host '${agent.host ?? '?'}''s workspace, and a sub-agent placed ` +
        "elsewhere gets that host's whole workspace; spawn it on this host (leave host out), or have an agent " +
        "with its host's whole workspace place it",
    );
  }
}

/** Ids no agent may take: `user` is how the human answers permission requests. */
export const RESERVED_AGENT_IDS: ReadonlySet<string> = new Set(['user']);

/**
 * The workspace of a child placed on another host: that host's workspace, or a directory inside it
 * (checked by path only: the directory is on the other machine; that host confines every access to it).
 */
export async function placeRemote(
  hosts: HostPlacement | undefined,
  host: string,
  workspace: string | undefined,
): Promise<string> {
  if (!hosts) {
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `agent.spawn names host '${host}', but this runtime has no named hosts; start hosts with ` +
        'skein up --nats <url> --host <name>, or leave host out',
    );
  }
  const target = await hosts.target(host);
  if ('unavailable' in target) {
    throw new RuntimeError(ErrorCode.Unavailable, target.unavailable, { retryable: true });
  }
  if (workspace === undefined) return target.workspace;
  if (!isAbsolute(workspace) || !isInside(target.workspace, resolve(workspace))) {
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `workspace '${workspace}' is not inside host '${host}''s workspace ${target.workspace}; give an ` +
        "absolute path inside it, or leave workspace out to use that host's workspace",
    );
  }
  return resolve(workspace);
}

/** The sub-agent's workspace: the parent's, or an existing directory inside it (after resolving symlinks). */
export function confineWorkspace(parentWorkspace: string, requested: string | undefined): string {
  if (requested === undefined) return parentWorkspace;
  const candidate = isAbsolute(requested) ? requested : resolve(parentWorkspace, requested);
  let real: string;
  try {
    real = realpathSync(candidate);
  } catch {
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `workspace '${requested}' does not exist; create the directory first or leave workspace out to use the parent's`,
    );
  }
  if (!statSync(real).isDirectory())
    throw new RuntimeError(ErrorCode.InvalidMessage, `workspace '${requested}' is not a directory`);
  const parentReal = realpathSync(parentWorkspace);
  if (!isInside(parentReal, real)) {
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `workspace '${requested}' resolves to ${real}, outside the parent's workspace ` +
        `${parentReal}; a sub-agent's workspace must be the parent's or inside it`,
    );
  }
  return real;
}

/**
 * Throws a clear error when `command` cannot be found or run here. A worker placed on another host is
 * checked there, by the host that starts it.
 */
export function assertRunnable(command: string): void {
  const candidates = command.includes('/')
    ? [command]
    : (process.env['PATH'] ?? '')
        .split(':')
        .filter(Boolean)
        .map((dir) => `${dir}/${command}`);
  for (const path of candidates) {
    try {
      accessSync(path, constants.X_OK);
      if (statSync(path).isFile()) return;
    } catch {
      // try the next
    }
  }
  throw new RuntimeError(
    ErrorCode.InvalidMessage,
    `worker command '${command}' was not found on PATH (or is not executable); give an absolute path or install it`,
  );
}
