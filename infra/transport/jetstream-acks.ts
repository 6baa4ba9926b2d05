/**
 * @module
 * JetStream publishes with their acks matched on one inbox subscription. It is what `js.publish` does, less
 * nats.js's request machinery per append: a request object, a timer, a deferred and an Error (a stack
 * capture) made when every request is cleaned up, even one that succeeded (~5% of an exec's CPU, four
 * appends per exec). The headers, the ack's parse and the errors are those of `js.publish`: a refusal is a
 * `JetStreamApiError` with the server's code, no stream is `JetStreamNotEnabled`, no ack in time a
 * `TimeoutError`, a closed connection a `ClosedConnectionError`.
 */
import { JetStreamApiError, PubHeaders } from '@nats-io/jetstream';
import { jserrors } from '@nats-io/jetstream/internal';
import {
  ClosedConnectionError,
  createInbox,
  headers,
  TimeoutError,
  type Msg,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';

export type PubAck = { stream: string; seq: number; duplicate: boolean };
export type PublishOptions = {
  msgID: string;
  expectLastSubjectSequence?: number | undefined;
  expectLastMsgID?: string | undefined;
  timeoutMs: number;
};

type Waiter = { resolve: (ack: PubAck) => void; reject: (err: Error) => void; deadline: number };

/** How often waiters past their deadline are failed (one timer for all, not one per append). */
const SWEEP_MS = 100;

export class JetStreamAcks {
  readonly #nc: NatsConnection;
  readonly #prefix: string;
  readonly #waiting = new Map<string, Waiter>();
  #sub: Subscription | undefined;
  #next = 0;
  #sweep: NodeJS.Timeout | undefined;

  constructor(nc: NatsConnection) {
    this.#nc = nc;
    // The connection's inbox prefix: an agent's or host's user may only subscribe below it.
    const prefix = (nc as unknown as { options?: { inboxPrefix?: string } }).options?.inboxPrefix;
    this.#prefix = `${createInbox(prefix)}.`;
    void nc.closed().then(() => this.#failAll(new ClosedConnectionError()));
  }

  publish(subject: string, payload: Uint8Array, options: PublishOptions): Promise<PubAck> {
    if (this.#nc.isClosed()) return Promise.reject(new ClosedConnectionError());
    this.#sub ??= this.#nc.subscribe(`${this.#prefix}*`, { callback: (_err, msg) => this.#onAck(msg) });
    const h = headers();
    h.set(PubHeaders.MsgIdHdr, options.msgID);
    if (options.expectLastSubjectSequence !== undefined) {
      h.set(PubHeaders.ExpectedLastSubjectSequenceHdr, `${options.expectLastSubjectSequence}`);
    }
    if (options.expectLastMsgID !== undefined) h.set(PubHeaders.ExpectedLastMsgIdHdr, options.expectLastMsgID);
    const token = (this.#next++).toString(36);
    const acked = new Promise<PubAck>((resolve, reject) => {
      this.#waiting.set(token, { resolve, reject, deadline: Date.now() + options.timeoutMs });
    });
    this.#sweep ??= setInterval(() => this.#expire(), SWEEP_MS);
    try {
      this.#nc.publish(subject, payload, { reply: `${this.#prefix}${token}`, headers: h });
    } catch (err) {
      this.#settle(token)?.reject(err as Error);
    }
    return acked;
  }

  #onAck(msg: Msg): void {
    const waiter = this.#settle(msg.subject.slice(this.#prefix.length));
    if (!waiter) return; // late: its append already failed with a timeout (and is in doubt)
    try {
      if (msg.headers?.code === 503) throw new jserrors.JetStreamNotEnabled('jetstream is not enabled');
      const ack = JSON.parse(new TextDecoder().decode(msg.data)) as Partial<PubAck> & {
        error?: ConstructorParameters<typeof JetStreamApiError>[0];
      };
      if (ack.error) throw new JetStreamApiError(ack.error);
      if (!ack.stream) throw new Error('invalid ack response');
      waiter.resolve({ stream: ack.stream, seq: ack.seq ?? 0, duplicate: ack.duplicate ?? false });
    } catch (err) {
      waiter.reject(err as Error);
    }
  }

  #settle(token: string): Waiter | undefined {
    const waiter = this.#waiting.get(token);
    if (!waiter) return undefined;
    this.#waiting.delete(token);
    if (this.#waiting.size === 0 && this.#sweep) {
      clearInterval(this.#sweep);
      this.#sweep = undefined;
    }
    return waiter;
  }

  #expire(): void {
    const now = Date.now();
    for (const [token, waiter] of this.#waiting) {
      if (waiter.deadline <= now) this.#settle(token)?.reject(new TimeoutError());
    }
  }

  #failAll(err: Error): void {
    for (const token of [...this.#waiting.keys()]) this.#settle(token)?.reject(err);
  }

  close(): void {
    this.#failAll(new ClosedConnectionError());
    this.#sub?.unsubscribe();
    this.#sub = undefined;
  }
}
