/**
 * @module
 * The permission domain: the gate in front of every tool call (the tool and
 * input each CommandDef declares), the permission.decide / policy.set /
 * permission.pending handlers, a copy of each request on
 * `skein.ask.<ancestor>.<requestId>` for every ancestor's driver, agent
 * policy layers restored from `policy.changed` facts, and pending requests
 * resumed (deadline re-armed) after a restart.
 */
import type { Logger } from 'pino';
import {
  ErrorCode,
  RuntimeError,
  subjectFor,
  type AgentId,
  type CommandDef,
  type StoredFact,
} from '../../schemas/index.ts';
import { PermissionConfig } from '../../schemas/permission.ts';
import { Policy } from '../../schemas/policy.ts';
import type { ToolCall, ToolDecl } from '../../schemas/tool.ts';
import {
  permissionAggregateDef,
  type PermissionAggregateContext,
} from '../../machines/permission/permission-aggregate.ts';
import { policyAggregateDef } from '../../machines/permission/policy-aggregate.ts';
import { finishedAgentError, isFinished } from '../../machines/agent/agent.ts';
import type { TerminalForeground } from '../../machines/permission/permission-input.ts';
import { judgeWrite, PromptLines } from '../../machines/permission/prompt-lines.ts';
import { PermissionDeniedError, PermissionService } from '../../actors/permission/policy-service.ts';
import { globalPolicyPath, projectPolicyPath } from '../../actors/permission/policy-files.ts';
import { watchPolicyFiles, type PolicyWatch } from '../../actors/permission/policy-watch.ts';
import type { AgentDirectory } from '../../actors/agent/agent-directory.ts';
import { domainConfig, type LoadedConfig } from '../kernel/config.ts';
import type { Bus } from '../transport/bus.ts';
import {
  dataIf,
  defineDomain,
  type Gate,
  type GateRuling,
  type HandlerContext,
  type Reaction,
} from '../kernel/domain.ts';
import type { Host } from '../kernel/host.ts';
import { forwardDecide, serveRemoteDecide } from './remote-decide.ts';
import { remotePending } from './remote-pending.ts';
import { boundDetail, describeState, type TerminalView } from './ask-detail.ts';

/**
 * What the gate judges for a command: the tool call its CommandDef declares (`tool.call`), or undefined when
 * it runs nothing a policy could judge (open a shell without env, read its screen, resize, close…).
 */
export function toolCallOf(def: CommandDef, data: unknown): ToolCall | undefined {
  // `data` was validated against `def.data` by the codec: it is the data this declaration reads.
  return (def.tool as ToolDecl<unknown> | undefined)?.call?.(data);
}

export type PermissionWiring = Awaited<ReturnType<typeof wirePermission>>;

