import { ErrorCode, NotFoundError, RuntimeError } from '../../schemas/errors.ts';
import { newId, type AgentId } from '../../schemas/ids.ts';
import type { DecisionAnswer, PermissionRequestedData } from '../../schemas/permission.ts';
import type { Policy, PolicyLayerName } from '../../schemas/policy.ts';
import type { ToolName } from '../../schemas/tool.ts';
import { deciderRole, resumeFrom, type PolicyChain } from '../../machines/permission/permission.ts';
import { settledReply, type PermissionAggregateContext } from '../../machines/permission/permission-aggregate.ts';
import { compilePattern, type PolicyLayer } from '../../machines/permission/policy.ts';
import { callerDeadline } from './policy-deadline.ts';
import { PermissionRuns, type DecideReply, type FactSink, type PermissionAgent } from './permission-runs.ts';
import { HOST_RESTARTED, HOST_STOPPING, restartDenial } from './restart-denial.ts';
import { type AuthorizeArgs, PermissionDeniedError, type PermissionServiceDeps } from './policy-service-types.ts';
import { globalPolicyPath, loadPolicyLayers, persistLearnedRules, resolvePathFacts } from './policy-files.ts';
import { createPermissionGate, type PermissionGate } from './policy-gate.ts';
import { PolicyLayers, ruleCount, withLearned } from './policy-layers.ts';
import type { PolicyFileRead } from './policy-watch.ts';

export type { DecideReply, FactSink, PermissionAgent } from './permission-runs.ts';
export { type AuthorizeArgs, PermissionDeniedError, type PermissionServiceDeps } from './policy-service-types.ts';

export class PermissionService {
  readonly #deps: PermissionServiceDeps;
  readonly #gate: PermissionGate;
  readonly #runs: PermissionRuns;
  readonly #layers: PolicyLayers;

