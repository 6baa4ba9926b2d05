/**
 * @module
 * Named hosts: a worker runs on the host its agent was placed on. The
 * spawning host appends `agent.spawned` (and the child's policy layer), then
 * asks the placed host on `skein.host.<name>.agent.worker.start` to start it;
 * that host, once it has followed the log up to the spawn, launches the
 * worker in a terminal of its own (with an identity it mints), watches it
 * and records its start, exit or failure, exactly as for a worker it spawned.
 * The spawn replies with the status the placed host saw.
 */
import * as z from 'zod';
import type { Logger } from 'pino';
import { ErrorCode, RuntimeError, toErrorInfo, type AgentId, type WorkerSpec } from '../../schemas/index.ts';
import { WorkerSpec as WorkerSpecSchema } from '../../schemas/agent.ts';
import { isFinished } from '../../machines/agent/agent.ts';
import type { AgentDirectory, AgentView } from '../../actors/agent/agent-directory.ts';
import { assertRunnable } from '../../actors/agent/placement.ts';
import { NoRespondersError, type Bus } from '../transport/bus.ts';
import type { Host } from '../kernel/host.ts';

/** Host-to-host: never an agent's subject (agents may publish only `skein.cmd.<self>.>`). */
export function workerStartSubject(host: string): string {
  return `skein.host.${host}.agent.worker.start`;
}

const StartRequest = z.object({ agentId: z.string().min(1), env: z.record(z.string(), z.string()) }).strict();

/** How long the placed host may take to read the spawn and start the worker, in ms. */
const START_TIMEOUT_MS = 15_000;
/** How long the placed host waits to read the spawn from the shared log before refusing, in ms. */
const SEE_SPAWN_MS = 5_000;
/** Attempts while the placed host has no responder yet (starting, reconnecting). */
const NO_RESPONDER_ATTEMPTS = 5;

/** On the placed host: starts the workers of agents other hosts placed here. Returns the unsubscribe. */
export function serveRemoteWorkers(deps: {
  bus: Bus;
  host: Host;
  directory: AgentDirectory;
  name: string;
  startWorker: (agent: AgentView, worker: WorkerSpec) => Promise<void>;
  /** Releases what an agent holds here (its terminals): used when it finished while its worker started. */
  release: (agentId: AgentId) => Promise<void>;
  logger: Logger;
}): () => void {
  const { directory, host, logger } = deps;
  /** agentId → its start in flight: a retried request waits for the same start, never a second worker. */
  const starting = new Map<string, Promise<string>>();
  const start = async (agentId: string, env: Record<string, string>): Promise<string> => {
    const deadline = Date.now() + SEE_SPAWN_MS;
    while (!directory.view(agentId) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const view = directory.view(agentId);
    if (!view) {
      throw new RuntimeError(
        ErrorCode.Unavailable,
        `host '${deps.name}' has not read the spawn of agent '${agentId}' from the log within ${SEE_SPAWN_MS} ms; ` +
          'retry once it has caught up',
        { retryable: true },
      );
    }
    if (!host.owns(agentId) || !view.worker) {
      throw new RuntimeError(
        ErrorCode.InvalidState,
        `agent '${agentId}' ${view.worker ? `lives on host '${view.host}'` : 'has no worker'}; host '${deps.name}' ` +
          'starts only the workers of agents placed on it',
      );
    }
    // Already started, failed or ended: the answer is its status (a retried request starts nothing).
    if (view.status !== 'spawning') return view.status;
    const owner = (view.parentId ?? agentId) as AgentId;
    try {
      assertRunnable(view.worker.command);
    } catch (err) {
      await host.emit(
        {
          type: 'agent.failed',
          data: {
            agentId: agentId as AgentId,
            error: `the worker could not start on host '${deps.name}': ${(err as Error).message}`,
            exitCode: null,
          },
        },
        { agentId: owner },
      );
      return directory.view(agentId)!.status;
    }
    await deps.startWorker(view, { ...view.worker, env });
    // Cancelled by an ancestor on a third host while its worker started: nothing of it may outlive that.
    if (isFinished(directory.view(agentId)!.status)) await deps.release(agentId as AgentId);
    return directory.view(agentId)!.status;
  };
  const sub = deps.bus.subscribe(workerStartSubject(deps.name), (msg) => {
    void (async () => {
      let reply: unknown;
      try {
        const req = StartRequest.parse(JSON.parse(new TextDecoder().decode(msg.data)));
        let running = starting.get(req.agentId);
        if (!running) {
          running = start(req.agentId, req.env).finally(() => starting.delete(req.agentId));
          starting.set(req.agentId, running);
        }
        reply = { ok: true, status: await running };
      } catch (err) {
        logger.warn({ err: toErrorInfo(err) }, 'a request to start a placed worker was refused');
        reply = { ok: false, error: toErrorInfo(err) };
      }
      if (msg.reply) msg.respond(JSON.stringify(reply));
    })();
  });
  return () => sub.unsubscribe();
}

/**
 * On the spawning host: asks the placed host to start `agent`'s worker and returns the agent's status there.
 * When that host does not answer, the agent is failed here (it never ran), naming the host.
 */
export function remoteWorkerStarter(deps: {
  bus: Bus;
  host: Host;
  directory: AgentDirectory;
  logger: Logger;
}): (hostName: string, agent: AgentView, worker: WorkerSpec) => Promise<string> {
  /**
   * The placed host appended the start on the agent's subject: fold it here before the spawn replies, so this
   * host's next append there (a cancel right away) expects the right last sequence instead of conflicting.
   */
  const folded = async (agentId: string) => {
    const deadline = Date.now() + SEE_SPAWN_MS;
    while (deps.directory.view(agentId)?.status === 'spawning' && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  return async (hostName, agent, worker) => {
    const body = JSON.stringify({ agentId: agent.agentId, env: WorkerSpecSchema.parse(worker).env });
    let why = '';
    for (let attempt = 1; attempt <= NO_RESPONDER_ATTEMPTS; attempt++) {
      try {
        const bytes = await deps.bus.request(workerStartSubject(hostName), body, { timeoutMs: START_TIMEOUT_MS });
        const reply = JSON.parse(new TextDecoder().decode(bytes)) as
          | { ok: true; status: string }
          | { ok: false; error: { code: string; message: string; retryable?: boolean } };
        if (reply.ok) {
          await folded(agent.agentId);
          return reply.status;
        }
        why = reply.error.message;
        if (!reply.error.retryable) break;
      } catch (err) {
        why = (err as Error).message;
        // No responder yet (the host is reconnecting): try again shortly. A timeout is final.
        if (!(err instanceof NoRespondersError)) break;
      }
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
    deps.logger.warn({ agentId: agent.agentId, host: hostName, why }, 'a placed worker could not be started');
    await deps.host.emit(
      {
        type: 'agent.failed',
        data: {
          agentId: agent.agentId,
          error: `the worker could not be started on host '${hostName}' (${why}); spawn the agent again`,
          exitCode: null,
        },
      },
      { agentId: (agent.parentId ?? agent.agentId) as AgentId },
    );
    return 'failed';
  };
}
