/**
 * @module
 * What an MCP server stands on: a link to the runtime serving the workspace
 * (found by walking up from cwd, or started in-process when none runs and
 * stopped with the link), and one agent per MCP session: a fresh child of
 * the root agent under the project policy, or an existing agent (`--agent`).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { clientOn, connect, findRuntime, type SkeinClient } from '../client/index.ts';
import type { RuntimeMode } from '../../schemas/mode.ts';
import { startRuntime } from '../kernel/runtime.ts';
import { ApprovalBridge } from './approvals.ts';
import { mcpCommandId } from './call-scope.ts';

export type RuntimeLink = {
  client: SkeinClient;
  workspace: string;
  rootAgentId: string;
  /** True when this process started the runtime (and stops it in `close`). */
  owned: boolean;
  close(): Promise<void>;
};

export type LinkOptions = {
  cwd?: string;
  dataDir?: string;
  natsUrl?: string;
  /** Mode of a runtime this process starts; default embedded (no broker to leave behind). */
  mode?: RuntimeMode;
  logger: Logger;
};

export async function linkRuntime(options: LinkOptions): Promise<RuntimeLink> {
  if (options.natsUrl) {
    const client = await connect({ natsUrl: options.natsUrl, name: 'skein-mcp', commandId: mcpCommandId });
    const root = client.info?.rootAgentId ?? 'main';
    const view = await client.agent(root).agent.get({});
    return { client, workspace: view.workspace, rootAgentId: root, owned: false, close: () => client.close() };
  }
  const found = findRuntime({ ...(options.cwd ? { cwd: options.cwd } : {}), dataDir: options.dataDir });
  if (found.info) {
    const client = await connect({ dataDir: found.config.dataDir, name: 'skein-mcp', commandId: mcpCommandId });
    options.logger.info({ dataDir: found.config.dataDir }, 'connected to the running runtime');
    return {
      client,
      workspace: found.info.workspace,
      rootAgentId: found.info.rootAgentId,
      owned: false,
      close: () => client.close(),
    };
  }
  const config = { ...found.config, mode: options.mode ?? 'embedded' };
  const runtime = await startRuntime(config, options.logger);
  options.logger.info({ dataDir: config.dataDir, mode: runtime.info.mode }, 'started a runtime for this session');
  // In process: the client rides the host's own bus, so no socket or broker round trip.
  const client = clientOn(runtime.bus, { info: runtime.info, commandId: mcpCommandId });
  return {
    client,
    workspace: runtime.info.workspace,
    rootAgentId: runtime.info.rootAgentId,
    owned: true,
    close: () => runtime.stop(),
  };
}

export type AgentSession = {
  client: SkeinClient;
  agentId: string;
  parentId: string | null;
  workspace: string;
  approvals: ApprovalBridge;
  /** The terminal tools use when the model names none: opened on first use. */
  defaultTerminal(): Promise<string>;
  close(): Promise<void>;
};

/** Acts as `agentId`, or spawns a child of the root for this session. */
export async function openAgentSession(
  link: RuntimeLink,
  options: { agentId?: string; label?: string; logger: Logger },
): Promise<AgentSession> {
  const { client } = link;
  let agentId: string;
  let spawned = false;
  if (options.agentId) {
    agentId = options.agentId;
  } else {
    agentId = await spawnSessionAgent(client, link.rootAgentId, options.label ?? 'mcp session', options.logger);
    spawned = true;
  }
  const view = await client.agent(agentId).agent.get({});
  const approvals = new ApprovalBridge({ client, agentId, parentId: view.parentId, logger: options.logger });
  let terminal: Promise<string> | undefined;
  const log = options.logger.child({ agentId });
  return {
    client,
    agentId,
    parentId: view.parentId,
    workspace: view.workspace,
    approvals,
    defaultTerminal() {
      terminal ??= client
        .agent(agentId)
        .terminal.open({})
        .then((t) => t.terminalId)
        .catch((err: unknown) => {
          terminal = undefined; // a refused open (policy) must not stick for the session
          throw err;
        });
      return terminal;
    },
    async close() {
      approvals.close();
      // A session's own agent ends with it: its terminals close, its changes stay in the action log for review.
      if (!spawned) return;
      const me = client.agent(agentId);
      const open = await me.terminal.list({}).catch(() => ({ terminals: [] }));
      for (const t of open.terminals) await me.terminal.close({ terminalId: t.terminalId }).catch(() => undefined);
      await me.agent
        .complete({ result: { mcp: 'session ended' } })
        .catch((err: unknown) => log.warn({ err }, 'could not complete the session agent'));
    },
  };
}

/**
 * The session's agent, spawned as a child of the root by the person who started `skein mcp` (with the data dir's
 * operator access): where the policy asks before a spawn (the default, `confirm`), this spawn's own ask, and
 * only it (by the command id its facts carry), is answered `allow_once` here, as the person would with `skein
 * approvals`. Until 8 December `skein mcp` under the default policy answered no `initialize` and failed after the
 * ask's deadline (its ask came before the client could be asked). A policy that denies spawns still denies; a
 * client without the right to answer the root's asks (an agent's credentials) waits for a person, as before.
 */
async function spawnSessionAgent(client: SkeinClient, root: string, label: string, logger: Logger): Promise<string> {
  const id = `c-${randomUUID()}`;
  const stop = client.agent(root).on('permission.requested', (fact) => {
    if (fact.causationId !== id || fact.data.agentId !== root || fact.data.tool !== 'spawn_agent') return;
    void client
      .agent(root)
      .permission.decide({ requestId: fact.data.requestId, decision: 'allow_once' })
      .then(() => logger.info({ requestId: fact.data.requestId }, "allowed this session's own spawn"))
      .catch((err: unknown) => {
        logger.warn({ err }, "could not answer this session's spawn: a person must (skein approvals)");
        process.stderr.write("skein mcp: the session's agent waits for a person to allow it: run skein approvals\n");
      });
  });
  try {
    const reply = await client.agent(root).agent.spawn({ label }, { id });
    return reply.agentId;
  } finally {
    stop();
  }
}
