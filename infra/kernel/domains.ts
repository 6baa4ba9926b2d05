/**
 * @module
 * Every domain, built for one host and registered with it: the aggregate
 * machines (the live host and replay fold with the same list, so their
 * digests can be compared), and each domain given what it uses of the others
 * at construction: the agent directory, the action-log recorder, the
 * terminal's foreground for the gate, the permission service for a spawn's
 * policy, and what a cancelled agent releases (pending requests, edits,
 * terminals). Nothing is plugged in after construction.
 */
import type { Logger } from 'pino';
import { AgentsConfig, ErrorCode, RuntimeError, type AgentId, type RuntimeMode } from '../../schemas/index.ts';
import { Policy } from '../../schemas/policy.ts';
import { ReviewConfig } from '../../schemas/review.ts';
import { EditConfig } from '../../schemas/edit-config.ts';
import { permissionAggregateDef } from '../../machines/permission/permission-aggregate.ts';
import { policyAggregateDef } from '../../machines/permission/policy-aggregate.ts';
import { editAggregateDef, fileAggregateDef } from '../../machines/edit/edit-aggregate.ts';
import { terminalAggregateDef } from '../../machines/terminal/terminal.ts';
import { resourceAggregateDef } from '../../machines/terminal/arbiter.ts';
import { agentAggregateDef } from '../../machines/agent/agent.ts';
import { actionLogAggregateDef } from '../../machines/review/action-log.ts';
import type { AggregateDef } from '../../machines/kernel/projection.ts';
import { AgentDirectory } from '../../actors/agent/agent-directory.ts';
import { AgentService, type HostPlacement } from '../../actors/agent/agent.ts';
import { LiveAgents } from '../../actors/agent/live-agents.ts';
import { domainConfig, type LoadedConfig } from './config.ts';
import { registerDomains } from './domain.ts';
import type { Host } from './host.ts';
import { runtimeDomain } from './runtime-domain.ts';
import { formatIssues } from '../transport/codec.ts';
import type { Bus } from '../transport/bus.ts';
import { wirePermission } from '../permission/wiring.ts';
import { wireEdit } from '../edit/wiring.ts';
import { wireReview } from '../review/wiring.ts';
import { wireTerminal } from '../terminal/wiring.ts';
import { wireWorkers } from '../agent/worker.ts';
import { remoteWorkerStarter, serveRemoteWorkers } from '../agent/remote-worker.ts';
import { agentDomain } from '../agent/domain.ts';

/** Every aggregate machine; each domain declares its own, and the host checks they are all here. */
export const AGGREGATES: readonly AggregateDef[] = [
  agentAggregateDef,
  actionLogAggregateDef,
  permissionAggregateDef,
  policyAggregateDef,
  editAggregateDef,
  fileAggregateDef,
  terminalAggregateDef,
  resourceAggregateDef,
];

export type DomainDeps = {
  host: Host;
  bus: Bus;
  config: LoadedConfig;
  logger: Logger;
  /** What `runtime.status` reports. */
  runtime: { hostId: string; mode: RuntimeMode };
  /** How workers reach this runtime; `mintCreds` gives a worker its own bus credentials (private broker). */
  connect: {
    natsUrl?: string | undefined;
    dataDir: string;
    mintCreds?: (agentId: string) => Promise<string>;
    /** The env var naming the worker's creds file: SKEIN_NATS_CREDS (a broker) or SKEIN_SOCKET_TOKEN (embedded). */
    credsEnv?: 'SKEIN_NATS_CREDS' | 'SKEIN_SOCKET_TOKEN';
  };
  /** Named hosts: where `agent.spawn { host }` may place a child (the registry), and this host's name. */
  hosts?: HostPlacement | undefined;
  hostName?: string | undefined;
};

