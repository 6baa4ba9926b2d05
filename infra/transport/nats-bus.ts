/**
 * @module
 * The bus over a real NATS connection (@nats-io/transport-node 3.3). A broker
 * outage is waited out, never fatal: the connection reconnects forever with a
 * capped exponential backoff, logs one line per change of state (disconnected,
 * reconnected, closed), and while it is down a request fails at once with a
 * retryable `unavailable` instead of hanging until its timeout.
 */
import { onceAturn } from './turn-flush.ts';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { fastCredsAuthenticator } from './auth/client-auth.ts';
import { isReplyInbox } from './auth/permissions.ts';
import type { Logger } from 'pino';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { NoRespondersError, RequestTimeoutError, type Bus, type BusMsg, type Subscription } from './bus.ts';
import { NatsReplies } from './nats-replies.ts';

export type NatsAuth = { creds: string; inboxPrefix?: string };

export type NatsBusOptions = {
  name?: string;
  auth?: NatsAuth | undefined;
  logger?: Logger | undefined;
  /** First reconnect delay; doubles per failed attempt up to `reconnectMaxMs`. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
};

/** The broker is unreachable right now; the connection keeps trying. */
export class BrokerUnavailableError extends RuntimeError {
  override name = 'BrokerUnavailableError';
  constructor(server: string, since: number) {
    super(
      ErrorCode.Unavailable,
      `the NATS broker at ${server} is unreachable (disconnected ${Math.round((Date.now() - since) / 1000)} s ` +
        'ago); skein reconnects by itself — retry shortly, or check that nats-server is running',
      { retryable: true, reason: `the NATS broker at ${server} is unreachable` },
    );
  }
}

export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  readonly nc: NatsConnection;
  readonly #server: string;
  readonly #replies: NatsReplies;
  readonly #listeners = new Set<(connected: boolean) => void>();
  #disconnectedAt: number | undefined;
  #attempts = 0;

  constructor(nc: NatsConnection, server = nc.getServer(), logger?: Logger) {
    this.nc = nc;
    this.#server = server;
    this.#replies = new NatsReplies(nc);
    void this.#watch(logger);
  }

  /** `auth`: a `.creds` text and, for an agent's creds, its inbox prefix (`auth/permissions.ts`). */
  static async connect(
    url: string,
    nameOrOptions: string | NatsBusOptions = 'skein',
    auth?: NatsAuth,
  ): Promise<NatsBus> {
    const options = typeof nameOrOptions === 'string' ? { name: nameOrOptions } : nameOrOptions;
    const creds = auth ?? options.auth;
    const min = options.reconnectMinMs ?? 100;
    const max = options.reconnectMaxMs ?? 2_000;
    let bus: NatsBus | undefined;
    const nc = await connect({
      // A cluster's URLs, comma-separated: the client fails over between them.
      servers: serverList(url),
      name: options.name ?? 'skein',
      maxReconnectAttempts: -1,
      reconnectTimeWait: min,
      // No Error (a stack capture) made ahead of every request in case it fails: a JetStream append is a
      // request, so that was two per fact (3% of the exec profile). Our errors name the subject instead.
      noAsyncTraces: true,
      // Backoff: 100 ms, 200, 400 … 2 s, with jitter so many clients do not return in lockstep.
      reconnectDelayHandler: () => {
        const attempt = bus ? bus.#attempts++ : 0;
        const delay = Math.min(max, min * 2 ** attempt);
        return delay / 2 + Math.random() * (delay / 2);
      },
      ...(creds ? { authenticator: fastCredsAuthenticator(creds.creds) } : {}),
      ...(creds?.inboxPrefix ? { inboxPrefix: creds.inboxPrefix } : {}),
    }).catch((err: Error) => {
      // nats.js says only "connection refused" or "Authorization Violation": name where, and what to check.
      throw new Error(
        `cannot connect to NATS at ${url}: ${err.message}; check that a nats-server listens there and that ` +
          'the credentials are its own',
        { cause: err },
      );
    });
    // What a turn of the event loop publishes leaves in one socket write (turn-flush.ts).
    if (!onceAturn(nc)) options.logger?.warn('nats.js changed: publishes are written once per microtask, not per turn');
    bus = new NatsBus(nc, url, options.logger);
    return bus;
  }

  /** Whether the connection is up now. */
  get connected(): boolean {
    return this.#disconnectedAt === undefined && !this.nc.isClosed();
  }

  /** Called with `false` when the connection drops and `true` when it is back. */
  onConnectionChange(listener: (connected: boolean) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Throws `BrokerUnavailableError` while the connection is down. */
  assertConnected(): void {
    if (this.#disconnectedAt !== undefined) throw new BrokerUnavailableError(this.#server, this.#disconnectedAt);
  }

  async #watch(logger: Logger | undefined): Promise<void> {
    const log = logger?.child({ actor: 'nats', server: this.#server });
    const set = (connected: boolean) => {
      for (const listener of this.#listeners) listener(connected);
    };
    try {
      for await (const s of this.nc.status()) {
        if (s.type === 'disconnect' && this.#disconnectedAt === undefined) {
          this.#disconnectedAt = Date.now();
          log?.warn('broker connection lost; reconnecting with backoff (commands get unavailable meanwhile)');
          set(false);
        } else if (s.type === 'reconnect' && this.#disconnectedAt !== undefined) {
          log?.info(
            { downMs: Date.now() - this.#disconnectedAt, attempts: this.#attempts },
            'broker connection restored',
          );
          this.#disconnectedAt = undefined;
          this.#attempts = 0;
          set(true);
        }
      }
    } catch (err) {
      log?.error({ err }, 'broker status stream failed');
    }
    void this.nc
      .closed()
      .then((err) => {
        if (err) log?.error({ err }, 'broker connection closed with an error');
      })
      .catch(() => undefined);
  }

  publish(subject: string, data: Uint8Array | string): void {
    this.nc.publish(subject, data);
  }

  subscribe(pattern: string, handler: (msg: BusMsg) => void): Subscription {
    const sub = this.nc.subscribe(pattern, {
      callback: (err, msg) => {
        if (err) return;
        handler({
          subject: msg.subject,
          data: msg.data,
          reply: msg.reply,
          respond: (answer) => {
            // Only into a reply inbox: this connection may publish anywhere, the requester chose the subject.
            if (!msg.reply || !isReplyInbox(msg.reply)) return;
            // A reply to a requester that vanished, or over a dropped connection, is lost, not fatal.
            try {
              msg.respond(answer);
            } catch {
              // The requester times out and may retry with the same command id.
            }
          },
        });
      },
    });
    return { unsubscribe: () => sub.unsubscribe() };
  }

  async request(subject: string, data: Uint8Array | string, options: { timeoutMs: number }): Promise<Uint8Array> {
    this.assertConnected();
    try {
      return await this.#replies.request(subject, data, options.timeoutMs);
    } catch (err) {
      if (err instanceof NoRespondersError || err instanceof RequestTimeoutError) throw err;
      if (this.#disconnectedAt !== undefined) throw new BrokerUnavailableError(this.#server, this.#disconnectedAt);
      // nats.js refuses it before sending, in its own words: name the limit and what to do, as the host would.
      if (/max_payload size exceeded/.test(String((err as Error)?.message))) {
        const bytes = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
        throw new RuntimeError(
          ErrorCode.PayloadTooLarge,
          `the request on '${subject}' is ${bytes} bytes, over the broker's max_payload of ` +
            `${this.nc.info?.max_payload ?? '?'} bytes (limits.maxPayloadBytes); send less data per command`,
          { cause: err },
        );
      }
      throw err;
    }
  }

  async flush(): Promise<void> {
    await this.nc.flush();
  }

  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    // Draining needs the broker; with it gone, give up after a moment and close.
    let timer: NodeJS.Timeout | undefined;
    const giveUp = new Promise<void>((resolve) => (timer = setTimeout(resolve, 2_000)));
    await Promise.race([this.nc.drain().catch(() => undefined), giveUp]);
    clearTimeout(timer);
    if (!this.nc.isClosed()) await this.nc.close().catch(() => undefined);
  }
}

/** `nats://a:4222,nats://b:4222` → one entry per server (a cluster given as one `--nats` value). */
export function serverList(url: string): string[] {
  return url
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u.length > 0);
}
