/**
 * @module
 * Workers: a process skein launches for a sub-agent (an LLM CLI, a script),
 * run in a terminal the agent owns so it can be watched (`skein tail`,
 * terminal.read). It gets SKEIN_AGENT_ID, SKEIN_TASK and how to reach the
 * runtime (SKEIN_NATS_URL, or SKEIN_DATA for an embedded runtime). If it
 * exits before the agent completes, the agent fails with its exit code;
 * after the agent completes it may linger for `workerGraceMs`, then its
 * terminal is closed. Here are the launch and the effects the live agent
 * actors (actors/agent/live-agents.ts) are given: the watcher of a worker's
 * command, its exit recorded, its terminal closed; the agent's machine
 * decides when each runs.
 */
import {
  parseEventSubject,
  shellQuote,
  type AgentId,
  type AgentsConfig,
  type StoredFact,
  type WorkerSpec,
} from '../../schemas/index.ts';
import { isFinished } from '../../machines/agent/agent.ts';
import type { Logger } from 'pino';
import type { AgentDirectory, AgentView } from '../../actors/agent/agent-directory.ts';
import type { LiveAgentEffects } from '../../actors/agent/live-agents.ts';
import type { TerminalManager } from '../../actors/terminal/terminal-manager.ts';
import type { Reaction } from '../kernel/domain.ts';
import type { Host } from '../kernel/host.ts';
import { removeWorkerCreds, writeWorkerCreds } from '../transport/auth/worker-creds.ts';

