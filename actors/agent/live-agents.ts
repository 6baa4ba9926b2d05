/**
 * @module
 * The live agent actors: one XState actor per agent, created from the same
 * machine the replay folds with (machines/agent/agent.ts) and given its
 * effects here with `.provide()`: the worker watcher (an invoked callback
 * actor), the failure recorded when a worker exits while its agent runs, and
 * the worker terminal closed once the grace after the agent finished is over.
 * The agent domain feeds it every agent fact, those read back at start too,
 * so a restored agent re-enters its state and re-arms its grace delay from
 * context (at once when the deadline passed while the host was down).
 */
import type { Logger } from 'pino';
import { createActor, fromCallback, type Actor, type SnapshotFrom } from 'xstate';
import {
  agentAggregate,
  workerGraceDelay,
  type AgentFact,
  type WorkerExited,
  type WorkerWatch,
} from '../../machines/agent/agent.ts';
import type { StoredFact } from '../../schemas/index.ts';

/** What a live agent does to the world. */
export type LiveAgentEffects = {
  /** How long a worker may linger after its agent finished (domains.agents.workerGraceMs). */
  graceMs: number;
  /** The clock the grace deadline is measured against (ms since the epoch). */
  now?: () => number;
  /** Watches the worker's command in `terminalId`; calls `exited` once when it ends. Returns the cleanup. */
  watchWorker(watch: WorkerWatch, exited: (exitCode: number) => void): () => void;
  /** The worker exited while its agent ran: record the agent's failure. */
  workerExited(watch: WorkerWatch, exitCode: number): Promise<void>;
  /** The grace is over: close the worker's terminal (nothing when it is already gone). */
  closeWorker(watch: WorkerWatch): Promise<void>;
  logger: Logger;
};

type LiveMachine = ReturnType<typeof liveMachine>;
export type LiveAgentSnapshot = SnapshotFrom<LiveMachine>;

function liveMachine(effects: LiveAgentEffects) {
  const now = effects.now ?? Date.now;
  const watchOf = (context: { agentId: string | null; workerTerminalId: string | null }): WorkerWatch => ({
    agentId: context.agentId ?? '',
    terminalId: context.workerTerminalId ?? '',
  });
  const failed = (what: string, watch: WorkerWatch) => (err: unknown) => effects.logger.warn({ err, ...watch }, what);
  return agentAggregate.provide({
    actors: {
      watchWorker: fromCallback<WorkerExited, WorkerWatch>(({ input, sendBack }) => {
        if (!input.terminalId) return undefined;
        return effects.watchWorker(input, (exitCode) => sendBack({ type: 'worker.exited', exitCode }));
      }),
    },
    delays: { workerGrace: ({ context }) => workerGraceDelay(context, effects.graceMs, now()) },
    actions: {
      reportWorkerExit: ({ context, event }) => {
        if (event.type !== 'worker.exited') return;
        const watch = watchOf(context);
        effects.workerExited(watch, event.exitCode).catch(failed('could not record the worker exit', watch));
      },
      closeWorker: ({ context }) => {
        const watch = watchOf(context);
        effects.closeWorker(watch).catch(failed('could not close the worker terminal', watch));
      },
    },
  });
}

export class LiveAgents {
  readonly #machine: LiveMachine;
  readonly #actors = new Map<string, Actor<LiveMachine>>();

  constructor(effects: LiveAgentEffects) {
    this.#machine = liveMachine(effects);
  }

  /** Feeds an agent fact (live or read back) to its agent's actor; `agent.spawned` creates the actor. */
  feed(fact: StoredFact): void {
    const agentId = (fact.data as { agentId?: string } | undefined)?.agentId;
    if (!agentId || !fact.type.startsWith('agent.')) return;
    let actor = this.#actors.get(agentId);
    if (!actor) {
      if (fact.type !== 'agent.spawned') return;
      actor = createActor(this.#machine, { id: `agent:${agentId}` });
      actor.start();
      this.#actors.set(agentId, actor);
    }
    // The codec validated the fact against its EventDef, so its type names its data's shape.
    actor.send(fact as unknown as AgentFact);
  }

  /** The live actor's snapshot (value and context are what the fold of the same facts holds). */
  snapshot(agentId: string): LiveAgentSnapshot | undefined {
    return this.#actors.get(agentId)?.getSnapshot();
  }

  /** Ids of the agents with a live actor. */
  ids(): string[] {
    return [...this.#actors.keys()];
  }

  /** Host stop: stops every actor (their watchers and grace timers with them). */
  stop(): void {
    for (const actor of this.#actors.values()) actor.stop();
    this.#actors.clear();
  }
}
