/**
 * @module
 * `skein/client`: the typed client SDK. `connect()` finds the runtime that
 * serves a workspace (networked or private broker over NATS, embedded over
 * its unix socket) and returns a client whose calls and subscriptions are
 * typed from the catalogue:
 *
 * ```ts
 * const skein = await connect();
 * const main = skein.agent('main');
 * const { terminalId } = await main.terminal.open({});
 * const run = await main.terminal.exec({ terminalId, command: 'npm test' }); // typed ExecReply
 * main.on('terminal.command.finished', (fact) => fact.data.exitCode);       // typed fact
 * ```
 *
 * A refused command throws `SkeinCallError` carrying the reply's error code.
 */
import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { eventsByType } from '../../schemas/catalog.ts';
import { waitMsFor } from '../../schemas/message.ts';
import { subjectFor, subjectPatterns } from '../../schemas/subjects.ts';
import type { Bus, Subscription } from '../transport/bus.ts';
import { clientAuth } from '../transport/auth/client-auth.ts';
import { requireSocketToken } from '../transport/auth/socket-tokens.ts';
import { NatsBus } from '../transport/nats-bus.ts';
import { decodeFact, decodeReply, encode } from '../transport/codec.ts';
import { carriedFacts } from '../../schemas/carried.ts';
import { SocketBus } from '../transport/socket-bus.ts';
import type { RuntimeInfo } from '../kernel/runtime-info.ts';
import {
  type CallOptions,
  type CommandData,
  type CommandReply,
  type CommandType,
  commandTypeOf,
  type DomainCalls,
  type FactType,
  type TypedFact,
} from './catalog-types.ts';
import { findRuntime } from './find-runtime.ts';

export type {
  CallOptions,
  CommandData,
  CommandReply,
  CommandType,
  FactData,
  FactType,
  TypedFact,
} from './catalog-types.ts';
export { findRuntime, type FoundRuntime } from './find-runtime.ts';

/** A command the runtime refused: `code` is the reply's stable error code (`permission_denied`, `not_found`…). */
export class SkeinCallError extends Error {
  override name = 'SkeinCallError';
  readonly type: string;
  readonly agentId: string;
  readonly code: string;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;
  constructor(
    type: string,
    agentId: string,
    error: { code: string; message: string; retryable: boolean; details?: Record<string, unknown> | undefined },
  ) {
    super(`${type} as ${agentId}: ${error.message}`);
    this.type = type;
    this.agentId = agentId;
    this.code = error.code;
    this.retryable = error.retryable;
    this.details = error.details;
  }
}

export type ConnectOptions = {
  /** A NATS URL (networked mode); default SKEIN_NATS_URL, else the runtime.json found from `cwd`. */
  natsUrl?: string;
  /** The data dir holding runtime.json; default: found by walking up from `cwd`. */
  dataDir?: string;
  /** Where to start looking (default: the current directory). */
  cwd?: string;
  /** Client name shown in NATS monitoring. */
  name?: string;
  /** Makes the id of each command sent without one (default `c-<uuid>`): a program can tell its own calls' facts. */
  commandId?: () => string;
};

export type AgentClient = DomainCalls & {
  readonly agentId: string;
  /** Sends any command by type: the untyped escape hatch has the same typing as the domain methods. */
  call<T extends CommandType>(type: T, data: CommandData<T>, options?: CallOptions): Promise<CommandReply<T>>;
  /**
   * Facts of one type on this agent's subjects (its own and its children's lifecycle), also those stored inside
   * another fact (an edit's or a command's action-log records) as if stored alone; returns an unsubscribe.
   */
  on<T extends FactType>(type: T, handler: (fact: TypedFact<T>) => void): () => void;
};

export type SkeinClient = {
  readonly bus: Bus;
  /** The runtime.json of the runtime connected to, when one was found (not for a bare --nats URL). */
  readonly info: RuntimeInfo | undefined;
  /** The root agent id (from runtime.json; `main` by default). */
  readonly rootAgentId: string;
  agent(agentId: string): AgentClient;
  /** Facts of one type anywhere (every agent), carried ones too (see AgentClient.on); returns an unsubscribe. */
  on<T extends FactType>(type: T, handler: (fact: TypedFact<T>) => void): () => void;
  close(): Promise<void>;
};

