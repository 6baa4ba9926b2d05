/**
 * @module
 * The agent domain's effects and command handlers: spawn (limits, workspace
 * confinement, worker launch), complete/fail, wait, cancel of a whole
 * subtree, tree. An agent's state is its aggregate (machines/agent.ts) folded
 * from facts; decisions about one agent are taken under its parent's lock.
 * Other domains plug in through hooks: closing terminals, denying pending
 * requests and cancelling edits of a cancelled agent, launching workers.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import {
  ErrorCode,
  InvalidStateError,
  LimitExceededError,
  NotFoundError,
  RuntimeError,
  newId,
  parseEventSubject,
  type AgentId,
  type AgentNode,
  type AgentsConfig,
  type AgentStatus,
  type StoredFact,
  type WorkerSpec,
} from '../../schemas/index.ts';
import { isFinished, type AgentContext } from '../../machines/agent/agent.ts';
import type { CommandHandler, HandlerContext, Host } from '../../infra/kernel/host.ts';

export type AgentView = AgentContext & { agentId: AgentId; status: AgentStatus };

export type AgentHooks = {
  /** Validates a spawn policy before anything is appended; throws naming the bad key. */
  validatePolicy?: (policy: unknown) => void;
  /** After agent.spawned: record the agent's own policy layer, etc. */
  afterSpawn?: (ctx: HandlerContext, agent: AgentView, spawn: { policy?: unknown }) => Promise<void>;
  /** Launches a worker for a spawned agent; resolves once it runs (the hook emits agent.worker.started). */
  startWorker?: (agent: AgentView, worker: WorkerSpec) => Promise<void>;
  /** Releases what a cancelled agent holds (terminals, pending requests, edits); called bottom-up. */
  onCancel: Array<(agentId: AgentId, reason: string) => Promise<void>>;
};

export class AgentService {
  readonly #host: () => Host;
  readonly #config: AgentsConfig;
  readonly hooks: AgentHooks;
  readonly #waiters = new Set<(fact: StoredFact) => void>();
  readonly #reserved = new Set<string>();

  constructor(host: () => Host, config: AgentsConfig, hooks: Partial<AgentHooks> = {}) {
    this.#host = host;
    this.#config = config;
    this.hooks = { onCancel: [], ...hooks };
  }

