/**
 * @module
 * `defineDomain`: how a domain (terminal, edit, permission, review, agent,
 * runtime) plugs into the host. A domain declares its command handlers,
 * typed from their CommandDefs (data and reply inferred, as Hono types
 * routes), its aggregates, its reactions to facts and its lifecycle. The host
 * is built first; domains are built with what they need (the host, each
 * other's services) and registered with `registerDomains`, whose type says
 * that every command of the catalogue has exactly one handler: a command
 * without one does not compile (and `Host.start` refuses it too).
 */
import type { Logger } from 'pino';
import type {
  CatalogCommand,
  CommandDef,
  Command,
  CommandOf,
  CommandType,
  DataOf,
  ReplyInputOf,
  RuntimeError,
  StoredFact,
  UnstampedFact,
} from '../../schemas/index.ts';
import type { AggregateDef } from '../../machines/kernel/projection.ts';
import type { ContentBytes } from '../transport/json-thread.ts';

/** What the host hands a handler for one command. */
export type HandlerContext<TDef extends CatalogCommand = CatalogCommand> = {
  command: Command<DataOf<TDef>>;
  def: TDef;
  logger: Logger;
  /**
   * The command's `data.content` as UTF-8 bytes and their sha256, when its payload was big enough to be parsed
   * off the event loop (infra/transport/json-thread.ts): a file.write writes them instead of encoding it again.
   */
  contentBytes?: ContentBytes;
  /** Appends a fact caused by this command; resolves once durable. Defaults to the command's agent subjects. */
  emit(fact: UnstampedFact): Promise<StoredFact>;
  /**
   * `emit`, the append held back until the next fact anyone appends, or the handler settles: a rule's grant
   * goes out with the tool's first fact, in one socket write, after the tool started.
   */
  emitHeld(fact: UnstampedFact): Promise<StoredFact>;
  /**
   * Set by the gate when a person answered this call's ask (the user, or the agent's parent): what they were
   * shown is all the call may do (a fuzzy edit must replace only lines the ask showed). Unset when the rules
   * alone decided.
   */
  answeredBy?: Answerer;
  /**
   * Set by the gate when the rules would ask a person about a call whose content does not exist yet (a streamed
   * edit's `edit.begin`): nothing was asked; the handler asks once the content is known, before acting.
   */
  askDeferred?: boolean;
  /**
   * A file tool's path as the gate resolved and judged it: the handler acts on that file or on none (a
   * directory on the way swapped for a link after the judgment would take it elsewhere, e.g. into .skein/).
   */
  resolvedPath?: string;
  /**
   * Set by the gate when a person answered an exec's ask: the shell directory the ask showed. The command runs
   * only in that directory (another command of the terminal may `cd` elsewhere before it starts).
   */
  shownDirectory?: string;
};

/** Who answered an ask that let a tool call run. */
export type Answerer = 'user' | 'parent';

/**
 * A command's handler: its data typed from the CommandDef; its reply is what the reply schema accepts (the
 * host parses it before it is sent, so ids come back branded and defaults filled in).
 */
export type Handler<TDef extends CatalogCommand> = (ctx: HandlerContext<TDef>) => Promise<ReplyInputOf<TDef>>;

/** The handlers of some commands, each typed by its own CommandDef. */
export type Handlers<TTypes extends CommandType> = { [T in TTypes]: Handler<CommandOf<T>> };

/**
 * The command's data when it is a `type` command, else undefined: narrows a context the gate sees for every
 * command (where TypeScript cannot correlate `def.type` with `command.data`).
 */
export function dataIf<T extends CommandType>(ctx: HandlerContext, type: T): DataOf<CommandOf<T>> | undefined {
  // The codec validated data against this very CommandDef, so the type names the data's shape.
  return ctx.def.type === type ? (ctx.command.data as DataOf<CommandOf<T>>) : undefined;
}

/** A reply rebuilt from the log: the reply fields (parsed by the command's reply schema) or the error it had. */
export type RetriedReply = { reply: object } | { error: RuntimeError };

/** What the gate found besides "may run": who answered, or that the ask is left to the handler. */
export type GateRuling = {
  answeredBy?: Answerer | undefined;
  askDeferred?: boolean | undefined;
  /** A file tool's path as the gate resolved and judged it (symlinks followed). */
  resolvedPath?: string | undefined;
  /** An exec's shell directory as its ask showed it, when a person answered (`HandlerContext.shownDirectory`). */
  shownDirectory?: string | undefined;
};

/**
 * Decides whether a tool call may run; throws a RuntimeError (permission_denied) when not. Resolves with who
 * answered when a person was asked (the host sets `ctx.answeredBy`), or that the ask was deferred.
 */
export type Gate = (ctx: HandlerContext) => Promise<GateRuling | undefined>;

/**
 * A reaction to facts: `restore` runs for facts read back from the log at start, `live` for facts appended
 * while serving, `always` for both. Reactions run after the fact is folded, in registration order; a
 * reaction's failure is logged, never the writer's.
 */