/** Builds every domain and registers it with the host (before `host.start()`). */
export async function registerAllDomains(deps: DomainDeps): Promise<{ agents: AgentService; live: LiveAgents }> {
  const { host, config, logger } = deps;
  const rootAgentId = config.rootAgentId as AgentId;
  const agentsConfig = domainConfig(config, 'agents', AgentsConfig);
  const reviewConfig = domainConfig(config, 'review', ReviewConfig);
  const editConfig = domainConfig(config, 'edit', EditConfig);
  const directory = new AgentDirectory(host);
  // Not a root: people and the CLI act as it, and answer the asks of the sub-agents still running under it.
  host.refuseFinished((agentId) => (directory.view(agentId)?.parentId ? directory.finishedStatus(agentId) : undefined));
  /** Named hosts: the agents of a subtree whose parent lives on another host (reached through their hosts). */
  const tops = (agentId: string) =>
    directory.descendants(agentId).filter((id) => {
      const view = directory.view(id);
      const parent = view?.parentId ? directory.view(view.parentId) : undefined;
      return view?.host !== undefined && parent?.host !== view.host;
    });
  const review = wireReview({
    host,
    directory,
    dataDir: config.dataDir,
    rootAgentId,
    logger,
    workspace: config.workspace,
    maxFileBytes: editConfig.maxFileBytes,
    // Named hosts: a subtree's agents whose parent is on another host keep their own logs; reviewed through
    // their hosts (this one too, for an agent here below one placed elsewhere).
    ...(deps.hostName
      ? {
          remote: { bus: deps.bus, tops },
        }
      : {}),
  });
  const edit = wireEdit({
    host,
    directory,
    review,
    logger,
    maxFileBytes: editConfig.maxFileBytes,
    maxOpenPerAgent: editConfig.maxOpenPerAgent,
    maxOpenPerHost: editConfig.maxOpenPerHost,
    // Wired below: the permission domain reads terminals and edits to judge calls.
    askDeferred: (ctx, call, signal) => permission.askDeferred(ctx, call, signal),
  });
  const terminal = wireTerminal({
    host,
    directory,
    review,
    config,
    logger,
    trackShell: reviewConfig.trackShell,
    maxShellContentBytes: reviewConfig.maxShellContentBytes,
    // Wired below: the gate's unfinished prompt line is forgotten when a command line is typed over it.
    onCommandLine: (terminalId) => permission.clearPromptLine(terminalId),
  });
  const workers = wireWorkers({
    host,
    directory,
    manager: terminal.manager,
    config: agentsConfig,
    connect: deps.connect,
    logger,
  });
  const permission = await wirePermission({
    host,
    bus: deps.bus,
    directory,
    config,
    logger,
    foreground: (terminalId) => terminal.foreground(terminalId),
    foregroundId: (terminalId) => terminal.foregroundId(terminalId),
    cwd: (terminalId) => terminal.cwd(terminalId),
    canonical: (terminalId) => terminal.canonical(terminalId),
    ...(deps.hostName
      ? { hosts: { name: deps.hostName, ownerOf: (agentId: string) => directory.view(agentId)?.host, tops } }
      : {}),
    // Edits are confined to the workspace (a hard rule): a path outside it is refused, not asked about.
    precheck: async (call, agentId, terminalId) => {
      if (terminalId !== undefined) terminal.manager.assertOwned(agentId, terminalId);
      if (call.tool === 'read_file' || call.tool === 'edit_file' || call.tool === 'write_file') {
        await edit.service.resolvePath(agentId, call.input).catch((err: unknown) => {
          // A write may create missing parents, but only after the gate allows it: nothing is created here.
          // The walk met no escape up to the missing directory, and nothing below a missing one can be a link.
          if (call.tool === 'write_file' && err instanceof RuntimeError && err.code === ErrorCode.NotFound) return;
          throw err;
        });
      }
    },
  });
  const agents = new AgentService({
    directory,
    locks: host.locks,
    config: agentsConfig,
    validatePolicy: (policy) => {
      const parsed = Policy.safeParse(policy);
      if (!parsed.success) {
        throw new RuntimeError(
          ErrorCode.InvalidMessage,
          `the spawn policy is not valid: ${formatIssues(parsed.error, 'data.policy')}`,
        );
      }
    },
    setSpawnPolicy: (call, child, policy) =>
      permission.setSpawnPolicy(call.agentId, child.agentId, Policy.parse(policy), call.emit),
    startWorker: workers.startWorker,
    ...(deps.hostName ? { startRemoteWorker: remoteWorkerStarter({ bus: deps.bus, host, directory, logger }) } : {}),
    // Bottom-up per agent: its pending requests are denied, its edits cancelled, its terminals closed.
    release: [
      async (agentId, reason) => void (await permission.cancelAgent(agentId, reason)),
      (agentId) => edit.cancelAgent(agentId),
      async (agentId) => void (await terminal.manager.closeAllForAgent(agentId)),
    ],
    releaseFinished: async (agent) => {
      await permission.service.cancelAgent(
        agent.agentId,
        `agent '${agent.agentId}' ${agent.status} before the request was answered`,
      );
      await edit.cancelAgent(agent.agentId);
      await terminal.manager.closeAllForAgent(agent.agentId, agent.workerTerminalId ?? undefined);
    },
    hosts: deps.hosts,
  });

  const live = new LiveAgents(workers.effects);
  let stopServingWorkers: (() => void) | undefined;
  // Stopped in reverse: permission (suspends deadlines) before terminal (closes PTYs), as before.
  registerDomains(host, [
    runtimeDomain(host, { ...deps.runtime, rootAgentId }),
    agentDomain(agents, {
      live,
      more: workers.reactions,
      reconcile: async () => {
        await workers.reconcile();
        // Named hosts: from now on (this host's old workers failed), start the workers placed here.
        if (deps.hostName) {
          stopServingWorkers = serveRemoteWorkers({
            bus: deps.bus,
            host,
            directory,
            name: deps.hostName,
            startWorker: workers.startWorker,
            release: async (agentId) => void (await terminal.manager.closeAllForAgent(agentId)),
            logger: logger.child({ actor: 'remote-workers' }),
          });
        }
      },
      stop: () => stopServingWorkers?.(),
      ...(deps.hosts ? { owns: (agentId: string) => host.owns(agentId), logger } : {}),
    }),
    review.domain,
    edit.domain,
    terminal.domain,
    permission.domain,
  ]);
  return { agents, live };
}
