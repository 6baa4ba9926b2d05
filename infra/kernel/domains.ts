/**
 * @module
 * Every domain, assembled for one host: the aggregate machines (the live host
 * and replay fold with the same list, so their digests can be compared), the
 * command handlers, the permission gate, and the hooks between domains
 * (a cancelled agent's terminals closed, an edit recorded in the action log…).
 */
import { AgentsConfig, ErrorCode, RuntimeError, type AgentId } from '../../schemas/index.ts';
import { Policy } from '../../schemas/policy.ts';
import { permissionAggregateDef } from '../../machines/permission/permission-aggregate.ts';
import { policyAggregateDef } from '../../machines/permission/policy-aggregate.ts';
import { editAggregateDef, fileAggregateDef } from '../../machines/edit/edit-aggregate.ts';
import { terminalAggregateDef } from '../../machines/terminal/terminal.ts';
import { resourceAggregateDef } from '../../machines/terminal/arbiter.ts';
import { agentAggregateDef } from '../../machines/agent/agent.ts';
import { actionLogAggregateDef } from '../../machines/review/action-log.ts';
import type { AggregateDef } from '../../machines/kernel/projection.ts';
import { AgentService } from '../../actors/agent/agent.ts';
import { domainConfig } from './config.ts';
import type { LoadedConfig } from './config.ts';
import type { CommandHandler, Gate, Host } from './host.ts';
import type { Logger } from './log.ts';
import { formatIssues } from '../transport/codec.ts';
import type { Bus } from '../transport/bus.ts';
import { wirePermission } from '../permission/wiring.ts';
import { wireEdit } from '../edit/wiring.ts';
import { wireReview } from '../review/wiring.ts';
import { wireTerminal } from '../terminal/wiring.ts';
import { wireWorkers } from '../agent/worker.ts';
import { ReviewConfig } from '../../schemas/review.ts';

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
  host: () => Host;
  bus: Bus;
  config: LoadedConfig;
  logger: Logger;
  mode: 'embedded' | 'private' | 'networked';
  /** How workers reach this runtime. */
  connect: { natsUrl?: string | undefined; dataDir: string };
};

export type Domains = {
  handlers: Record<string, CommandHandler>;
  gate: Gate | undefined;
  agents: AgentService;
  /** Before the host replays the log: listeners that rebuild domain state. */
  beforeRestore(): void;
  /** After the replay, before commands are served. */
  afterRestore(): Promise<void>;
  stop(): Promise<void>;
};

export async function assembleDomains(deps: DomainDeps): Promise<Domains> {
  const agentsConfig = domainConfig(deps.config, 'agents', AgentsConfig);
  const agents = new AgentService(deps.host, agentsConfig);
  const review = wireReview({ host: deps.host, agents, dataDir: deps.config.dataDir, logger: deps.logger });
  const edit = wireEdit({ host: deps.host, agents, review, logger: deps.logger });
  const reviewConfig = domainConfig(deps.config, 'review', ReviewConfig);
  const terminal = wireTerminal({
    host: deps.host,
    agents,
    review,
    config: deps.config,
    logger: deps.logger,
    trackShell: reviewConfig.trackShell,
  });
  const workers = wireWorkers({
    host: deps.host,
    agents,
    manager: terminal.manager,
    config: agentsConfig,
    connect: deps.connect,
    logger: deps.logger,
  });
  agents.hooks.startWorker = workers.startWorker;
  const permission = await wirePermission({
    host: deps.host,
    bus: deps.bus,
    agents,
    config: deps.config,
    logger: deps.logger,
    foreground: (terminalId) => terminal.foreground(terminalId),
    canonical: (terminalId) => terminal.canonical(terminalId),
    // Edits are confined to the workspace (a hard rule): a path outside it is refused, not asked about.
    precheck: async (call, agentId) => {
      if (call.tool === 'read_file' || call.tool === 'edit_file' || call.tool === 'write_file')
        await edit.service.resolvePath(agentId, call.input);
    },
  });
  const stops: Array<() => Promise<void>> = [() => terminal.stop(), () => permission.stop()];

  agents.hooks.validatePolicy = (policy) => {
    const parsed = Policy.safeParse(policy);
    if (!parsed.success) {
      throw new RuntimeError(
        ErrorCode.InvalidMessage,
        `the spawn policy is not valid: ${formatIssues(parsed.error, 'data.policy')}`,
      );
    }
  };
  agents.hooks.afterSpawn = async (ctx, child, spawn) => {
    if (spawn.policy === undefined) return;
    await permission.service.setPolicy({
      layer: 'agent',
      agentId: child.agentId,
      policy: Policy.parse(spawn.policy),
      setBy: ctx.command.agentId,
      emit: ctx.emit,
    });
  };
  agents.hooks.onCancel.push(async (agentId, reason) => {
    await permission.service.cancelAgent(agentId, `agent '${agentId}' was cancelled (${reason})`);
    await edit.cancelAgent(agentId);
    await terminal.manager.closeAllForAgent(agentId);
  });

  const handlers: Record<string, CommandHandler> = {
    ...agents.handlers(),
    ...review.handlers,
    ...permission.handlers,
    ...edit.handlers,
    ...terminal.handlers,
  };

  return {
    handlers,
    gate: permission.gate,
    agents,
    beforeRestore() {
      review.restoring(true);
      permission.beforeRestore();
    },
    async afterRestore() {
      review.restoring(false);
      agents.attach();
      terminal.attach();
      workers.attach();
      await permission.afterRestore();
    },
    async stop() {
      for (const stop of stops.reverse()) await stop();
    },
  };
}

export type { AgentId };