/** Connects to the runtime serving the workspace around `cwd` (or the given URL / data dir). */
export async function connect(options: ConnectOptions = {}): Promise<SkeinClient> {
  const natsUrl = options.natsUrl ?? process.env['SKEIN_NATS_URL'];
  const name = options.name ?? 'skein-client';
  let bus: Bus;
  let info: RuntimeInfo | undefined;
  let rootAgentId = 'main';
  if (natsUrl) {
    // A private broker wants credentials: SKEIN_NATS_CREDS, or the operator creds in the given data dir.
    const auth = options.dataDir ? clientAuth(options.dataDir) : clientAuthFromEnv();
    bus = await NatsBus.connect(natsUrl, name, auth);
  } else {
    const found = findRuntime({ ...(options.cwd ? { cwd: options.cwd } : {}), dataDir: options.dataDir });
    info = found.info;
    rootAgentId = found.config.rootAgentId;
    if (!info) {
      throw new Error(
        `no runtime found for ${found.dir} (data dir ${found.config.dataDir}): start one with \`skein up\` ` +
          'in the workspace, or pass natsUrl / dataDir to connect()',
      );
    }
    bus = info.natsUrl
      ? await NatsBus.connect(info.natsUrl, name, clientAuth(found.config.dataDir))
      : await SocketBus.connect(info.socketPath!, { token: requireSocketToken(found.config.dataDir) });
  }
  const commandId = options.commandId ? { commandId: options.commandId } : {};
  return clientOn(bus, { info, rootAgentId: info?.rootAgentId ?? rootAgentId, ...commandId });
}

/** A typed client over a bus you already hold (an in-process runtime's bus, a test's connection). */
export function clientOn(
  bus: Bus,
  options: { info?: RuntimeInfo | undefined; rootAgentId?: string; commandId?: () => string } = {},
): SkeinClient {
  const newId = options.commandId ?? (() => `c-${randomUUID()}`);
  const subscriptions = new Set<Subscription>();
  const subscribe = <T extends FactType>(pattern: string, type: T, handler: (fact: TypedFact<T>) => void) => {
    const prefix = pattern.slice(0, -1); // `skein.evt.>` → `skein.evt.`; `skein.evt.<agent>.>` → `skein.evt.<agent>.`
    const sub = bus.subscribe(pattern, (msg) => {
      let fact: ReturnType<typeof decodeFact>;
      try {
        fact = decodeFact(msg.subject, msg.data);
      } catch {
        return; // Not a fact this client's catalogue knows (a newer runtime): skip it rather than fail.
      }
      if (fact.type === type) return handler({ ...fact, subject: msg.subject } as TypedFact<T>);
      // Facts stored inside this one (an edit's or a command's action-log records) arrive as if stored alone,
      // as the host's reactions hear them, when their own subject is one this subscription covers.
      for (const { seq: _seq, ...carried } of carriedFacts({ ...fact, subject: msg.subject, seq: 0 })) {
        if (carried.type === type && carried.subject.startsWith(prefix)) handler(carried as TypedFact<T>);
      }
    });
    subscriptions.add(sub);
    return () => {
      sub.unsubscribe();
      subscriptions.delete(sub);
    };
  };
  const patternsFor = (type: string, agentId?: string) => {
    // Output facts (terminal chunks) travel on skein.out; everything else on skein.evt.
    const output = eventsByType.get(type)?.stream === 'output';
    if (agentId) return output ? subjectPatterns.agentOutput(agentId) : subjectPatterns.agentEvents(agentId);
    return output ? subjectPatterns.allOutput : subjectPatterns.allEvents;
  };
  const agent = (agentId: string): AgentClient => {
    const send = async (type: string, data: unknown, callOptions: CallOptions = {}) => {
      const subject = subjectFor({ kind: 'cmd', agentId, type });
      const timeoutMs = callOptions.timeoutMs ?? 60_000;
      // waitMs: a tool call whose ask is still open when this call gives up is withdrawn, never run later.
      const envelope = { id: callOptions.id ?? newId(), waitMs: waitMsFor(timeoutMs), data };
      const bytes = await bus.request(subject, encode(envelope), { timeoutMs });
      const reply = decodeReply(subject, bytes);
      if (!reply.ok) throw new SkeinCallError(type, agentId, reply.error);
      const { ok: _ok, ...fields } = reply;
      return fields;
    };
    const base = {
      agentId,
      call: send,
      on: <T extends FactType>(type: T, handler: (fact: TypedFact<T>) => void) =>
        subscribe(patternsFor(type, agentId), type, handler),
    };
    // `agent.terminal.exec(data)` → `terminal.exec`: one proxy per domain, built on first use.
    return new Proxy(base, {
      get(target, prop, receiver) {
        if (typeof prop !== 'string' || prop in target) return Reflect.get(target, prop, receiver);
        return new Proxy(
          {},
          {
            get: (_t, verb) =>
              typeof verb === 'string'
                ? (data: unknown, o?: CallOptions) => send(commandTypeOf(prop, verb), data, o)
                : undefined,
          },
        );
      },
    }) as unknown as AgentClient;
  };
  return {
    bus,
    info: options.info,
    rootAgentId: options.rootAgentId ?? options.info?.rootAgentId ?? 'main',
    agent,
    on: (type, handler) => subscribe(patternsFor(type), type, handler),
    async close() {
      for (const sub of subscriptions) sub.unsubscribe();
      subscriptions.clear();
      await bus.close();
    },
  };
}

/** SKEIN_NATS_CREDS when set (networked mode with credentials); else no credentials. */
function clientAuthFromEnv(): ReturnType<typeof clientAuth> {
  const path = process.env['SKEIN_NATS_CREDS'];
  return path ? clientAuth(dirname(path), process.env) : undefined;
}