export async function wirePermission(deps: {
  host: Host;
  bus: Bus;
  directory: AgentDirectory;
  config: LoadedConfig;
  logger: Logger;
  /** What a terminal is running, for input written to it. */
  foreground?: (terminalId: string) => TerminalForeground | undefined;
  /** Which processes read a terminal (each's pid, start time, executable): names can be copied, these cannot. */
  foregroundId?: (terminalId: string) => string | undefined;
  /** The terminal's shell's working directory, for the ask (read only when a person is asked). */
  cwd?: (terminalId: string) => string | undefined;
  /** Whether the terminal is in line (canonical) mode. */
  canonical?: (terminalId: string) => boolean;
  /**
   * Checks that run before the policy, for calls that would be refused anyway (a path outside the workspace, a
   * missing parent directory, another agent's terminal: `terminalId` for an exec or a write): refused at once
   * rather than asking a human about them (an ask about another agent's terminal showed its directory).
   */
  precheck?: (call: ToolCall, agentId: string, terminalId?: string) => Promise<void>;
  /** Named hosts: this host's name, and where an agent lives (answers to asks waiting elsewhere go there). */
  hosts?:
    | {
        name: string;
        ownerOf(agentId: string): string | undefined;
        /** The agents of a subtree whose parent is on another host (their requests wait on their hosts). */
        tops?(agentId: string): string[];
      }
    | undefined;
}) {
  const config = domainConfig(deps.config, 'permission', PermissionConfig);
  const promptLines = new PromptLines();
  const requestSubjects = new Map<string, string>();
  const requestContext = (requestId: string) => {
    const subject = requestSubjects.get(requestId);
    return subject ? (deps.host.state(subject)?.context as PermissionAggregateContext | undefined) : undefined;
  };
  const root = deps.config.rootAgentId as AgentId;
  let policyWatch: PolicyWatch | undefined;
  const service = await PermissionService.create({
    logger: deps.logger.child({ actor: 'permission' }),
    workspace: deps.config.workspace,
    timeoutMs: config.timeoutMs,
    maxPendingPerAgent: config.maxPendingPerAgent,
    ...(config.globalPolicy ? { globalPath: config.globalPolicy } : {}),
    agent: (id) => {
      const view = deps.directory.view(id);
      return view ? { agentId: id, ancestors: deps.directory.ancestors(id), roots: [view.workspace] } : undefined;
    },
    emit: (fact) => deps.host.emit(fact, { agentId: fact.agentId ?? root }),
    aggregate: (requestId) => {
      const subject = requestSubjects.get(requestId);
      const snapshot = subject ? deps.host.state(subject) : undefined;
      return snapshot ? { value: snapshot.value, context: snapshot.context as PermissionAggregateContext } : undefined;
    },
  });

  const gate: Gate = async (ctx) => {
    const me = deps.directory.view(ctx.command.agentId);
    if (me && isFinished(me.status)) throw finishedAgentError(ctx.command.agentId, me.status, 'use tools');
    // The unfinished prompt line is forgotten only when an exec's command line is typed (`clearPromptLine`): an exec
    // refused here, or later, leaves the shell's line as it was (Enter then ran what the gate thought cleared).
    const call = toolCallOf(ctx.def, ctx.command.data);
    if (!call) return undefined;
    // A streamed edit's content does not exist yet: a person is asked at edit.finish, shown it (askDeferred).
    return judge(ctx, call, ctx.def.type === 'edit.begin');
  };

  /** Judges `call` for `ctx`'s command, asking a person when the rules say so (unless `defer`). */
  const judge = async (
    ctx: HandlerContext,
    call: ToolCall,
    defer: boolean,
    signal?: AbortSignal,
  ): Promise<GateRuling | undefined> => {
    const exec = dataIf(ctx, 'terminal.exec');
    await deps.precheck?.(call, ctx.command.agentId, call.terminalId ?? exec?.terminalId);
    const terminal = call.terminalId ? terminalState(call.terminalId) : undefined;
    const reader = terminal?.foreground;
    let foreground = reader;
    let input = call.input;
    let rest: string | undefined;
    if (call.terminalId) {
      const judged = judgeWrite(promptLines.pending(call.terminalId, reader), call.input, reader, terminal!.canonical);
      if (judged.refused) {
        throw new RuntimeError(ErrorCode.PermissionDenied, `terminal.write to '${call.terminalId}': ${judged.refused}`);
      }
      ({ input, foreground, rest } = judged);
      if (rest === undefined) promptLines.clear(call.terminalId);
    }
    // Which processes read the terminal, and the directory an exec's ask showed (it runs only there), when a
    // person is asked (a scan of /proc: only then, not per write).
    let askedReaders: string | undefined;
    let askedDir: string | undefined;
    const { by, resolved } = await service.authorize({
      agentId: ctx.command.agentId,
      tool: call.tool,
      input,
      ...(foreground ? { foreground } : {}),
      ...(call.detail === undefined ? {} : { detail: boundDetail(call.detail, ctx.contentBytes) }),
      // Input to a terminal: the ask names what reads it (the answer holds only while that still does).
      ...(terminal
        ? {
            detail: () => {
              askedReaders = deps.foregroundId?.(call.terminalId!);
              return terminalDetail(call.terminalId!, terminal);
            },
          }
        : {}),
      // A command: where it runs (`rm -rf build` means something else in another directory).
      ...(exec
        ? {
            detail: () => {
              askedDir = deps.cwd?.(exec.terminalId);
              return terminalDetail(exec.terminalId, undefined, askedDir);
            },
          }
        : {}),
      waitMs: ctx.command.waitMs,
      emit: ctx.emit,
      emitRuling: ctx.emitHeld,
      defer,
      signal,
    });
    const judged = resolved === undefined ? {} : { resolvedPath: resolved };
    if (by === 'deferred') return { askDeferred: true, ...judged };
    const answeredBy = by === 'user' || by === 'parent' ? by : undefined;
    // A person answers in seconds or minutes: the program the write was asked about may have exited meanwhile,
    // and its input would reach whatever reads the terminal now (a line approved for python3 run by bash).
    if (call.terminalId && answeredBy) {
      const now = terminalState(call.terminalId);
      const was = describeState(terminal!);
      // The same processes may have switched line mode (a busy REPL back at its prompt): still what was approved.
      if (
        deps.foregroundId?.(call.terminalId) !== askedReaders ||
        describeState({ ...now, canonical: true }) !== describeState({ ...terminal!, canonical: true })
      ) {
        const other = describeState(now) === was ? `other processes (as ${was})` : describeState(now);
        throw new RuntimeError(
          ErrorCode.PermissionDenied,
          `terminal.write to '${call.terminalId}': the ask was answered for input to ${was}, but the terminal ` +
            `now runs ${other}; nothing was written. Look at the terminal again and send the input ` +
            'anew if it is still wanted.',
        );
      }
    }
    // The same for a path: a symlink made (or a directory on the way swapped) while the ask waited would take the
    // write somewhere the person never saw named.
    if (answeredBy && resolved !== undefined) {
      const now = await service.resolvedNow(ctx.command.agentId, call.input);
      if (now !== resolved) {
        throw new RuntimeError(
          ErrorCode.PermissionDenied,
          `${call.tool} of ${JSON.stringify(call.input)}: the ask was answered for ${JSON.stringify(resolved)}, ` +
            `but the path now leads to ${JSON.stringify(now ?? null)}; nothing was done. Check the path and call ` +
            'again if it is still wanted.',
        );
      }
    }
    if (call.terminalId && rest !== undefined) promptLines.settle(call.terminalId, rest, reader);
    const shown = answeredBy && askedDir !== undefined ? { shownDirectory: askedDir } : {};
    return { ...(answeredBy ? { answeredBy } : {}), ...shown, ...judged };
  };
  /** What an ask about a terminal shows: what reads the input (a write), and the shell's directory. */
  const terminalDetail = (terminalId: string, state?: TerminalView, dir = deps.cwd?.(terminalId)) => {
    const lines = [
      ...(state ? [`read by: ${describeState(state)}`] : []),
      ...(dir !== undefined ? [`shell directory: ${dir}`] : []),
    ];
    return lines.length > 0 ? lines.join('\n') : undefined;
  };
  /** What reads a terminal's input: the foreground program (or the prompt) and whether lines are edited. */
  const terminalState = (terminalId: string): TerminalView => ({
    foreground: deps.foreground?.(terminalId),
    canonical: deps.canonical?.(terminalId) ?? true,
  });

  const reactions: Reaction[] = [
    {
      // Where each asked request's aggregate is, to read its state back.
      on: (type) => type.startsWith('permission.'),
      when: 'always',
      foreign: true,
      run: (fact: StoredFact) => {
        const requestId = (fact.data as { requestId?: string }).requestId;
        // Only a request that asked has an aggregate to read back: one settled by the rules alone is not kept
        // (permissionAggregateDef.completeAtBirth), nor is its subject, one per tool call.
        if (requestId && (fact.type === 'permission.requested' || requestSubjects.has(requestId))) {
          requestSubjects.set(requestId, fact.subject);
        }
      },
    },
    {
      // Agent policy layers given at spawn or set later, as they were; and, live, those another host set
      // (a parent there spawning a child placed here with a narrower policy).
      on: ['policy.changed'],
      when: 'always',
      foreign: true,
      run: (fact: StoredFact) => {
        const d = fact.data as { layer: string; agentId?: string; policy: unknown };
        if (d.layer === 'agent' && d.agentId) service.setAgentLayer(d.agentId, Policy.parse(d.policy));
      },
    },
    {
      // Every ancestor's driver sees the request on its own subjects (a copy, not stored).
      on: ['permission.requested'],
      when: 'live',
      run: (fact: StoredFact) => {
        const d = fact.data as { requestId: string; agentId: string };
        for (const ancestor of deps.directory.ancestors(d.agentId)) {
          deps.bus.publish(
            subjectFor({ kind: 'ask', agentId: ancestor, requestId: d.requestId }),
            JSON.stringify(fact),
          );
        }
      },
    },
  ];

  const domain = defineDomain({
    name: 'permission',
    aggregates: [permissionAggregateDef, policyAggregateDef],
    gate,
    reactions,
    // A tool call retried after a restart whose request was denied (at restart: host_restarted) gets that denial.
    retried: (_command, facts) => {
      for (const fact of facts) {
        if (fact.type === 'permission.denied') {
          // Denied while the command ran (a rule, a human, a timeout): that was its answer.
          const d = fact.data as { requestId: string; by: string; reason: string };
          return { error: new PermissionDeniedError(d.reason, { requestId: d.requestId, by: d.by }) };
        }
        if (fact.type !== 'permission.requested') continue;
        const snapshot = deps.host.state(fact.subject);
        const c = snapshot?.context as PermissionAggregateContext | undefined;
        if (snapshot?.value !== 'denied' || !c?.requestId) continue;
        return {
          error: new PermissionDeniedError(c.reason ?? 'denied', { requestId: c.requestId, by: c.by ?? 'cancelled' }),
        };
      }
      return undefined;
    },
    commands: {
      'permission.decide': async (ctx) => {
        const { requestId } = ctx.command.data;
        // A request of an agent on another named host waits there: its host decides.
        const c = deps.hosts ? requestContext(requestId) : undefined;
        const owner = c?.agentId ? deps.hosts!.ownerOf(c.agentId) : undefined;
        const here = (id: string) => service.pending().some((r) => r.requestId === id);
        if (owner && owner !== deps.hosts?.name && !here(requestId)) {
          const { pattern, decision } = ctx.command.data;
          return forwardDecide(deps.bus, owner, {
            requestId,
            decision,
            ...(pattern === undefined ? {} : { pattern }),
            decidedBy: ctx.command.agentId,
            commandId: ctx.command.id,
          });
        }
        return service.decide({ ...ctx.command.data, decidedBy: ctx.command.agentId, emit: ctx.emit });
      },
      'permission.withdraw': async (ctx) =>
        service.withdraw({ requestId: ctx.command.data.requestId, by: ctx.command.agentId, emit: ctx.emit }),
      'policy.set': async (ctx) => {
        const d = ctx.command.data;
        const target = d.agentId ?? ctx.command.agentId;
        if (d.layer === 'agent' && target === ctx.command.agentId && ctx.command.agentId !== root) {
          // The layer a parent gave at spawn is what narrows a sub-agent: only an ancestor may change it.
          throw new RuntimeError(
            ErrorCode.PermissionDenied,
            `agent '${target}' cannot change its own policy layer; its parent ` +
              `or another ancestor can (policy.set with agentId '${target}')`,
          );
        }
        return service.setPolicy({ ...d, setBy: ctx.command.agentId, emit: ctx.emit });
      },
      'permission.pending': async (ctx) => {
        const requests = service.pending(ctx.command.agentId);
        const tops = deps.hosts?.tops?.(ctx.command.agentId) ?? [];
        if (tops.length === 0) return { requests };
        return { requests: await remotePending({ bus: deps.bus, logger: deps.logger }, tops, requests) };
      },
    },
    // Requests still pending in the log are denied (host_restarted) once it is read back: their calls died.
    async restore() {
      const pending: PermissionAggregateContext[] = [];
      for (const subject of new Set(requestSubjects.values())) {
        const snapshot = deps.host.state(subject);
        const c = snapshot?.context as PermissionAggregateContext | undefined;
        // Another named host's request is alive there (its call still waits).
        if (snapshot?.value === 'pending' && c && deps.host.owns(c.agentId ?? '')) pending.push(c);
      }
      await service.restore(pending);
      // From now on an edited policy file takes effect at the next decision (and is recorded), no restart.
      policyWatch = watchPolicyFiles(
        [
          { layer: 'global', path: config.globalPolicy ?? globalPolicyPath() },
          // Read from the root skein pinned: a root moved or swapped for a symlink is not the project.
          { layer: 'project', path: projectPolicyPath(deps.config.workspace), root: deps.config.workspace },
        ],
        (layer, path, read) => service.reloadFile(layer, path, read),
        deps.logger.child({ actor: 'policy-watch' }),
      );
    },
    // A call waiting for a person's answer would hold the drain to its end and get no reply: deny it now.
    async drain() {
      await service.close();
    },
    async stop() {
      policyWatch?.close();
      stopServing?.();
      service.suspend();
    },
  });
  // Answers forwarded by the hosts of ancestors elsewhere, for this host's requests.
  const stopServing = deps.hosts
    ? serveRemoteDecide({ bus: deps.bus, host: deps.host, service, name: deps.hosts.name, logger: deps.logger })
    : undefined;

  return {
    service,
    domain,
    /** Records a spawned agent's own policy layer (given by its parent at spawn). */
    async setSpawnPolicy(setBy: AgentId, agentId: AgentId, policy: Policy, emit: Parameters<Gate>[0]['emit']) {
      await service.setPolicy({ layer: 'agent', agentId, policy, setBy, emit });
    },
    /**
     * The ask the gate deferred (`ctx.askDeferred`), now that the call's content is known: `call` carries it as
     * `detail`; `ctx` is the command that acts (edit.finish). Resolves with who answered; throws when denied, or
     * withdrawn by `signal` (the edit was cancelled while the ask waited).
     */
    async askDeferred(ctx: HandlerContext, call: ToolCall, signal?: AbortSignal) {
      return (await judge(ctx, call, false, signal))?.answeredBy;
    },
    /** Denies the pending requests of a cancelled agent. */
    cancelAgent: (agentId: AgentId, reason: string) =>
      service.cancelAgent(agentId, `agent '${agentId}' was cancelled (${reason})`),
    /** A command line is typed on `terminalId` (Ctrl-E Ctrl-U first): no unfinished line is pending there now. */
    clearPromptLine: (terminalId: string) => promptLines.clear(terminalId),
  };
}