export function wireWorkers(deps: {
  host: Host;
  directory: AgentDirectory;
  manager: TerminalManager;
  config: AgentsConfig;
  connect: {
    natsUrl?: string | undefined;
    dataDir: string;
    mintCreds?: (agentId: string) => Promise<string>;
    /** The env var naming the worker's creds file: SKEIN_NATS_CREDS (a broker) or SKEIN_SOCKET_TOKEN (embedded). */
    credsEnv?: 'SKEIN_NATS_CREDS' | 'SKEIN_SOCKET_TOKEN';
  };
  logger: Logger;
}): {
  startWorker: (agent: AgentView, worker: WorkerSpec) => Promise<void>;
  effects: LiveAgentEffects;
  reactions: readonly Reaction[];
  reconcile: () => Promise<number>;
} {
  /**
   * Worker terminal → the worker's command in it (only workers' commands are followed). Keyed by terminal:
   * command ids count per terminal (`c-1` in every worker's terminal), so an id alone names no worker.
   */
  const commands = new Map<string, { commandId: string; agentId: string }>();
  /** agentId → its worker's creds file, removed when the worker exits or the agent finishes. */
  const credsFiles = new Map<string, string>();
  const dropCreds = (agentId: string) => {
    removeWorkerCreds(credsFiles.get(agentId));
    credsFiles.delete(agentId);
  };
  /** Worker terminal → its exit code, once its command ended (it may end before its watcher starts). */
  const exits = new Map<string, number>();
  /** Worker terminal → its watcher (the running agent's invoked actor). */
  const watchers = new Map<string, (exitCode: number) => void>();
  const owner = (agent: AgentView) => (agent.parentId ?? agent.agentId) as AgentId;

  const exited = (terminalId: string, exitCode: number) => {
    exits.set(terminalId, exitCode);
    watchers.get(terminalId)?.(exitCode);
  };

  const effects: LiveAgentEffects = {
    graceMs: deps.config.workerGraceMs,
    logger: deps.logger,
    watchWorker({ terminalId }, onExit) {
      const known = exits.get(terminalId);
      if (known !== undefined) {
        onExit(known);
        return () => undefined;
      }
      watchers.set(terminalId, onExit);
      return () => {
        watchers.delete(terminalId);
      };
    },
    async workerExited({ agentId, terminalId }, exitCode) {
      const view = deps.directory.view(agentId);
      if (!view || isFinished(view.status)) return;
      await deps.host.emit(
        {
          type: 'agent.failed',
          data: { agentId, error: `the worker exited with code ${exitCode} without completing the agent`, exitCode },
        },
        { agentId: owner(view) },
      );
      await closeIfOpen(agentId, terminalId);
    },
    closeWorker: ({ agentId, terminalId }) => closeIfOpen(agentId, terminalId),
  };

  async function closeIfOpen(agentId: string, terminalId: string): Promise<void> {
    exits.delete(terminalId);
    commands.delete(terminalId);
    // A restored agent's worker terminal died with the previous host: nothing to close.
    const session = deps.manager.get(terminalId);
    if (!session || session.status === 'closed' || session.status === 'closing') return;
    await deps.manager.close(agentId, { terminalId });
  }

  return {
    effects,
    async startWorker(agent, worker) {
      const env: Record<string, string> = {
        ...worker.env,
        SKEIN_AGENT_ID: agent.agentId,
        SKEIN_TASK: agent.task ?? '',
        ...(deps.connect.natsUrl ? { SKEIN_NATS_URL: deps.connect.natsUrl } : { SKEIN_DATA: deps.connect.dataDir }),
      };
      if (deps.connect.mintCreds) {
        const path = writeWorkerCreds(deps.connect.dataDir, agent.agentId, await deps.connect.mintCreds(agent.agentId));
        credsFiles.set(agent.agentId, path);
        env[deps.connect.credsEnv ?? 'SKEIN_NATS_CREDS'] = path;
      }
      try {
        const opened = await deps.manager.open(agent.agentId, { env }, { workspace: agent.workspace });
        const command = [worker.command, ...worker.args].map(shellQuote).join(' ');
        const reply = await deps.manager.exec(agent.agentId, { terminalId: opened.terminalId, command, yieldMs: 0 });
        commands.set(opened.terminalId, { commandId: reply.commandId, agentId: agent.agentId });
        if (reply.status === 'exited') {
          commands.delete(opened.terminalId);
          dropCreds(agent.agentId);
          exited(opened.terminalId, reply.exitCode ?? 1);
        }
        // Once folded, the agent runs and its actor's watcher reports an exit seen before or after.
        await deps.host.emit(
          {
            type: 'agent.worker.started',
            data: { agentId: agent.agentId, terminalId: opened.terminalId, command: worker.command },
          },
          { agentId: owner(agent) },
        );
      } catch (err) {
        await deps.host.emit(
          {
            type: 'agent.failed',
            data: {
              agentId: agent.agentId,
              error: `the worker could not start: ${(err as Error).message}`,
              exitCode: null,
            },
          },
          { agentId: owner(agent) },
        );
      }
    },
    // At start: an unfinished agent with a worker lost its process with the previous host (no PTY survives it).
    async reconcile() {
      let failed = 0;
      for (const subject of [...deps.host.subjects()]) {
        const parts = parseEventSubject(subject);
        if (parts?.aggregate !== 'agent') continue;
        const view = deps.directory.view(parts.aggregateId);
        if (!view?.worker || isFinished(view.status) || !deps.host.owns(view.agentId)) continue;
        const error =
          'host_restarted: the worker process ended with the previous host (it crashed or was killed) ' +
          `while the agent was ${view.status}; spawn the agent again to redo its task`;
        await deps.host.emit(
          { type: 'agent.failed', data: { agentId: view.agentId as AgentId, error, exitCode: null } },
          { agentId: owner(view) },
        );
        deps.logger.info({ agentId: view.agentId, status: view.status }, 'worker agent failed: the host restarted');
        failed++;
      }
      return failed;
    },
    // A worker's command ending is handed to its watcher; an agent finishing revokes its worker's creds file.
    reactions: [
      {
        on: ['terminal.command.finished', 'agent.completed', 'agent.failed', 'agent.cancelled'],
        when: 'live',
        // Named hosts: a worker placed here may be failed or cancelled by its parent's host (only this host's
        // workers are in the maps, so another host's facts about other agents change nothing).
        foreign: true,
        run: (fact: StoredFact) => {
          if (fact.type === 'terminal.command.finished') {
            const d = fact.data as { terminalId: string; commandId: string; exitCode: number };
            const worker = commands.get(d.terminalId);
            if (worker?.commandId !== d.commandId) return;
            commands.delete(d.terminalId);
            dropCreds(worker.agentId);
            exited(d.terminalId, d.exitCode);
          } else {
            // The agent finished: its worker's identity goes now; its terminal after the grace (the agent's actor).
            dropCreds((fact.data as { agentId: string }).agentId);
          }
        },
      },
    ],
  };
}
