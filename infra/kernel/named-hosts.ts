/**
 * @module
 * What a runtime does differently as one of several named hosts: the root
 * agent is created by the first host and served only by it (a second root
 * is refused), and each command is routed to the host its agent lives on
 * (machines/hosts/liveness.ts decides; the registry says who is live).
 */
import { realpathSync } from 'node:fs';
import type { Logger } from 'pino';
import type { AgentId } from '../../schemas/index.ts';
import { routeCommand, type Route } from '../../machines/hosts/liveness.ts';
import { AppendConflictError } from '../transport/event-log.ts';
import type { LoadedConfig } from './config.ts';
import type { Host } from './host.ts';
import type { HostRegistry } from './host-registry.ts';

/** Creates the root agent when the log has none (named: served by this host), else checks it. */
export async function ensureRootAgent(host: Host, config: LoadedConfig, logger: Logger): Promise<void> {
  const root = config.rootAgentId as AgentId;
  if (host.agentExists(root)) return checkRoot(host, config, logger);
  try {
    await host.emit(
      {
        type: 'agent.spawned',
        data: {
          agentId: root,
          parentId: null,
          label: 'root',
          workspace: realpathSync(config.workspace),
          depth: 0,
          task: null,
          hasPolicy: false,
          worker: null,
          // The first named host to create the root serves it.
          ...(config.host ? { host: config.host } : {}),
        },
      },
      // Per host: two hosts creating the root at once must meet the expected-sequence check, not the dedupe
      // (which would acknowledge the loser's fact as the winner's).
      { agentId: root, id: config.host ? `root:${root}:${config.host}` : `root:${root}` },
    );
  } catch (err) {
    // Another host created the root at the same moment (one writer per aggregate): it serves it.
    if (!(err instanceof AppendConflictError) || !config.host) throw err;
    const deadline = Date.now() + 5_000;
    while (!host.agentExists(root) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (!host.agentExists(root)) throw err;
    return checkRoot(host, config, logger);
  }
  logger.info({ agentId: root, workspace: config.workspace }, 'root agent created');
}

/**
 * Why this host may not join the log's hosts (undefined when it may): a host without a name on a log whose root
 * names its host, a named host on a log whose root names none, a second root. Pure: read from the folded state.
 */
function refusal(host: Host, config: LoadedConfig): string | undefined {
  const root = config.rootAgentId as AgentId;
  if (!host.agentExists(root)) return undefined;
  const owner = (host.state(host.agentSubject(root)!)?.context as { host?: string } | undefined)?.host;
  if (!config.host && owner) {
    return (
      `root agent '${root}' is served by the named host '${owner}'; a host without a name would answer ` +
      'for every agent: join with --host <name>'
    );
  }
  if (config.host && owner === undefined) {
    return (
      `root agent '${root}' was created by a host without a name; named hosts (--host) need a root that names ` +
      'its host: start without --host, or give this runtime its own stream (a fresh NATS account or cluster)'
    );
  }
  if (config.host && owner !== config.host && config.explicit.rootAgentId) {
    return (
      `root agent '${root}' is served by host '${owner}'; exactly one host serves the root, so host ` +
      `'${config.host}' cannot: start it without --root to join as a host for placed agents`
    );
  }
  return undefined;
}

/**
 * Throws when this host may not join (`refusal`). Called once the log is read and before any domain restores:
 * a refused host must append nothing (an unnamed one took every agent for its own and marked other hosts' live
 * terminals lost before it was refused).
 */
export function assertMayJoin(host: Host, config: LoadedConfig): void {
  const why = refusal(host, config);
  if (why) throw new Error(why);
}

/** The root agent exists: keep it, and with named hosts say which host serves it (refusing a second root). */
function checkRoot(host: Host, config: LoadedConfig, logger: Logger): void {
  const root = config.rootAgentId as AgentId;
  const context = host.state(host.agentSubject(root)!)?.context as { workspace?: string; host?: string } | undefined;
  assertMayJoin(host, config);
  if (config.host && context?.host !== config.host) {
    logger.info({ agentId: root, host: context?.host }, 'joined; the root agent is served by another host');
    return;
  }
  if (context?.workspace !== realpathSync(config.workspace)) {
    logger.warn(
      { agentId: root, workspace: context?.workspace, requested: config.workspace },
      'root agent exists with another workspace; keeping it',
    );
  }
}

/** The named host an agent lives on (undefined: unknown to this host, or no named hosts). */
export function ownerOf(host: Host, agentId: string): string | undefined {
  const subject = host.agentSubject(agentId);
  return subject ? (host.state(subject)?.context as { host?: string } | undefined)?.host : undefined;
}

/** Who answers a command for `agentId`: the agent's host only (machines/hosts/liveness.ts). */
export function routeOf(host: Host, registry: HostRegistry, rootAgentId: string, agentId: string): Route {
  const owner = ownerOf(host, agentId);
  return routeCommand({
    agentId,
    owner,
    self: registry.name,
    servesRoot: ownerOf(host, rootAgentId) === registry.name,
    ownerStatus: owner ? registry.status(owner) : { status: 'unknown' },
  });
}
