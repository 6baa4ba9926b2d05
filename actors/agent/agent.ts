/**
 * @module
 * The agent domain's effects: spawn (limits, workspace confinement, worker
 * launch), complete/fail, wait, cancel of a whole subtree, tree. An agent's
 * state is its aggregate (machines/agent/agent.ts) folded from facts, read
 * through the AgentDirectory; decisions about one agent are taken under its
 * parent's lock. What other domains do for an agent (record its spawn policy,
 * start its worker, release a cancelled agent's terminals, requests and
 * edits) is given to the constructor: nothing is plugged in afterwards.
 */
import type { Logger } from 'pino';
import {
  ErrorCode,
  InvalidStateError,
  LimitExceededError,
  NotFoundError,
  RuntimeError,
  newId,
  type AgentId,
  type AgentNode,
  type AgentsConfig,
  type StoredFact,
  type UnstampedFact,
  type WorkerSpec,
} from '../../schemas/index.ts';
import { isFinished } from '../../machines/agent/agent.ts';
import type { AgentDirectory, AgentView } from './agent-directory.ts';
import {
  RESERVED_AGENT_IDS,
  assertRunnable,
  assertUnconfined,
  confineWorkspace,
  placeRemote,
  type HostPlacement,
} from './placement.ts';

export type { AgentView } from './agent-directory.ts';
export { RESERVED_AGENT_IDS, confineWorkspace, type HostPlacement } from './placement.ts';

/** One command's call into the service: who sent it, and how its facts are appended. */
export type AgentCall = {
  /** The sender (the agent in the command's subject). */
  agentId: AgentId;
  /** Appends a fact caused by the command; resolves once durable. */
  emit(fact: UnstampedFact): Promise<StoredFact>;
  logger: Logger;
};

/** Serialises work per key (a parent's spawns, an agent's finish). */
export type Locks = { run<T>(key: string, fn: () => Promise<T>): Promise<T> };

export type AgentServiceDeps = {
  directory: AgentDirectory;
  locks: Locks;
  config: AgentsConfig;
  /** Validates a spawn policy before anything is appended; throws naming the bad key. */
  validatePolicy(policy: unknown): void;
  /** After agent.spawned, before its worker starts: records the child's own policy layer. */
  setSpawnPolicy(call: AgentCall, child: AgentView, policy: unknown): Promise<void>;
  /** Launches a worker for a spawned agent; resolves once it runs. Undefined: this host runs no workers. */
  startWorker?: ((agent: AgentView, worker: WorkerSpec) => Promise<void>) | undefined;
  /**
   * Named hosts: has the host the child was placed on start its worker (that host runs, watches and gives it
   * its identity); resolves with the agent's status there once its worker runs or has failed.
   */
  startRemoteWorker?: ((host: string, agent: AgentView, worker: WorkerSpec) => Promise<string>) | undefined;
  /** Release what a cancelled agent holds (pending requests, edits, terminals); called bottom-up, in order. */
  release: ReadonlyArray<(agentId: AgentId, reason: string) => Promise<void>>;
  /**
   * After an agent completed or failed on its own: release what it still holds here (its pending requests,
   * denied, so an approval after its end runs nothing; its streaming edits; its terminals but its worker's,
   * which closes after the grace). A finished agent frees its parent's slot (maxChildren counts live
   * children), so what it started must not run on beside the next child.
   */
  releaseFinished?: ((agent: AgentView) => Promise<void>) | undefined;
  /** Named hosts: where a child may be placed. Undefined: one unnamed host, so `host` is refused. */
  hosts?: HostPlacement | undefined;
};

export type SpawnData = {
  label: string;
  agentId?: AgentId | undefined;
  task?: string | undefined;
  policy?: unknown;
  workspace?: string | undefined;
  worker?: WorkerSpec | undefined;
  host?: string | undefined;
};

export class AgentService {
  readonly #deps: AgentServiceDeps;
  readonly #waiters = new Set<(fact: StoredFact) => void>();
  readonly #reserved = new Set<string>();