export type Reaction = {
  on: readonly string[] | ((type: string) => boolean);
  when: 'restore' | 'live' | 'always';
  /**
   * Named hosts: whether the reaction also sees facts other hosts appended (followed from the log); default
   * no, since most reactions act on this host's own terminals, workers and asks. `only`: just those.
   */
  foreign?: boolean | 'only' | undefined;
  run(fact: StoredFact): void | Promise<void>;
};

/** What every domain may declare besides its handlers. */
export type DomainParts = {
  name: string;
  aggregates?: readonly AggregateDef[] | undefined;
  /** The permission gate in front of every tool call (one domain provides it). */
  gate?: Gate | undefined;
  /**
   * Called for each of this domain's tool calls right before the gate: starts work its handler needs whatever
   * the decision, to run beside it (an exec's workspace refresh). Nothing to undo when the gate refuses.
   */
  ahead?: ((ctx: HandlerContext) => void) | undefined;
  reactions?: readonly Reaction[] | undefined;
  /** After the log is read back, before commands are served: resume timers, pending work. */
  restore?: (() => Promise<void>) | undefined;
  /**
   * A command id sent again after its reply was lost (a restart): the reply rebuilt from the facts that
   * command caused, or a thrown RuntimeError (the answer it had), or undefined when this domain cannot tell.
   */
  retried?:
    | ((command: Command, facts: readonly StoredFact[]) => RetriedReply | undefined | Promise<RetriedReply | undefined>)
    | undefined;
  /**
   * The host stopped taking commands and waits for those in flight: end the waits only this domain can end
   * (a tool call waiting for a person's answer), so that their callers get a reply before the host goes.
   */
  drain?: (() => Promise<void>) | undefined;
  /** Once the host stops taking commands: release what the domain holds (PTYs, timers). */
  stop?: (() => Promise<void>) | undefined;
};

export type Domain<TTypes extends CommandType = never> = DomainParts & { commands: Handlers<TTypes> };

/** A domain whose command types are known only as "some of the catalogue" (what the host stores). */
export type AnyDomain = DomainParts & { commands: Partial<Record<CommandType, unknown>> };

/** Declares a domain; its command types are inferred from the handler keys. */
export function defineDomain<const TTypes extends CommandType = never>(domain: Domain<TTypes>): Domain<TTypes> {
  return domain;
}

type TypesOf<D> = D extends { commands: infer C } ? keyof C & CommandType : never;

/** The catalogue's commands no domain of `Ds` handles. */
export type MissingHandlers<Ds extends readonly AnyDomain[]> = Exclude<CommandType, TypesOf<Ds[number]>>;

/**
 * `Ds` when together they handle every command of the catalogue; otherwise a type naming the ones missing,
 * so `registerDomains(host, [...])` does not compile.
 */
export type Complete<Ds extends readonly AnyDomain[]> = [MissingHandlers<Ds>] extends [never]
  ? Ds
  : { error: 'these commands have no handler'; missing: MissingHandlers<Ds> };

/** Registers domains with the host, in order; the type requires every catalogue command to be handled. */
export function registerDomains<const Ds extends readonly AnyDomain[]>(
  host: { register(domain: AnyDomain): void },
  domains: Ds & Complete<Ds>,
): void {
  for (const domain of domains) host.register(domain);
}

/**
 * Throws unless every command of `commands` has a handler and every tool call a gate to pass: checked when the
 * host starts (`registerDomains`' type says so at compile time for the catalogue).
 */
export function assertHandled(
  commands: readonly CommandDef[],
  handled: (type: string) => boolean,
  gated: boolean,
): void {
  for (const def of commands) {
    if (!handled(def.type)) throw new Error(`command '${def.type}' has no handler`);
    if (def.tool && !gated) {
      throw new Error(
        `command '${def.type}' is a '${def.tool.tools.join('/')}' tool call but no permission gate is installed`,
      );
    }
  }
}

/**
 * Runs the reactions that hear `fact`: in this phase (`restore`: read back at start, `live`), for this host's
 * facts or (named hosts) another's, of a type they listen to. A reaction that throws or rejects is logged;
 * the fact stays stored and the next reactions still run.
 */
export function runReactions(
  reactions: readonly Reaction[],
  fact: StoredFact,
  foreign: boolean,
  phase: 'restore' | 'live',
  logger: Logger,
): void {
  for (const reaction of reactions) {
    if (reaction.when !== 'always' && reaction.when !== phase) continue;
    if (foreign ? !reaction.foreign : reaction.foreign === 'only') continue;
    if (typeof reaction.on === 'function' ? !reaction.on(fact.type) : !reaction.on.includes(fact.type)) continue;
    try {
      const done = reaction.run(fact);
      if (done) done.catch((err) => logger.warn({ err, event: fact.type }, 'a reaction to a fact failed'));
    } catch (err) {
      logger.warn({ err, event: fact.type }, 'a reaction to a fact failed');
    }
  }
}