  /** Call once the host exists: wakes `agent.wait` callers on lifecycle facts. */
  attach(): void {
    this.#host().writer.onFact((fact) => {
      if (fact.type.startsWith('agent.')) for (const waiter of this.#waiters) waiter(fact);
    });
  }

  view(agentId: string): AgentView | undefined {
    const host = this.#host();
    const subject = host.agentSubject(agentId);
    const snapshot = subject ? host.state(subject) : undefined;
    if (!snapshot) return undefined;
    return {
      ...(snapshot.context as AgentContext),
      agentId: agentId as AgentId,
      status: String(snapshot.value) as AgentStatus,
    };
  }

  /** Ids of an agent's children (their facts are on the parent's subjects). */
  children(agentId: string): AgentId[] {
    const out: AgentId[] = [];
    for (const key of this.#host().fold.keys()) {
      const parts = parseEventSubject(key);
      if (parts?.aggregate === 'agent' && parts.agentId === agentId && parts.aggregateId !== agentId)
        out.push(parts.aggregateId as AgentId);
    }
    return out;
  }

  /** Nearest first: parent, grandparent, …, root. */
  ancestors(agentId: string): AgentId[] {
    const out: AgentId[] = [];
    let current = this.view(agentId)?.parentId ?? null;
    while (current && out.length < 128) {
      out.push(current as AgentId);
      current = this.view(current)?.parentId ?? null;
    }
    return out;
  }

  /** Whether `ancestor` is `agentId` itself or above it. */
  isSelfOrAncestor(ancestor: string, agentId: string): boolean {
    return ancestor === agentId || this.ancestors(agentId).includes(ancestor as AgentId);
  }

  /** The subtree below `agentId`, children after their parent (pre-order). */
  descendants(agentId: string): AgentId[] {
    const out: AgentId[] = [];
    const visit = (id: string) => {
      for (const child of this.children(id)) {
        out.push(child);
        visit(child);
      }
    };
    visit(agentId);
    return out;
  }

  handlers(): Record<string, CommandHandler> {
    return {
      'agent.spawn': (ctx) => this.#spawn(ctx),
      'agent.get': async (ctx) => {
        const view = this.view(ctx.command.agentId)!;
        return {
          agentId: view.agentId,
          parentId: view.parentId,
          label: view.label,
          workspace: view.workspace,
          status: view.status,
          task: view.task,
          ...(view.result === undefined ? {} : { result: view.result }),
          error: view.error,
          children: this.children(ctx.command.agentId),
        };
      },
      'agent.complete': (ctx) => this.#finish(ctx, 'agent.completed', { result: ctx.command.data.result }),
      'agent.fail': (ctx) => this.#finish(ctx, 'agent.failed', { error: ctx.command.data.error, exitCode: null }),
      'agent.wait': (ctx) => this.#wait(ctx),
      'agent.cancel': (ctx) => this.#cancel(ctx),
      'agent.tree': async (ctx) => ({ agents: this.tree(ctx.command.agentId) }),
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
      };
    };
    return [node(agentId), ...this.descendants(agentId).map(node)];
  }

  async #spawn(ctx: HandlerContext): Promise<Record<string, unknown>> {
    const data = ctx.command.data as {
      label: string;
      agentId?: string;
      task?: string;
      policy?: unknown;
      workspace?: string;
      worker?: WorkerSpec;
    };
    const parentId = ctx.command.agentId;
    return ctx.host.locks.run(`agent:${parentId}`, async () => {
      const parent = this.view(parentId);
      if (!parent) throw new RuntimeError(ErrorCode.UnknownAgent, `agent '${parentId}' does not exist`);
      if (parent.status !== 'running') {
        throw new InvalidStateError(
          `agent '${parentId}' is ${parent.status}; only a running agent can spawn sub-agents`,
        );
      }
      if (parent.depth + 1 > this.#config.maxDepth) {
        throw new LimitExceededError(
          `agent '${parentId}' is at depth ${parent.depth}; sub-agents may ` +
            `go ${this.#config.maxDepth} levels deep (domains.agents.maxDepth)`,
        );
      }
      // Only live children count: completed, failed and cancelled ones hold nothing, and counting them
      // would lock a parent out for good (the fold, and so the count, survives restarts).
      const live = this.children(parentId).filter((id) => {
        const child = this.view(id);
        return child !== undefined && !isFinished(child.status);
      }).length;
      if (live >= this.#config.maxChildren) {
        throw new LimitExceededError(
          `agent '${parentId}' already has ${live} live (unfinished) children, the limit ` +
            `domains.agents.maxChildren = ${this.#config.maxChildren}; wait for one to finish, cancel one ` +
            `(agent.cancel), or raise domains.agents.maxChildren in the runtime config`,
        );
      }
      const active = this.#activeAgents();
      if (active >= this.#config.maxAgents) {
        throw new LimitExceededError(
          `this host runs ${active} unfinished agents, the limit domains.agents.maxAgents = ` +
            `${this.#config.maxAgents}; cancel or finish some, or raise domains.agents.maxAgents in the runtime config`,
        );
      }
      const agentId = (data.agentId ?? newId('a')) as AgentId;
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
        return await this.#spawnReserved(ctx, parent, agentId, data);
      } finally {
        this.#reserved.delete(agentId);
      }
    });
  }

  async #spawnReserved(
    ctx: HandlerContext,
    parent: AgentView,
    agentId: AgentId,
    data: { label: string; task?: string; policy?: unknown; workspace?: string; worker?: WorkerSpec },
  ): Promise<Record<string, unknown>> {
    const parentId = parent.agentId;
    const workspace = confineWorkspace(parent.workspace, data.workspace);
    if (data.policy !== undefined) this.hooks.validatePolicy?.(data.policy);
    if (data.worker) assertRunnable(data.worker.command);
    await ctx.emit({
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
      },
    });
    const child = this.view(agentId)!;
    await this.hooks.afterSpawn?.(ctx, child, { policy: data.policy });
    if (data.worker) {
      if (!this.hooks.startWorker)
        throw new RuntimeError(
          ErrorCode.Unavailable,
          'workers need the terminal domain, which is not running on this host',
        );
      await this.hooks.startWorker(child, data.worker);
    }
    return { agentId, parentId, workspace, status: this.view(agentId)!.status };
  }

  async #finish(ctx: HandlerContext, type: 'agent.completed' | 'agent.failed', data: Record<string, unknown>) {
    const agentId = ctx.command.agentId;
    const view = this.view(agentId)!;
    const owner = (view.parentId ?? agentId) as AgentId;
    return ctx.host.locks.run(`agent:${owner}`, async () => {
      const current = this.view(agentId)!;
      if (isFinished(current.status)) {
        throw new InvalidStateError(
          `agent '${agentId}' is already ${current.status}; a finished agent cannot complete or fail again`,
        );
      }
      await ctx.emit({ type, agentId: owner, data: { agentId, ...data } });
      return { agentId, status: this.view(agentId)!.status };
    });
  }

  async #wait(ctx: HandlerContext) {
    const { agentId, timeoutMs } = ctx.command.data as { agentId: AgentId; timeoutMs: number };
    this.#assertInScope(ctx.command.agentId, agentId);
    const answer = () => {
      const v = this.view(agentId)!;
      return {
        agentId,
        status: v.status,
        done: isFinished(v.status),
        ...(v.result === undefined ? {} : { result: v.result }),
        error: v.status === 'completed' ? null : v.error,
      };
    };
    if (isFinished(this.view(agentId)!.status) || timeoutMs === 0) return answer();
    await new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.#waiters.delete(waiter);
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      const waiter = (fact: StoredFact) => {
        if ((fact.data as { agentId?: string }).agentId === agentId && isFinished(this.view(agentId)!.status)) finish();
      };
      this.#waiters.add(waiter);
    });
    return answer();
  }

  async #cancel(ctx: HandlerContext) {
    const { agentId: target = ctx.command.agentId, reason } = ctx.command.data as { agentId?: AgentId; reason: string };
    this.#assertInScope(ctx.command.agentId, target);
    const order = [target, ...this.descendants(target)].reverse(); // deepest last in pre-order → reversed: bottom-up
    const cancelled: AgentId[] = [];
    for (const id of order) {
      const view = this.view(id)!;
      if (isFinished(view.status)) continue;
      const owner = (view.parentId ?? id) as AgentId;
      // Under the owner's lock: a spawn of this agent (and its worker start) finishes first, and no
      // new child of it is spawned between the release and the fact.
      await ctx.host.locks.run(`agent:${owner}`, async () => {
        if (isFinished(this.view(id)!.status)) return;
        for (const release of this.hooks.onCancel) {
          await release(id, reason).catch((err) =>
            ctx.logger.warn({ err, agentId: id }, 'releasing a cancelled agent failed'),
          );
        }
        await ctx.emit({
          type: 'agent.cancelled',
          agentId: owner,
          data: { agentId: id, reason, by: ctx.command.agentId },
        });
        cancelled.push(id);
      });
    }
    return { cancelled };
  }

  #assertInScope(sender: string, target: string): void {
    if (!this.view(target))
      throw new NotFoundError(`agent '${target}' does not exist; list agents with \`skein agents --tree\``);
    if (!this.isSelfOrAncestor(sender, target)) {
      throw new RuntimeError(
        ErrorCode.PermissionDenied,
        `agent '${sender}' is not '${target}' nor one of its ` +
          `ancestors; only an agent itself or its ancestors may do this`,
      );
    }
  }

  #activeAgents(): number {
    let n = 0;
    for (const key of this.#host().fold.keys()) {
      if (!key.includes('.agent.')) continue;
      const snapshot = this.#host().state(key);
      if (snapshot && !isFinished(String(snapshot.value))) n++;
    }
    return n;
  }
}

/** Ids no agent may take: `user` is how the human answers permission requests. */
export const RESERVED_AGENT_IDS: ReadonlySet<string> = new Set(['user']);

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
  const rel = relative(parentReal, real);
  if (rel.startsWith('..') || isAbsolute(rel)) {
    throw new RuntimeError(
      ErrorCode.PermissionDenied,
      `workspace '${requested}' resolves to ${real}, outside the parent's workspace ` +
        `${parentReal}; a sub-agent's workspace must be the parent's or inside it`,
    );
  }
  return real;
}

/** Throws a clear error when `command` cannot be found or run. */
function assertRunnable(command: string): void {
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
