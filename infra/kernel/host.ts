/**
 * @module
 * The host loop: command in → decode and validate → check the agent →
 * permission gate (tool calls) → the domain handler, which drives actors and
 * emits facts → every fact durably appended → reply. The reply is sent only
 * after the facts the command caused are in the log. Bad input gets an error
 * reply naming the field; nothing is appended for it and the host keeps going.
 * The host is built first; domains (`defineDomain`) register with it before
 * `start()`, which reads the log back through their reactions and restores them.
 */
import {
  ErrorCode,
  RuntimeError,
  commandsByType,
  READ_SETTLE_MS,
  parseEventSubject,
  subjectPatterns,
  toErrorInfo,
  type Command,
  type CommandDef,
  type StoredFact,
  type UnstampedFact,
} from '../../schemas/index.ts';
import { Fold } from '../../machines/kernel/projection.ts';
import { CommandMemory, commandKey, type Outcome } from './command-memory.ts';
import { digestOf } from './digest.ts';
import type { BusMsg, Subscription } from '../transport/bus.ts';
import { decodeCommand, encode } from '../transport/codec.ts';
import { FactWriter, type StampOptions } from './fact-writer.ts';
import { KeyedLock } from './keyed-lock.ts';
import type { Logger } from 'pino';
import {
  assertHandled,
  runReactions,
  type AnyDomain,
  type Gate,
  type HandlerContext,
  type Reaction,
} from './domain.ts';
import type { PerAgentSlots } from '../../machines/common/per-agent-slots.ts';
import { agentInFlight } from './agent-in-flight.ts';
import { RecordedBudget } from './recorded-budget.ts';
import { PARSE_CHECKED_DEFAULT, parseUnlessChecked } from './checked.ts';
import { InFlight } from './in-flight.ts';
import { commandContext } from './command-context.ts';
import { LogFollower } from './log-follower.ts';
import {
  assertMayAfterFinish,
  fitReply,
  misdirectedReply,
  RefusalLog,
  tooLargeReply,
  unavailableReply,
} from './host-replies.ts';
import { replyAllowedFor } from '../transport/auth/permissions.ts';
import { clipCounted } from '../../schemas/clip.ts';
import { type ContentBytes, JsonThread, OrderedJsonParse } from '../transport/json-thread.ts';

/** Named hosts: commands whose reply reads state other hosts append (they first read the log up to date). */
const READS_OTHER_HOSTS: ReadonlySet<string> = new Set(['agent.tree', 'agent.get', 'agent.wait', 'review.list']);

export type { Gate, HandlerContext } from './domain.ts';
import type { HostOptions } from './host-options.ts';
export type { HostOptions } from './host-options.ts';

/** A handler as the host stores it: any command's, called with that command's context. */
type StoredHandler = (ctx: HandlerContext) => Promise<unknown>;
type HandlerEntry = { handler: StoredHandler; domain: string; ahead: ((ctx: HandlerContext) => void) | undefined };

export class Host {
  readonly options: HostOptions;
  readonly fold: Fold;
  readonly writer: FactWriter;
  readonly locks = new KeyedLock();
  readonly startedAt = new Date().toISOString();
  readonly #logger: Logger;
  readonly #refusals: RefusalLog;
  readonly #handlers = new Map<string, HandlerEntry>();
  readonly #domains: AnyDomain[] = [];
  readonly #reactions: Reaction[] = [];
  #gate: Gate | undefined;
  #phase: 'registering' | 'restoring' | 'live' = 'registering';
  /** Replies and facts of recent commands: a command id is never run twice. */
  readonly #memory: CommandMemory;
  /** Big payloads are parsed off the event loop; per agent, commands still start in the order they came. */
  readonly #json: JsonThread;
  readonly #parser: OrderedJsonParse;
  readonly #inFlight = new InFlight();
  readonly #perAgent: PerAgentSlots | undefined;
  readonly #budget: RecordedBudget | undefined;
  readonly #agentSubjects = new Map<string, string>();
  #unavailable: string | undefined;
  /** Whether an agent has finished, and how (`refuseFinished`). */
  #finished: ((agentId: string) => string | undefined) | undefined;
  #subscription: Subscription | undefined;
  /** Named hosts: the shared log, followed. */
  #follower: LogFollower | undefined;