  constructor(deps: AgentServiceDeps) {
    this.#deps = deps;
  }

  get directory(): AgentDirectory {
    return this.#deps.directory;
  }

  /** Wakes `agent.wait` callers; the agent domain reacts to every live `agent.*` fact with it. */
  notify(fact: StoredFact): void {
    for (const waiter of this.#waiters) waiter(fact);
  }

  view(agentId: string): AgentView | undefined {
    return this.#deps.directory.view(agentId);
  }

  get(agentId: AgentId) {
    const view = this.view(agentId)!;
    return {
      agentId: view.agentId,
      parentId: view.parentId as AgentId | null,
      label: view.label,
      workspace: view.workspace,
      status: view.status,
      task: view.task,
      ...(view.result === undefined ? {} : { result: view.result }),
      error: view.error,
      children: this.#deps.directory.children(agentId),
      ...(view.host ? { host: view.host } : {}),
    };
  }

  tree(agentId: string): AgentNode[] {
    const node = (id: string): AgentNode => {
      const v = this.view(id)!;
      return {
        agentId: v.agentId,
        parentId: v.parentId as AgentId | null,
        label: v.label,
        status: v.status,
        depth: v.depth,
        workspace: v.workspace,
        ...(v.host ? { host: v.host } : {}),
      };
    };
    return [node(agentId), ...this.#deps.directory.descendants(agentId).map(node)];
  }

  async spawn(call: AgentCall, data: SpawnData) {
    const parentId = call.agentId;
    const config = this.#deps.config;
    return this.#deps.locks.run(`agent:${parentId}`, async () => {
      const parent = this.view(parentId);
      if (!parent) throw new RuntimeError(ErrorCode.UnknownAgent, `agent '${parentId}' does not exist`);
      if (parent.status !== 'running') {
        throw new InvalidStateError(
          `agent '${parentId}' is ${parent.status}; only a running agent can spawn sub-agents`,
        );
      }
      if (parent.depth + 1 > config.maxDepth) {
        throw new LimitExceededError(
          `agent '${parentId}' is at depth ${parent.depth}; sub-agents may ` +
            `go ${config.maxDepth} levels deep (domains.agents.maxDepth)`,
        );
      }
      // Only live children count: completed, failed and cancelled ones hold nothing, and counting them
      // would lock a parent out for good (the fold, and so the count, survives restarts).
      const live = this.#deps.directory.children(parentId).filter((id) => {
        const child = this.view(id);
        return child !== undefined && !isFinished(child.status);
      }).length;
      if (live >= config.maxChildren) {
        throw new LimitExceededError(
          `agent '${parentId}' already has ${live} live (unfinished) children, the limit ` +
            `domains.agents.maxChildren = ${config.maxChildren}; wait for one to finish, cancel one ` +
            `(agent.cancel), or raise domains.agents.maxChildren in the runtime config`,
        );
      }
      // Spawns under other parents' locks that have not stored their agent.spawned yet count too: between
      // this check and that append is an await, so without them concurrent parents all pass a limit of one.
      const inFlight = [...this.#reserved].filter((id) => !this.view(id)).length;
      const active = this.#deps.directory.active() + inFlight;
      if (active >= config.maxAgents) {
        throw new LimitExceededError(
          `this host runs ${active} unfinished agents, the limit domains.agents.maxAgents = ` +
            `${config.maxAgents}; cancel or finish some, or raise domains.agents.maxAgents in the runtime config`,
        );
      }
      const agentId = data.agentId ?? (newId('a') as AgentId);
      if (RESERVED_AGENT_IDS.has(agentId)) {
        throw new RuntimeError(
          ErrorCode.InvalidMessage,
          `agent id '${agentId}' is reserved (it names the human who answers permission requests); choose another id`,
        );
      }
      // Two parents may spawn the same id at once; their facts go to different subjects, so the id is
      // reserved here, synchronously, until its agent.spawned is stored.
      if (this.view(agentId) || this.#reserved.has(agentId)) {
        throw new RuntimeError(
          ErrorCode.Conflict,
          `agent id '${agentId}' is taken (an agent cannot be re-parented ` +
            `or be its own ancestor); choose another id or leave it out`,
        );
      }
      this.#reserved.add(agentId);
      try {
        return await this.#spawnReserved(call, parent, agentId, data);
      } finally {
        this.#reserved.delete(agentId);
      }
    });
  }

  /** `agent`, then its ancestors up to the root. */
  #lineage(agent: AgentView): AgentView[] {
    const out: AgentView[] = [];
    let a: AgentView | undefined = agent;
    while (a && !out.some((seen) => seen.agentId === a!.agentId)) {
      out.push(a);
      a = a.parentId ? this.view(a.parentId) : undefined;
    }
    return out;
  }

  async #spawnReserved(call: AgentCall, parent: AgentView, agentId: AgentId, data: SpawnData) {
    const parentId = parent.agentId;
    // Without a named host to go to, a child lives where its parent does.
    const host = data.host ?? parent.host;
    const remote = host !== parent.host;
    if (remote && this.#deps.hosts) assertUnconfined(this.#lineage(parent), this.#deps.hosts);
    const workspace = remote
      ? await placeRemote(this.#deps.hosts, host!, data.workspace)
      : confineWorkspace(parent.workspace, data.workspace);
    if (data.policy !== undefined) this.#deps.validatePolicy(data.policy);
    // A worker placed elsewhere runs there: its command is checked on that host (a failure fails the agent).
    if (data.worker && !remote) assertRunnable(data.worker.command);
    await call.emit({
      type: 'agent.spawned',
      agentId: parentId,
      data: {
        agentId,
        parentId,
        label: data.label,
        workspace,
        depth: parent.depth + 1,
        task: data.task ?? null,
        hasPolicy: data.policy !== undefined,
        worker: data.worker ? { command: data.worker.command, args: data.worker.args } : null,
        ...(host ? { host } : {}),
      },
    });
    const child = this.view(agentId)!;
    // The policy is in place before a worker could make its first call.
    if (data.policy !== undefined) await this.#deps.setSpawnPolicy(call, child, data.policy);
    if (data.worker && remote) {
      if (!this.#deps.startRemoteWorker)
        throw new RuntimeError(ErrorCode.Unavailable, 'this host cannot ask other hosts to start workers');
      // The placed host appended the start (or failure); this host reads it when it follows the log there.
      const status = await this.#deps.startRemoteWorker(host!, child, data.worker);
      return { agentId, parentId, workspace, status: status as AgentView['status'] };
    }
    if (data.worker) {
      if (!this.#deps.startWorker)
        throw new RuntimeError(
          ErrorCode.Unavailable,
          'workers need the terminal domain, which is not running on this host',
        );
      await this.#deps.startWorker(child, data.worker);
    }
    return { agentId, parentId, workspace, status: this.view(agentId)!.status };
  }

  complete(call: AgentCall, result: unknown) {
    return this.#finish(call, 'agent.completed', { result });
  }

  fail(call: AgentCall, error: string) {
    return this.#finish(call, 'agent.failed', { error, exitCode: null });
  }

  async #finish(call: AgentCall, type: 'agent.completed' | 'agent.failed', data: Record<string, unknown>) {
    const agentId = call.agentId;
    const view = this.view(agentId)!;
    // The root is the runtime's own agent: finished, it would refuse every tool call on this data dir for good.
    if (view.parentId === null) throw rootCannotFinish(agentId);
    const owner = (view.parentId ?? agentId) as AgentId;
    return this.#deps.locks.run(`agent:${owner}`, async () => {
      const current = this.view(agentId)!;
      if (isFinished(current.status)) {
        throw new InvalidStateError(
          `agent '${agentId}' is already ${current.status}; a finished agent cannot complete or fail again`,
        );
      }
      await call.emit({ type, agentId: owner, data: { agentId, ...data } });
      await this.#deps
        .releaseFinished?.(this.view(agentId)!)
        .catch((err) => call.logger.warn({ err, agentId }, 'releasing a finished agent failed'));
      return { agentId, status: this.view(agentId)!.status };
    });
  }

  async wait(call: AgentCall, data: { agentId: AgentId; timeoutMs: number }) {
    const { agentId, timeoutMs } = data;
    this.#assertInScope(call.agentId, agentId);
    const answer = () => {
      const v = this.view(agentId)!;
      return {
        agentId,
        status: v.status,
        done: isFinished(v.status),
        ...(v.result === undefined ? {} : { result: v.result }),
        error:
          v.status === 'lost'
            ? `agent '${agentId}' is lost with its host '${v.host}' (no heartbeat); it resumes when that host ` +
              'comes back (agent.restored), or cancel it (agent.cancel) and spawn the work again'
            : v.status === 'completed'
              ? null
              : v.error,
      };
    };
    const settled = (status: string) => isFinished(status) || status === 'lost';
    if (settled(this.view(agentId)!.status) || timeoutMs === 0) return answer();
    await new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      const waiter = (fact: StoredFact) => {
        if ((fact.data as { agentId?: string }).agentId === agentId && settled(this.view(agentId)!.status)) finish();
      };
      this.#waiters.add(waiter);
    });
    return answer();
  }

  async cancel(call: AgentCall, data: { agentId?: AgentId | undefined; reason: string }) {
    const { agentId: target = call.agentId, reason } = data;
    this.#assertInScope(call.agentId, target);
    // Pre-order reversed: bottom-up. The root's own cancel cancels every agent below it and leaves the root (the
    // runtime's agent: cancelled, it refused every tool call on its data dir for good, a restart too).
    const root = this.view(target)?.parentId === null;
    const order = [...(root ? [] : [target]), ...this.#deps.directory.descendants(target)].reverse();
    const cancelled: AgentId[] = [];
    for (const id of order) {
      const view = this.view(id)!;
      if (isFinished(view.status)) continue;
      const owner = (view.parentId ?? id) as AgentId;
      // Under the owner's lock: a spawn of this agent (and its worker start) finishes first, and no
      // new child of it is spawned between the release and the fact.
      await this.#deps.locks.run(`agent:${owner}`, async () => {
        if (isFinished(this.view(id)!.status)) return;
        for (const release of this.#deps.release) {
          await release(id, reason).catch((err) =>
            call.logger.warn({ err, agentId: id }, 'releasing a cancelled agent failed'),
          );
        }
        await call.emit({
          type: 'agent.cancelled',
          agentId: owner,
          data: { agentId: id, reason, by: call.agentId },
        });
        cancelled.push(id);
      });
    }
    return { cancelled };
  }

  /**
   * Named hosts: another host cancelled an agent that lives here (its parent is there). What the agent holds
   * here (its terminals, pending requests, streaming edits) is released as a local cancel would.
   */
  async releaseCancelled(agentId: AgentId, reason: string, logger: Logger): Promise<void> {
    for (const release of this.#deps.release) {
      await release(agentId, reason).catch((err) =>
        logger.warn({ err, agentId }, 'releasing an agent cancelled on another host failed'),
      );
    }
  }

  #assertInScope(sender: string, target: string): void {
    if (!this.view(target))
      throw new NotFoundError(`agent '${target}' does not exist; list agents with \`skein agents --tree\``);
    if (!this.#deps.directory.isSelfOrAncestor(sender, target)) {
      throw new RuntimeError(
        ErrorCode.PermissionDenied,
        `agent '${sender}' is not '${target}' nor one of its ` +
          `ancestors; only an agent itself or its ancestors may do this`,
      );
    }
  }
}

function rootCannotFinish(agentId: string): InvalidStateError {
  return new InvalidStateError(
    `agent '${agentId}' is the root agent: it cannot complete or fail (it would refuse every later tool call on ` +
      'this data dir, after a restart too). Stop the runtime to end the session (Ctrl-C on skein up).',
  );
}
