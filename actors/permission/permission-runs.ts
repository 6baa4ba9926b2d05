/**
 * @module
 * The permission requests of one host while they run: a `permissionMachine` per request that asks (its facts
 * go to the sink of whatever moved it last: the tool call, a decide, a timer), its deadline timers, the
 * pending requests and the replies of recently settled ones. A request the rules settle at once never gets a
 * machine: `settleByRule` appends the fact the machine would have emitted (`ruleSettled`), so live state and a
 * replay of the log are the same.
 */
import { createActor, type Actor } from 'xstate';
import type { Logger } from 'pino';
import { LimitExceededError } from '../../schemas/errors.ts';
import type { AgentId } from '../../schemas/ids.ts';
import { checkedFact } from '../../schemas/message.ts';
import {
  PermissionDenied,
  PermissionGranted,
  type PermissionFact,
  type PermissionRequestedData,
} from '../../schemas/permission.ts';
import type { ToolName } from '../../schemas/tool.ts';
import { permissionMachine, type PolicyChain, type resumeFrom } from '../../machines/permission/permission.ts';
import { ruleSettled, type PermissionOutput } from '../../machines/permission/permission-facts.ts';
import type { PermissionAggregateContext } from '../../machines/permission/permission-aggregate.ts';
import { decideForAgent, type DecisionRequest } from '../../machines/permission/permission-policy.ts';
import { armDeadline } from './policy-deadline.ts';

export type PermissionAgent = { agentId: string; ancestors: string[]; roots: string[] };
export type FactSink = (fact: { type: string; data: unknown; agentId?: AgentId }) => Promise<unknown>;
export type DecideReply = { requestId: string; outcome: 'granted' | 'denied'; by: string; alreadyDecided: boolean };

export type Pending = {
  actor: Actor<typeof permissionMachine>;
  /** Set once asking (undefined when the rules decided at once). */
  requested: PermissionRequestedData | undefined;
  sink: FactSink;
  writes: Promise<unknown>[];
  cancelTimer: () => void;
  done: Promise<void>;
};

export type RunOptions = {
  request: DecisionRequest;
  policies: PolicyChain;
  now: string;
  sink: FactSink;
  callerDeadline?: string;
  resume?: ReturnType<typeof resumeFrom>;
  requested?: PermissionAggregateContext;
};

/** Settled replies kept for `permission.decide` sent again (older ones are answered from the folded log). */
const SETTLED_KEPT = 10_000;

export type RunsDeps = {
  logger: Logger;
  /** Where timers' facts go (no command caused them). */
  emit: FactSink;
  timeoutMs?: number | undefined;
  /** Requests one agent may have pending at once (`domains.permission.maxPendingPerAgent`); unbounded if unset. */
  maxPendingPerAgent?: number | undefined;
  now?: (() => number) | undefined;
};

export class PermissionRuns {
  readonly pending = new Map<string, Pending>();
  readonly #settled = new Map<string, DecideReply>();
  /** Pending requests per agent, for `admit`. */
  readonly #held = new Map<string, number>();
  readonly #deps: RunsDeps;

  constructor(deps: RunsDeps) {
    this.#deps = deps;
  }

  /** The reply of a request settled here lately (undefined: pending, unknown, or only in the log). */
  settled(requestId: string): DecideReply | undefined {
    return this.#settled.get(requestId);
  }

  /**
   * The fast path of the gate: when the rules allow or deny the call, its fact is appended through `sink`
   * and the outcome returned, without starting a machine (the same fact and outcome, `ruleSettled`).
   * Undefined when the rules would ask: start a machine.
   */
  settleByRule(
    agent: PermissionAgent,
    requestId: string,
    request: DecisionRequest,
    policies: PolicyChain,
    sink: FactSink,
  ): { output: PermissionOutput; write: Promise<unknown> } | undefined {
    const decision = decideForAgent(request, policies.own, policies.ancestors ?? []);
    const ruled = ruleSettled({ requestId, agentId: agent.agentId, request, decision });
    if (!ruled) return undefined;
    const write = this.#write(sink, checkedRuling(ruled.fact), agent.agentId, requestId);
    this.#remember(requestId, ruled.output);
    return { output: ruled.output, write };
  }

  /**
   * Throws `limit_exceeded` when `agentId` already has `maxPendingPerAgent` requests pending. Each is held
   * (a machine, its timers, the waiting call, a line in the person's queue) until answered or timed out, so
   * without it one agent asking again and again grows the host and buries other agents' asks. Call it right
   * before `start`, in the same turn, so concurrent asks cannot all pass.
   */
  admit(agentId: string): void {
    const limit = this.#deps.maxPendingPerAgent;
    const held = this.#held.get(agentId) ?? 0;
    if (limit === undefined || held < limit) return;
    throw new LimitExceededError(
      `Agent '${agentId}' already has ${held} permission requests waiting for an answer, the limit ` +
        `domains.permission.maxPendingPerAgent = ${limit}; wait for one to be answered or to time out ` +
        '(permission.pending lists them) before asking again.',
    );
  }