  constructor(options: HostOptions) {
    this.options = options;
    this.#logger = options.logger.child({ actor: 'host' });
    this.#refusals = new RefusalLog(this.#logger);
    this.#memory = new CommandMemory(options.commandCacheSize, this.#logger);
    this.#json = new JsonThread(this.#logger, undefined, options.jsonWorker);
    this.#parser = new OrderedJsonParse(this.#json, options.maxPayloadBytes);
    if (options.maxInFlightPerAgent !== undefined) this.#perAgent = agentInFlight(options.maxInFlightPerAgent);
    const maxRecorded = options.maxRecordedBytesPerAgent;
    if (maxRecorded !== undefined) this.#budget = new RecordedBudget(maxRecorded, (id) => this.agentSubject(id));
    this.fold = new Fold(options.aggregates);
    this.writer = new FactWriter({
      log: options.log,
      fold: this.fold,
      logger: this.#logger,
      hostId: options.hostId,
      retries: options.appendRetries,
      retryDelayMs: options.appendRetryDelayMs,
      assertAvailable: options.assertAvailable,
      onRecorded: this.#budget && ((stored) => this.#budget!.charge(stored)),
    });
    this.writer.onFact((fact, foreign) => {
      if (fact.causationId) this.#memory.noteCaused(commandKey(fact.agentId, fact.causationId), fact);
      const parts = parseEventSubject(fact.subject);
      if (parts?.aggregate === 'agent') this.#agentSubjects.set(parts.aggregateId, fact.subject);
      this.#follower?.note(fact, foreign);
      this.#react(fact, foreign);
    });
  }

