/**
 * @module
 * Workers: a process skein launches for a sub-agent (an LLM CLI, a script),
 * run in a terminal the agent owns so it can be watched (`skein tail`,
 * terminal.read). It gets SKEIN_AGENT_ID, SKEIN_TASK and how to reach the
 * runtime (SKEIN_NATS_URL, or SKEIN_DATA for an embedded runtime). If it
 * exits before the agent completes, the agent fails with its exit code;
 * after the agent completes it may linger for `workerGraceMs`, then its
 * terminal is closed.
 */
import { shellQuote, type AgentId, type AgentsConfig, type StoredFact, type WorkerSpec } from '../../schemas/index.ts';
import { isFinished } from '../../machines/agent/agent.ts';
import type { Logger } from 'pino';
import type { AgentDirectory, AgentView } from '../../actors/agent/agent-directory.ts';
import type { TerminalManager } from '../../actors/terminal/terminal-manager.ts';
import type { Reaction } from '../kernel/domain.ts';
import type { Host } from '../kernel/host.ts';
import { removeWorkerCreds, writeWorkerCreds } from '../transport/auth/worker-creds.ts';

export function wireWorkers(deps: {
  host: Host;
  directory: AgentDirectory;
  manager: TerminalManager;
  config: AgentsConfig;
  connect: { natsUrl?: string | undefined; dataDir: string; mintCreds?: (agentId: string) => Promise<string> };
  logger: Logger;
}): { startWorker: (agent: AgentView, worker: WorkerSpec) => Promise<void>; reactions: readonly Reaction[] } {
  /** commandId → the agent whose worker it is. */
  const running = new Map<string, { agentId: AgentId; terminalId: string }>();
  /** agentId → its worker's creds file, removed when the worker exits or the agent finishes. */
  const credsFiles = new Map<string, string>();
  const owner = (agent: AgentView) => (agent.parentId ?? agent.agentId) as AgentId;

  return {
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
        env.SKEIN_NATS_CREDS = path;
      }
      try {
        const opened = await deps.manager.open(agent.agentId, { env }, { workspace: agent.workspace });
        const command = [worker.command, ...worker.args].map(shellQuote).join(' ');
        const reply = await deps.manager.exec(agent.agentId, { terminalId: opened.terminalId, command, yieldMs: 0 });
        running.set(reply.commandId, { agentId: agent.agentId, terminalId: opened.terminalId });
        await deps.host.emit(
          {
            type: 'agent.worker.started',
            data: { agentId: agent.agentId, terminalId: opened.terminalId, command: worker.command },
          },
          { agentId: owner(agent) },
        );
        if (reply.status === 'exited') await onExit(reply.commandId, reply.exitCode ?? 1);
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
    // A worker's command ending fails its agent; an agent finishing lets its worker go.
    reactions: [
      {
        on: ['terminal.command.finished', 'agent.completed', 'agent.failed', 'agent.cancelled'],
        when: 'live',
        run: (fact: StoredFact) => {
          if (fact.type === 'terminal.command.finished') {
            const d = fact.data as { commandId: string; exitCode: number };
            void onExit(d.commandId, d.exitCode);
          } else if (
            fact.type === 'agent.completed' ||
            fact.type === 'agent.failed' ||
            fact.type === 'agent.cancelled'
          ) {
            const agentId = (fact.data as { agentId: string }).agentId;
            removeWorkerCreds(credsFiles.get(agentId));
            credsFiles.delete(agentId);
            for (const [commandId, w] of running) {
              if (w.agentId !== agentId) continue;
              running.delete(commandId);
              // The worker reported; give it a moment to exit by itself, then close its terminal.
              setTimeout(() => {
                deps.manager.close(agentId, { terminalId: w.terminalId }).catch(() => undefined);
              }, deps.config.workerGraceMs).unref();
            }
          }
        },
      },
    ],
  };

  async function onExit(commandId: string, exitCode: number): Promise<void> {
    const w = running.get(commandId);
    if (!w) return;
    running.delete(commandId);
    removeWorkerCreds(credsFiles.get(w.agentId));
    credsFiles.delete(w.agentId);
    const view = deps.directory.view(w.agentId);
    if (!view || isFinished(view.status)) return;
    try {
      await deps.host.emit(
        {
          type: 'agent.failed',
          data: {
            agentId: w.agentId,
            error: `the worker exited with code ${exitCode} without completing the agent`,
            exitCode,
          },
        },
        { agentId: owner(view) },
      );
    } catch (err) {
      deps.logger.error({ err, agentId: w.agentId }, 'could not record the worker exit');
    }
    await deps.manager.close(w.agentId, { terminalId: w.terminalId }).catch(() => undefined);
  }
}