  /** Starts a request's machine; pending (with its deadline timers armed) unless the rules settled it. */
  start(agent: PermissionAgent, requestId: string, o: RunOptions): Pending {
    const actor = createActor(permissionMachine, {
      input: {
        requestId,
        agentId: agent.agentId,
        ancestors: agent.ancestors,
        request: o.request,
        policies: o.policies,
        now: o.now,
        ...(this.#deps.timeoutMs !== undefined ? { timeoutMs: this.#deps.timeoutMs } : {}),
        ...(o.callerDeadline !== undefined ? { callerDeadline: o.callerDeadline } : {}),
        ...(o.resume ? { resume: o.resume } : {}),
      },
    });
    let resolveDone!: () => void;
    const p: Pending = {
      actor,
      requested: undefined,
      sink: o.sink,
      writes: [],
      cancelTimer: () => {},
      done: new Promise<void>((r) => (resolveDone = r)),
    };
    actor.on('*', (fact) => {
      const f = fact as PermissionFact;
      if (f.type === 'permission.requested') p.requested = f.data;
      p.writes.push(this.#write(p.sink, f, agent.agentId, requestId));
    });
    actor.subscribe((snap) => {
      if (snap.status !== 'done') return;
      p.cancelTimer();
      if (this.pending.delete(requestId)) this.#count(agent.agentId, -1);
      this.#remember(requestId, actor.getSnapshot().output!);
      resolveDone();
    });
    actor.start();
    if (actor.getSnapshot().status === 'done') return p;
    if (!p.requested && o.requested) p.requested = restoredRequest(agent, requestId, o.requested, actor);
    this.pending.set(requestId, p);
    this.#count(agent.agentId, 1);
    this.#arm(p, requestId);
    this.#deps.logger.info({ requestId, agentId: agent.agentId, tool: o.request.tool }, 'permission requested');
    return p;
  }

  /** Sends an event to a pending request's machine; its facts go to `sink`. Returns the facts it emitted. */
  send(p: Pending, sink: FactSink, event: Parameters<Actor<typeof permissionMachine>['send']>[0]): PermissionFact[] {
    const seen: PermissionFact[] = [];
    const sub = p.actor.on('*', (f) => seen.push(f as PermissionFact));
    p.sink = sink;
    p.actor.send(event);
    sub.unsubscribe();
    return seen;
  }

  #write(sink: FactSink, fact: PermissionFact, agentId: string, requestId: string): Promise<unknown> {
    const write = sink({ ...fact, agentId: agentId as AgentId });
    // Timeouts, cancels and rule grants are written while nobody awaits them: a failed append (full
    // disk, broker down) is logged here and reported by the fact writer, never an unhandled rejection.
    write.catch((err: unknown) =>
      this.#deps.logger.warn({ err, requestId, event: fact.type }, 'permission fact not appended'),
    );
    return write;
  }

  /** The request's deadline, and the caller's when it said how long it waits. */
  #arm(p: Pending, requestId: string): void {
    const now = this.#deps.now ?? Date.now;
    const { deadline, callerDeadline } = p.actor.getSnapshot().context;
    const cancelDeadline = armDeadline(
      deadline,
      () => void this.send(p, this.#deps.emit, { type: 'permission.timeout', data: { requestId } }),
      now,
    );
    // Once the caller's wait has passed nobody awaits the reply, so the ask is withdrawn rather than granted
    // later to run with nobody waiting.
    const cancelCaller =
      callerDeadline !== undefined && Date.parse(callerDeadline) < Date.parse(deadline)
        ? armDeadline(
            callerDeadline,
            () => void this.send(p, this.#deps.emit, { type: 'permission.caller-gone', data: { requestId } }),
            now,
          )
        : () => {};
    p.cancelTimer = () => {
      cancelDeadline();
      cancelCaller();
    };
  }

  #count(agentId: string, by: 1 | -1): void {
    const held = (this.#held.get(agentId) ?? 0) + by;
    if (held > 0) this.#held.set(agentId, held);
    else this.#held.delete(agentId);
  }

  #remember(requestId: string, out: PermissionOutput): void {
    this.#settled.set(requestId, {
      requestId,
      outcome: out.granted ? 'granted' : 'denied',
      by: out.by,
      alreadyDecided: false,
    });
    if (this.#settled.size > SETTLED_KEPT) this.#settled.delete(this.#settled.keys().next().value!);
  }
}

/** A request restored from the log: as it was folded, with the machine's deadline. */
function restoredRequest(
  agent: PermissionAgent,
  requestId: string,
  c: PermissionAggregateContext,
  actor: Actor<typeof permissionMachine>,
): PermissionRequestedData {
  return {
    requestId: requestId as PermissionRequestedData['requestId'],
    agentId: agent.agentId as AgentId,
    ancestors: agent.ancestors as AgentId[],
    tool: c.tool as ToolName,
    input: c.input ?? '',
    subCommands: c.subCommands ?? [],
    reason: c.reason ?? '',
    options: c.options ?? [],
    deadline: actor.getSnapshot().context.deadline,
    ...(c.callerDeadline !== undefined ? { callerDeadline: c.callerDeadline } : {}),
    ...(c.scope ? { scope: c.scope } : {}),
    ...(c.level ? { level: c.level } : {}),
    ...(c.detail !== undefined ? { detail: c.detail } : {}),
  };
}

/**
 * A rule's grant or denial as a `checkedFact`: `ruleSettled` builds it from typed parts (the gate's request,
 * whose input came through the codec, and a policy checked when it was loaded), so the fact writer does not
 * parse it again on every exec.
 */
function checkedRuling(fact: PermissionFact): PermissionFact {
  if (fact.type === 'permission.granted') return checkedFact(PermissionGranted, fact.data);
  if (fact.type === 'permission.denied') return checkedFact(PermissionDenied, fact.data);
  return fact;
}
