/**
 * @module
 * Wires permission decisions into the host: the gate in front of every tool
 * call (command → tool and input), the permission.decide / policy.set /
 * permission.pending handlers, a copy of each request on
 * `skein.ask.<ancestor>.<requestId>` for every ancestor's driver, agent
 * policy layers restored from `policy.changed` facts, and pending requests
 * resumed (deadline re-armed) after a restart.
 */
import {
  ErrorCode,
  RuntimeError,
  subjectFor,
  type AgentId,
  type CommandDef,
  type StoredFact,
} from '../../schemas/index.ts';
import { PermissionConfig } from '../../schemas/permission.ts';
import { Policy, type PolicyTool } from '../../schemas/policy.ts';
import type { PermissionAggregateContext } from '../../machines/permission/permission-aggregate.ts';
import { isFinished } from '../../machines/agent/agent.ts';
import { typedLines, type TerminalForeground } from '../../machines/permission/permission-input.ts';
import { PermissionService } from '../../actors/permission/policy-service.ts';
import type { AgentService } from '../../actors/agent/agent.ts';
import { domainConfig, type LoadedConfig } from '../kernel/config.ts';
import type { Bus } from '../transport/bus.ts';
import type { CommandHandler, Gate, Host } from '../kernel/host.ts';
import type { Logger } from '../kernel/log.ts';

export type ToolCall = { tool: PolicyTool; input: string; terminalId?: string };

/**
 * What a command asks the policy about, or undefined when it runs nothing a
 * policy could judge (open a shell, read its screen, resize, close…).
 */
export function toolCallOf(def: CommandDef, data: Record<string, any>): ToolCall | undefined {
  switch (def.type) {
    case 'terminal.open': {
      // The environment a shell starts with is like commands it runs first: PATH=/tmp/evil would make an
      // allowed `git status` run anything. The policy judges it as the `export` lines it amounts to.
      const env = Object.entries((data['env'] ?? {}) as Record<string, unknown>);
      if (env.length === 0) return undefined;
      return { tool: 'terminal', input: env.map(([k, v]) => `export ${k}=${shellQuote(String(v))}`).join('\n') };
    }
    case 'terminal.exec':
      return { tool: 'terminal', input: String(data['command']) };
    case 'terminal.write':
      return { tool: 'terminal_input', input: String(data['data']), terminalId: String(data['terminalId']) };
    case 'file.read':
      return { tool: 'read_file', input: String(data['path']) };
    case 'file.edit':
      return { tool: 'edit_file', input: String(data['path']) };
    case 'file.write':
      return { tool: 'write_file', input: String(data['path']) };
    case 'edit.begin':
      return { tool: data['mode'] === 'write' ? 'write_file' : 'edit_file', input: String(data['path']) };
    case 'agent.spawn': {
      const worker = data['worker'] as { command: string; args?: string[]; env?: Record<string, string> } | undefined;
      // A worker is a program the runtime will run: the policy sees its command line, environment first.
      const env = Object.entries(worker?.env ?? {}).map(([k, v]) => `${k}=${shellQuote(v)}`);
      return {
        tool: 'spawn_agent',
        input: worker ? [...env, worker.command, ...(worker.args ?? [])].join(' ') : String(data['label']),
      };
    }
    default:
      return undefined;
  }
}

function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export type PermissionWiring = {
  service: PermissionService;
  gate: Gate;
  handlers: Record<string, CommandHandler>;
  beforeRestore(): void;
  afterRestore(): Promise<void>;
  stop(): Promise<void>;
};