  private constructor(deps: PermissionServiceDeps, gate: PermissionGate, layers: PolicyLayer[]) {
    this.#deps = deps;
    this.#gate = gate;
    this.#layers = new PolicyLayers(layers);
    this.#runs = new PermissionRuns({
      logger: deps.logger,
      emit: deps.emit,
      timeoutMs: deps.timeoutMs,
      maxPendingPerAgent: deps.maxPendingPerAgent,
      now: deps.now,
    });
  }

  /** Loads the global and project files (invalid files throw, naming the key) and the bash grammar. */
  static async create(deps: PermissionServiceDeps): Promise<PermissionService> {
    const layers = await loadPolicyLayers({
      workspace: deps.workspace,
      globalPath: deps.globalPath ?? globalPolicyPath(),
    });
    return new PermissionService(deps, deps.gate ?? (await createPermissionGate()), layers);
  }

  /** The agent layer given at spawn (narrows only: decisions also take every ancestor's). */
  setAgentLayer(agentId: string, policy: Policy): void {
    this.#layers.setAgent(agentId, policy);
  }

  /** The policy chain for an agent: its own stack and each ancestor's. */
  policiesFor(agentId: string): PolicyChain {
    return this.#layers.chainFor(agentId, this.#agent(agentId).ancestors);
  }

  /**
   * The gate: decides one tool call, asking and waiting when needed. Resolves
   * when granted; throws PermissionDeniedError when denied.
   */
  async authorize(args: AuthorizeArgs): Promise<{ requestId: string; by: string; resolved?: string | undefined }> {
    const agent = this.#agent(args.agentId);
    const built = await this.#gate.build(args.tool, args.input, {
      roots: agent.roots,
      ...(args.foreground ? { foreground: args.foreground } : {}),
    });
    if (built.kind === 'granted') return { requestId: '', by: 'grant' };
    const requestId = newId('p');
    const given = typeof args.detail === 'function' ? undefined : args.detail;
    let request = given === undefined ? built.request : { ...built.request, detail: given };
    const policies = this.policiesFor(agent.agentId);
    // Settled by the rules (most calls): no machine. Granted, the tool runs while permission.granted is
    // being appended; the host's reply still waits for that append (every fact a command emits), so nothing
    // is acknowledged before it is durable, and a failed append turns the reply into an error.
    // A denial is appended at once: the call waits for it, and no tool fact follows to carry it.
    const held = args.emitRuling;
    const sink: FactSink = held ? (fact) => (fact.type === 'permission.granted' ? held : args.emit)(fact) : args.emit;
    const ruled = this.#runs.settleByRule(agent, requestId, request, policies, sink);
    if (ruled) {
      if (ruled.output.granted) return { requestId, by: ruled.output.by, resolved: request.path?.resolved };
      await ruled.write;
      throw new PermissionDeniedError(ruled.output.reason, { requestId, by: ruled.output.by });
    }
    if (args.defer) return { requestId: '', by: 'deferred', resolved: request.path?.resolved };
    const asked = typeof args.detail === 'function' ? args.detail() : undefined;
    if (asked !== undefined) request = { ...request, detail: asked };
    this.#runs.admit(agent.agentId);
    const now = (this.#deps.now ?? Date.now)();
    const run = this.#runs.start(agent, requestId, {
      request,
      policies,
      now: new Date(now).toISOString(),
      sink: args.emit,
      ...(args.waitMs !== undefined ? { callerDeadline: callerDeadline(now, args.waitMs) } : {}),
    });
    const withdraw = () =>
      this.#runs.send(run, args.emit, { type: 'permission.cancel', data: { reason: String(args.signal?.reason) } });
    if (args.signal?.aborted) withdraw();
    else args.signal?.addEventListener('abort', withdraw, { once: true });
    await run.done.finally(() => args.signal?.removeEventListener('abort', withdraw));
    const out = run.actor.getSnapshot().output!;
    await Promise.all(run.writes);
    if (out.granted) return { requestId, by: out.by, resolved: request.path?.resolved };
    throw new PermissionDeniedError(out.reason, { requestId, by: out.by });
  }

  /** Where a file tool's path leads now, as the ask resolved it (symlinks followed, relative to the root). */
  async resolvedNow(agentId: string, path: string): Promise<string | undefined> {
    return (await resolvePathFacts(path, this.#agent(agentId).roots)).resolved;
  }

  /** `permission.decide`: idempotent for settled requests; refused for non-ancestors. */
  async decide(args: {
    requestId: string;
    decision: DecisionAnswer;
    pattern?: string | undefined;
    decidedBy: string;
    emit: FactSink;
  }): Promise<DecideReply> {
    const p = this.#runs.pending.get(args.requestId);
    if (!p) {
      const folded = this.#deps.aggregate?.(args.requestId);
      const settled = this.#runs.settled(args.requestId) ?? (folded ? settledReply(folded) : undefined);
      if (settled) return { ...settled, alreadyDecided: true };
      throw new NotFoundError(
        `permission request '${args.requestId}' is not pending; list pending requests with \`skein approvals\``,
      );
    }
    const req = p.requested!;
    const role = deciderRole(req, args.decidedBy);
    if (!role) {
      const who = [...req.ancestors, 'the user'].join(', ');
      throw new RuntimeError(
        ErrorCode.PermissionDenied,
        `agent '${args.decidedBy}' may not answer request '${args.requestId}' ` +
          `of agent '${req.agentId}'; only its ancestors (${who}) can`,
      );
    }
    if (args.pattern !== undefined) {
      const compiled = compilePattern(args.pattern, false);
      if (typeof compiled === 'string')
        throw new RuntimeError(
          ErrorCode.InvalidMessage,
          `pattern '${args.pattern}' is not a valid regex ` +
            `(${compiled}); fix it or omit it to use the suggested pattern`,
        );
    }
    const facts = this.#runs.send(p, args.emit, {
      type: 'permission.decide',
      data: { requestId: args.requestId, decision: args.decision, pattern: args.pattern, decidedBy: args.decidedBy },
    });
    await Promise.all(p.writes);
    const outcomeFact = facts.find((f) => f.type !== 'permission.requested');
    const learned = outcomeFact && 'learned' in outcomeFact.data ? outcomeFact.data.learned : undefined;
    if (learned && role === 'parent') {
      // An ancestor below the root narrows only its own subtree: the rule joins its own layer (which binds it and
      // every descendant), never the project's, which binds the root and the siblings too.
      const policy = withLearned(this.#layers.agent(args.decidedBy), learned);
      this.#layers.setAgent(args.decidedBy, policy);
      await args.emit({
        type: 'policy.changed',
        agentId: args.decidedBy as AgentId,
        data: {
          layerId: args.decidedBy,
          layer: 'agent',
          agentId: args.decidedBy,
          policy,
          added: learned,
          causeRequestId: args.requestId,
        },
      });
      await this.#reevaluateAll(args.emit);
    } else if (learned) {
      const { path, policy } = await persistLearnedRules(this.#deps.workspace, learned);
      this.#layers.setProject(policy);
      await args.emit({
        type: 'policy.changed',
        agentId: this.#root(req) as AgentId,
        data: { layerId: 'project', layer: 'project', path, policy, added: learned, causeRequestId: args.requestId },
      });
      await this.#reevaluateAll(args.emit);
    }
    return (
      this.#runs.settled(args.requestId) ?? {
        requestId: args.requestId,
        outcome: 'denied',
        by: 'cancelled',
        alreadyDecided: false,
      }
    );
  }

  /** `policy.set`: global/project only from the root agent; an agent layer from the agent or an ancestor. */
  async setPolicy(args: {
    layer: PolicyLayerName;
    agentId?: string | undefined;
    setBy: string;
    policy: Policy;
    emit: FactSink;
  }): Promise<{ layer: PolicyLayerName; rules: number }> {
    const setter = this.#agent(args.setBy);
    const root = setter.ancestors.at(-1) ?? setter.agentId;
    let path: string | undefined;
    let layerId: string;
    if (args.layer === 'agent') {
      const target = this.#agent(args.agentId ?? args.setBy);
      if (target.agentId !== args.setBy && !target.ancestors.includes(args.setBy)) {
        throw new RuntimeError(
          ErrorCode.PermissionDenied,
          `agent '${args.setBy}' may not set the policy of agent ` +
            `'${target.agentId}'; only the agent itself or its ancestors can`,
        );
      }
      this.#layers.setAgent(target.agentId, args.policy);
      layerId = target.agentId;
    } else {
      if (args.setBy !== root)
        throw new RuntimeError(
          ErrorCode.PermissionDenied,
          `only the root agent '${root}' may change the ${args.layer} policy; ask the user`,
        );
      path = await this.#layers.writeFileLayer(args.layer, args.policy, {
        workspace: this.#deps.workspace,
        globalPath: this.#deps.globalPath,
      });
      layerId = args.layer;
    }
    await args.emit({
      type: 'policy.changed',
      agentId: (args.layer === 'agent' ? layerId : root) as AgentId,
      data: {
        layerId,
        layer: args.layer,
        ...(args.layer === 'agent' ? { agentId: layerId } : {}),
        ...(path ? { path } : {}),
        policy: args.policy,
      },
    });
    await this.#reevaluateAll(args.emit);
    return { layer: args.layer, rules: ruleCount(args.policy) };
  }

  /**
   * A policy file changed on disk (policy-watch.ts). Valid: it becomes the layer, `policy.changed` (reloaded)
   * records it and pending requests are decided again. Invalid: `policy.file.rejected` names the error and the
   * previous layer stays in force (never fail open). Unchanged (skein's own write): nothing.
   */
  async reloadFile(layer: 'global' | 'project', path: string, read: PolicyFileRead): Promise<void> {
    if (!read.ok) {
      this.#deps.logger.warn({ path, error: read.error }, 'policy file rejected; the previous policy holds');
      await this.#deps.emit({ type: 'policy.file.rejected', data: { layer, path, error: read.error } });
      return;
    }
    const policy = this.#layers.applyFile(layer, read.policy);
    if (!policy) return;
    this.#deps.logger.info({ path, rules: ruleCount(policy) }, 'policy file reloaded');
    await this.#deps.emit({
      type: 'policy.changed',
      data: { layerId: layer, layer, path, policy, reloaded: true },
    });
    await this.#reevaluateAll(this.#deps.emit);
  }

  /** Open requests (for `skein approvals`), optionally only those an agent may answer or made. */
  pending(agentId?: string): PermissionRequestedData[] {
    const all = [...this.#runs.pending.values()].flatMap((p) => (p.requested ? [p.requested] : []));
    return agentId ? all.filter((r) => r.agentId === agentId || (r.ancestors as string[]).includes(agentId)) : all;
  }

  /**
   * After replay: every request still pending in the log is denied (by: cancelled, reason naming
   * `host_restarted`). The command it was for died with the previous host, so granting it now would grant
   * and do nothing; the caller retrying that command id gets this denial, and a new id asks again.
   */
  async restore(pending: PermissionAggregateContext[]): Promise<number> {
    let denied = 0;
    for (const c of pending) {
      if (!c.requestId || !c.agentId || !c.tool || c.input === undefined || this.#runs.pending.has(c.requestId))
        continue;
      const agent = this.#deps.agent(c.agentId);
      if (!agent) {
        // No agent to run a machine for (not in the directory): the denial is appended as the machine would.
        await this.#deps
          .emit(restartDenial(c))
          .catch((err: unknown) => this.#deps.logger.warn({ err, requestId: c.requestId }, 'denial not appended'));
        denied++;
        continue;
      }
      // Resumed from the log: the machine takes the folded decision and goes straight to asking.
      const p = this.#runs.start(agent, c.requestId, {
        request: { tool: c.tool as ToolName, input: c.input },
        policies: this.policiesFor(agent.agentId),
        now: this.#nowIso(),
        sink: this.#deps.emit,
        resume: resumeFrom(c),
        requested: c,
      });
      this.#runs.send(p, this.#deps.emit, { type: 'permission.cancel', data: { reason: HOST_RESTARTED } });
      await Promise.allSettled(p.writes);
      denied++;
    }
    if (denied > 0) this.#deps.logger.info({ denied }, 'pending permission requests denied: the host restarted');
    return denied;
  }

  /**
   * Withdraws request `requestId` for `by`, its requester or an ancestor: denied (by: cancelled), as a call whose
   * caller left. Already decided: that outcome, `alreadyDecided`.
   */
  async withdraw(args: { requestId: string; by: string; emit: FactSink }): Promise<DecideReply> {
    const p = this.#runs.pending.get(args.requestId);
    if (!p)
      return this.decide({ requestId: args.requestId, decision: 'deny_once', decidedBy: args.by, emit: args.emit });
    const req = p.requested!;
    if (req.agentId !== args.by && !deciderRole(req, args.by)) {
      throw new RuntimeError(
        ErrorCode.PermissionDenied,
        `agent '${args.by}' may not withdraw request '${args.requestId}' of agent '${req.agentId}'; only it and ` +
          'its ancestors can',
      );
    }
    const reason = `withdrawn: ${args.by === req.agentId ? 'its caller' : `agent '${args.by}'`} cancelled the call`;
    this.#runs.send(p, args.emit, { type: 'permission.cancel', data: { reason } });
    await Promise.all(p.writes);
    return { requestId: args.requestId, outcome: 'denied', by: 'cancelled', alreadyDecided: false };
  }

  /** Denies the pending requests an agent made (by: cancelled): its agent was cancelled. */
  async cancelAgent(agentId: string, reason: string, sink: FactSink = this.#deps.emit): Promise<number> {
    let n = 0;
    for (const p of [...this.#runs.pending.values()]) {
      if (p.actor.getSnapshot().context.agentId !== agentId) continue;
      this.#runs.send(p, sink, { type: 'permission.cancel', data: { reason } });
      await Promise.all(p.writes);
      n++;
    }
    return n;
  }

  /**
   * Stops the deadline timers without deciding anything (a request still pending then is one whose denial
   * could not be appended: `restore` denies it at the next start).
   */
  suspend(): void {
    for (const p of this.#runs.pending.values()) p.cancelTimer();
  }

  /**
   * Denies every pending request (by: cancelled, naming `reason`): the host is stopping, and each call waiting
   * for an answer gets its reply now instead of at its own timeout, with the log saying why.
   */
  async close(reason = HOST_STOPPING): Promise<void> {
    for (const p of [...this.#runs.pending.values()]) {
      this.#runs.send(p, this.#deps.emit, { type: 'permission.cancel', data: { reason } });
      await Promise.all(p.writes);
    }
  }

  async #reevaluateAll(sink: FactSink): Promise<void> {
    for (const p of [...this.#runs.pending.values()]) {
      this.#runs.send(p, sink, {
        type: 'permission.reevaluate',
        data: { policies: this.policiesFor(p.actor.getSnapshot().context.agentId) },
      });
      await Promise.all(p.writes);
    }
  }

  #agent(agentId: string): PermissionAgent {
    const agent = this.#deps.agent(agentId);
    if (!agent)
      throw new RuntimeError(
        ErrorCode.UnknownAgent,
        `agent '${agentId}' does not exist; check the id with \`skein status\``,
      );
    return agent;
  }

  #root(r: { agentId: string; ancestors: string[] }): string {
    return r.ancestors.at(-1) ?? r.agentId;
  }

  #nowIso(): string {
    return new Date((this.#deps.now ?? Date.now)()).toISOString();
  }
}
