/**
 * @module
 * Messages whose answers come back to one inbox subscription, matched by a token: what JetStream appends
 * (jetstream-acks.ts) and requests (nats-replies.ts) share. nats.js made a request object, a deferred and an
 * Error with a stack for every request, even one that succeeded; here a request is a token and a waiter. The
 * inbox is under the connection's inbox prefix (an agent's or host's user may only subscribe below its own). A
 * closed connection fails every waiter with `ClosedConnectionError`; so does a subscription the broker refuses
 * (with its error), and the next send subscribes again.
 */
import {
  ClosedConnectionError,
  createInbox,
  type Msg,
  type MsgHdrs,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';

/** What a waiter needs: the subject it was sent on, and how to fail it. */
export type Waiting = { subject: string; reject: (err: Error) => void };

export class InboxMux<W extends Waiting> {
  readonly #nc: NatsConnection;
  readonly #prefix: string;
  readonly #waiting = new Map<string, W>();
  readonly #answer: (msg: Msg, waiter: W) => void;
  readonly #settled: (waiter: W) => void;
  #sub: Subscription | undefined;
  #next = 0;

  /**
   * `answer`: what a message on the inbox does to its waiter (already taken off); `settled`: called for every
   * waiter taken off, however (a timer to clear).
   */
  constructor(
    nc: NatsConnection,
    answer: (msg: Msg, waiter: W) => void,
    settled: (waiter: W) => void = () => {},
    /** The inbox's own prefix instead of the connection's (`HOST_ACK_INBOX` for the host's appends). */
    prefix?: string,
  ) {
    this.#nc = nc;
    this.#answer = answer;
    this.#settled = settled;
    const own = (nc as unknown as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
    this.#prefix = `${createInbox(prefix ?? own)}.`;
    void nc.closed().then(() => this.failAll(new ClosedConnectionError()));
  }

  get size(): number {
    return this.#waiting.size;
  }

  /**
   * Publishes `payload` on `subject` with a reply to this inbox, `waiter` waiting for it; returns its token. A
   * publish that throws (a closed connection) fails the waiter at once.
   */
  send(subject: string, payload: Uint8Array | string, waiter: W, headers?: MsgHdrs): string {
    this.#sub ??= this.#nc.subscribe(`${this.#prefix}*`, {
      callback: (err, msg) => (err ? this.#refused(err) : this.#onMessage(msg)),
    });
    const token = (this.#next++).toString(36);
    this.#waiting.set(token, waiter);
    try {
      this.#nc.publish(subject, payload, { reply: `${this.#prefix}${token}`, ...(headers ? { headers } : {}) });
    } catch (err) {
      this.settle(token)?.reject(err as Error);
    }
    return token;
  }

  /** Takes a waiter off (answered, timed out, failed); undefined when it was taken already (a late answer). */
  settle(token: string): W | undefined {
    const waiter = this.#waiting.get(token);
    if (!waiter) return undefined;
    this.#waiting.delete(token);
    this.#settled(waiter);
    return waiter;
  }

  /** The waiters, oldest first. */
  entries(): IterableIterator<[string, W]> {
    return this.#waiting.entries();
  }

  failAll(err: Error): void {
    for (const token of [...this.#waiting.keys()]) this.settle(token)?.reject(err);
  }

  close(): void {
    this.failAll(new ClosedConnectionError());
    this.#sub?.unsubscribe();
    this.#sub = undefined;
  }

  #onMessage(msg: Msg): void {
    const waiter = this.settle(msg.subject.slice(this.#prefix.length));
    if (waiter) this.#answer(msg, waiter);
  }

  /** The broker refused the inbox's subscription (or closed it): every waiter fails; the next send subscribes. */
  #refused(err: Error): void {
    this.#sub = undefined;
    this.failAll(err);
  }
}