  /**
   * Adds a domain: its handlers, gate and reactions. Only before `start()`; a command handled twice, a
   * second gate or an aggregate the host does not fold (replay would not see it) is an error.
   */
  register(domain: AnyDomain): void {
    if (this.#phase !== 'registering') {
      throw new Error(`domain '${domain.name}' registered after start(); register every domain first`);
    }
    for (const [type, handler] of Object.entries(domain.commands)) {
      const taken = this.#handlers.get(type);
      if (taken) throw new Error(`command '${type}' has handlers in domains '${taken.domain}' and '${domain.name}'`);
      this.#handlers.set(type, { handler: handler as StoredHandler, domain: domain.name, ahead: domain.ahead });
    }
    for (const def of domain.aggregates ?? []) {
      if (!this.options.aggregates.includes(def)) {
        throw new Error(
          `domain '${domain.name}' declares aggregate '${def.aggregate}' that the host does not fold; ` +
            'add it to the aggregate list (AGGREGATES) so live state and replay agree',
        );
      }
    }
    if (domain.gate) {
      if (this.#gate) throw new Error(`domain '${domain.name}' installs a second permission gate`);
      this.#gate = domain.gate;
    }
    this.#reactions.push(...(domain.reactions ?? []));
    this.#domains.push(domain);
  }

  /**
   * Checks that every command has a handler (the type of `registerDomains` says so too), reads the log back
   * (reactions marked `restore` see each fact), runs `beforeRestore` (which may refuse, before anything is
   * appended), then lets each domain restore. Call `serve()` after.
   */
  async start(beforeRestore?: () => void): Promise<void> {
    assertHandled(this.options.commands, (type) => this.#handlers.has(type), this.#gate !== undefined);
    this.#phase = 'restoring';
    let count = 0;
    const onInvalid = (seq: number, subject: string, err: Error) =>
      this.#logger.warn({ seq, subject, err: err.message }, 'skipped a stored message that is not a valid fact');
    await this.options.log.scan({ onInvalid }, (stored) => {
      this.writer.restore(stored);
      count++;
    });
    this.#logger.info({ facts: count, aggregates: this.fold.size }, 'state restored from the log');
    this.#phase = 'live';
    beforeRestore?.();
    for (const domain of this.#domains) await domain.restore?.();
  }

  /**
   * Named hosts: folds the facts other hosts append, from the end of what this host has read on, so it
   * knows the agents placed on it and their parents' state. Stopped with the host.
   */
  follow(): void {
    this.#follower ??= new LogFollower(this.options.log, this.writer);
  }

  /** Starts taking commands; call once every domain is ready. */
  async serve(): Promise<void> {
    this.#subscription = this.options.bus.subscribe(subjectPatterns.allCommands, (msg) => this.#receive(msg));
    await this.options.bus.flush();
  }

  /** Appends a fact not caused by a command in flight (timers, pty output, startup). */
  emit(fact: UnstampedFact, options: StampOptions): Promise<StoredFact> {
    return this.writer.write(fact, options);
  }

  /** A fold snapshot by subject, e.g. `skein.evt.main.agent.main`. */
  state(subject: string): { value: unknown; context: unknown } | undefined {
    return this.fold.get(subject);
  }

  /** Every aggregate's subject. */
  subjects(): IterableIterator<string> {
    return this.fold.keys();
  }

  /** sha256 of every aggregate state in canonical form; equals a replay's digest. */
  digest(): string {
    return digestOf(this.fold);
  }

  /**
   * Stops taking commands and waits up to `drainMs` for those in flight. Some wait on people or other
   * agents (a permission prompt, agent.wait); their clients get no reply and may retry against the next
   * start, where pending requests resume from the log.
   */
  async stop(drainMs = 3_000): Promise<void> {
    this.#subscription?.unsubscribe();
    this.#follower?.stop();
    for (const domain of [...this.#domains].reverse()) {
      await domain.drain?.().catch((err) => this.#logger.warn({ err, domain: domain.name }, 'domain drain failed'));
    }
    await this.#inFlight.settled(drainMs);
    // Last registered first: a domain stops before those it was built on.
    for (const domain of [...this.#domains].reverse()) {
      await domain.stop?.().catch((err) => this.#logger.warn({ err, domain: domain.name }, 'domain stop failed'));
    }
    this.#domains.length = 0;
    this.#refusals.close();
    await this.#json.close();
  }

  #react(fact: StoredFact, foreign: boolean): void {
    runReactions(this.#reactions, fact, foreign, this.#phase === 'restoring' ? 'restore' : 'live', this.#logger);
  }

  /**
   * From now on, a command of an agent that has finished (`finished` says how, else undefined) is refused unless
   * it only reads or cleans up (`assertMayAfterFinish`); tool calls are the gate's to refuse.
   */
  refuseFinished(finished: (agentId: string) => string | undefined): void {
    this.#finished = finished;
  }

  /** Refuse every command from now on with `unavailable` and `reason` (the audit log was lost). */
  markUnavailable(reason: string): void {
    this.#unavailable ??= reason;
  }

  #receive(msg: BusMsg): void {
    const work = this.#handle(msg).catch((err) =>
      this.#logger.error({ err, subject: msg.subject }, 'command handling crashed'),
    );
    this.#inFlight.add(work);
  }

  async #handle(msg: BusMsg): Promise<void> {
    let reply: Uint8Array;
    const agentId = msg.subject.split('.')[2] ?? '';
    const type = msg.subject.split('.').slice(3).join('.');
    if (msg.reply && !replyAllowedFor(msg.reply, agentId)) {
      // Not run: its answer could not be sent where it was asked for, and who asked is not who the subject says.
      this.#refusals.refused(agentId, msg.subject, misdirectedReply(msg.reply, agentId));
      return;
    }
    await this.#follower?.before(agentId, this.agentExists(agentId));
    // Reads of what other hosts write see whatever they acknowledged before the read was asked.
    if (this.#follower && READS_OTHER_HOSTS.has(type)) await this.#follower.catchUp();
    const route = this.options.route?.(agentId);
    if (route && !route.serve) {
      // Another host owns the agent: it answers, or nobody does and the caller learns why (never from here).
      if (!('unavailable' in route)) return;
      this.#refusals.away(agentId, msg.subject);
      if (msg.reply) msg.respond(unavailableReply(route.unavailable));
      return;
    }
    let taken = false;
    const max = this.options.maxPayloadBytes;
    try {
      if (this.#unavailable) throw new RuntimeError(ErrorCode.Unavailable, this.#unavailable, { retryable: true });
      this.#perAgent?.take(agentId);
      taken = true;
      // Taken first: a payload moved to the JSON thread is empty after (it was within the limit to go there).
      const size = msg.data.byteLength;
      this.#budget?.admit(agentId, type, size);
      // A read sees the facts this host had sent as it arrived (a client may have seen them on the bus), its
      // slot taken while it waits.
      if (commandsByType.get(type)?.reads) await this.writer.settled(READ_SETTLE_MS);
      const acts = commandsByType.get(type)?.tool !== undefined;
      const answer = await this.#parser.parse(agentId, acts, msg.data, msg.owned);
      const parsed = answer && 'value' in answer ? answer : undefined;
      const payload = answer && 'unparsed' in answer ? answer.unparsed : msg.data;
      const { command, def } = decodeCommand(msg.subject, payload, max, parsed, size);
      const key = commandKey(command.agentId, command.id);
      const cached = this.#memory.reply(key);
      if (cached) {
        reply = (await cached).bytes;
      } else if (this.#memory.handled(key)) {
        reply = await this.#memory.rebuild(command, def, key, this.#domains);
      } else {
        const pending = this.#run(command, def, parsed?.content).then((o) => fitReply(o, msg.subject, max));
        this.#memory.remember(key, pending);
        reply = (await pending).bytes;
      }
    } catch (err) {
      this.#refusals.refused(agentId, msg.subject, err);
      reply = encode({ ok: false, error: toErrorInfo(err) });
    }
    if (taken) this.#perAgent?.release(agentId);
    if (reply.byteLength > max) {
      this.#logger.error(
        { subject: clipCounted(msg.subject, 200), bytes: reply.byteLength, max },
        'reply too large; sent an error',
      );
      reply = tooLargeReply(msg.subject, reply.byteLength, max);
    }
    if (msg.reply) msg.respond(reply);
  }

  /** Bytes of facts charged to `agentId`'s subtree (`limits.maxRecordedBytesPerAgent`); 0 for a root. */
  recordedBytes(agentId: string): number {
    return this.#budget?.bytes.used(agentId) ?? 0;
  }

  /** Bytes of the replies kept for retries of their command ids (bounded: `REPLY_BYTES`, command-memory.ts). */
  get replyCacheBytes(): number {
    return this.#memory.replyBytes;
  }

  async #run(command: Command, def: CommandDef, contentBytes?: ContentBytes): Promise<Outcome> {
    const { ctx, emitted, logger } = commandContext(command, def, contentBytes, {
      logger: this.#logger,
      writer: this.writer,
    });
    try {
      if (!this.agentExists(command.agentId)) {
        throw new RuntimeError(
          ErrorCode.UnknownAgent,
          `agent '${command.agentId}' does not exist; spawn it first ` +
            `(agent.spawn on its parent) or check the id with \`skein status\``,
        );
      }
      const finished = this.#finished?.(command.agentId);
      if (finished !== undefined) assertMayAfterFinish(command.agentId, finished, def);
      const handler = this.#handlers.get(def.type);
      if (!handler) throw new RuntimeError(ErrorCode.Internal, `command '${def.type}' has no handler on this host`);
      if (def.tool) {
        // Work the handler needs whatever the decision (DomainParts.ahead) runs beside the gate.
        handler.ahead?.(ctx);
        const ruled = await this.#gate!(ctx);
        if (ruled?.answeredBy) ctx.answeredBy = ruled.answeredBy;
        if (ruled?.askDeferred) ctx.askDeferred = true;
        if (ruled?.resolvedPath !== undefined) ctx.resolvedPath = ruled.resolvedPath;
        if (ruled?.shownDirectory !== undefined) ctx.shownDirectory = ruled.shownDirectory;
      }
      const result = await handler.handler(ctx).finally(() => this.writer.release());
      // The reply waits for every fact the command caused, including ones the handler did not await.
      await Promise.all(emitted);
      const checked = parseUnlessChecked(def.reply, result, PARSE_CHECKED_DEFAULT);
      if (!checked.success) {
        logger().error({ err: checked.message }, 'handler reply does not match its schema');
        throw new RuntimeError(
          ErrorCode.Internal,
          `the reply to '${def.type}' did not match its schema: ${checked.message}`,
        );
      }
      if (this.#logger.isLevelEnabled('debug')) logger().debug({ facts: emitted.length }, 'command handled');
      return { bytes: encode({ ok: true, ...(checked.data as object) }), retryable: false };
    } catch (err) {
      this.writer.release();
      await Promise.allSettled(emitted);
      const error = toErrorInfo(err);
      return { bytes: encode({ ok: false, error }), retryable: error.retryable };
    }
  }

  /** Whether `agentId` lives on this host (always, with one unnamed host). */
  owns(agentId: string): boolean {
    return this.options.owns?.(agentId) ?? true;
  }

  /** Whether an agent aggregate exists (its facts are under its parent's subjects, so search by id). */
  agentExists(agentId: string): boolean {
    return this.agentSubject(agentId) !== undefined;
  }

  /** The subject of an agent's aggregate, `skein.evt.<parent or self>.agent.<agentId>`. */
  agentSubject(agentId: string): string | undefined {
    return this.#agentSubjects.get(agentId);
  }
}