export async function wirePermission(deps: {
  host: () => Host;
  bus: Bus;
  agents: AgentService;
  config: LoadedConfig;
  logger: Logger;
  /** What a terminal is running, for input written to it. */
  foreground?: (terminalId: string) => TerminalForeground | undefined;
  /** Whether the terminal is in line (canonical) mode. */
  canonical?: (terminalId: string) => boolean;
  /**
   * Checks that run before the policy, for calls that would be refused anyway
   * (a path outside the workspace, a missing parent directory): refused at
   * once rather than asking a human about them.
   */
  precheck?: (call: ToolCall, agentId: string) => Promise<void>;
}): Promise<PermissionWiring> {
  const config = domainConfig(deps.config, 'permission', PermissionConfig);
  /** Per terminal: the unfinished line typed at the shell prompt by earlier writes. */
  const promptLines = new Map<string, string>();
  const requestSubjects = new Map<string, string>();
  const root = deps.config.rootAgentId as AgentId;
  const service = await PermissionService.create({
    logger: deps.logger.child({ actor: 'permission' }),
    workspace: deps.config.workspace,
    timeoutMs: config.timeoutMs,
    ...(config.globalPolicy ? { globalPath: config.globalPolicy } : {}),
    agent: (id) => {
      const view = deps.agents.view(id);
      return view ? { agentId: id, ancestors: deps.agents.ancestors(id), roots: [view.workspace] } : undefined;
    },
    emit: (fact) => deps.host().emit(fact, { agentId: fact.agentId ?? root }),
    aggregate: (requestId) => {
      const subject = requestSubjects.get(requestId);
      const snapshot = subject ? deps.host().state(subject) : undefined;
      return snapshot ? { value: snapshot.value, context: snapshot.context as PermissionAggregateContext } : undefined;
    },
  });

  const gate: Gate = async (ctx) => {
    const me = deps.agents.view(ctx.command.agentId);
    if (me && isFinished(me.status)) {
      throw new RuntimeError(
        ErrorCode.PermissionDenied,
        `agent '${ctx.command.agentId}' is ${me.status}; a finished agent can no longer use tools`,
      );
    }
    // An exec clears the prompt line before it types its command (commandInput): nothing typed earlier is pending.
    if (ctx.def.type === 'terminal.exec')
      promptLines.delete(String((ctx.command.data as { terminalId: string }).terminalId));
    const call = toolCallOf(ctx.def, ctx.command.data as Record<string, any>);
    if (!call) return;
    await deps.precheck?.(call, ctx.command.agentId);
    let foreground = call.terminalId ? deps.foreground?.(call.terminalId) : undefined;
    let input = call.input;
    let rest: string | undefined;
    if (call.terminalId && foreground?.kind === 'prompt') {
      // At the prompt, what runs is the line as typed over several writes, not this write alone.
      const typed = typedLines(promptLines.get(call.terminalId) ?? '', call.input);
      // Keys the line model cannot follow exactly (ESC sequences, tab, Ctrl-W, Ctrl-O…) act as they arrive:
      // refused before any byte reaches the shell, so the carried line stays as it was.
      if (typed.refused) {
        throw new RuntimeError(ErrorCode.PermissionDenied, `terminal.write to '${call.terminalId}': ${typed.refused}`);
      }
      rest = typed.rest;
      input = typed.completed.length > 0 ? `${typed.completed.join('\n')}\n${typed.rest}` : call.input;
    } else if (call.terminalId) {
      promptLines.delete(call.terminalId);
      // A program that reads lines (or reads nothing, like `ls -R /` still running) leaves typed-ahead lines
      // to the shell once it exits: judge them as shell input. Programs reading keys (vim, less) keep their grant.
      if (foreground?.kind === 'program' && /[\r\n]/.test(call.input) && (deps.canonical?.(call.terminalId) ?? true)) {
        foreground = { kind: 'program', name: 'bash' };
      }
    }
    await service.authorize({
      agentId: ctx.command.agentId,
      tool: call.tool,
      input,
      ...(foreground ? { foreground } : {}),
      emit: ctx.emit,
    });
    if (call.terminalId && rest !== undefined) promptLines.set(call.terminalId, rest);
  };

  let restoring = false;
  const onFact = (fact: StoredFact) => {
    if (fact.type.startsWith('permission.')) {
      const requestId = (fact.data as { requestId?: string }).requestId;
      if (requestId) requestSubjects.set(requestId, fact.subject);
    }
    if (restoring && fact.type === 'policy.changed') {
      const d = fact.data as { layer: string; agentId?: string; policy: unknown };
      if (d.layer === 'agent' && d.agentId) service.setAgentLayer(d.agentId, Policy.parse(d.policy));
    }
    if (!restoring && fact.type === 'permission.requested') {
      // Every ancestor's driver sees the request on its own subjects (a copy, not stored).
      const d = fact.data as { requestId: string; agentId: string };
      for (const ancestor of deps.agents.ancestors(d.agentId)) {
        deps.bus.publish(subjectFor({ kind: 'ask', agentId: ancestor, requestId: d.requestId }), JSON.stringify(fact));
      }
    }
  };

  return {
    service,
    gate,
    handlers: {
      'permission.decide': async (ctx) => {
        const d = ctx.command.data as {
          requestId: string;
          decision: 'allow_once' | 'allow_always' | 'deny_once' | 'deny_always';
          pattern?: string;
        };
        return { ...(await service.decide({ ...d, decidedBy: ctx.command.agentId, emit: ctx.emit })) };
      },
      'policy.set': async (ctx) => {
        const d = ctx.command.data as { layer: 'global' | 'project' | 'agent'; agentId?: string; policy: Policy };
        const target = d.agentId ?? ctx.command.agentId;
        if (d.layer === 'agent' && target === ctx.command.agentId && ctx.command.agentId !== root) {
          // The layer a parent gave at spawn is what narrows a sub-agent: only an ancestor may change it.
          throw new RuntimeError(
            ErrorCode.PermissionDenied,
            `agent '${target}' cannot change its own policy layer; its parent ` +
              `or another ancestor can (policy.set with agentId '${target}')`,
          );
        }
        return { ...(await service.setPolicy({ ...d, setBy: ctx.command.agentId, emit: ctx.emit })) };
      },
      'permission.pending': async (ctx) => ({ requests: service.pending(ctx.command.agentId) }),
    },
    beforeRestore() {
      restoring = true;
      deps.host().writer.onFact(onFact);
    },
    async afterRestore() {
      restoring = false;
      const pending: PermissionAggregateContext[] = [];
      for (const subject of new Set(requestSubjects.values())) {
        const snapshot = deps.host().state(subject);
        if (snapshot?.value === 'pending') pending.push(snapshot.context as PermissionAggregateContext);
      }
      await service.restore(pending);
    },
    async stop() {
      service.suspend();
    },
  };
}
