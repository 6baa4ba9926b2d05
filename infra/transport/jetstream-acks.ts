/**
 * @module
 * JetStream publishes with their acks matched on one inbox subscription (`InboxMux`). It is what `js.publish`
 * does, less nats.js's request machinery per append: a request object, a timer, a deferred and an Error (a stack
 * capture) made when every request is cleaned up, even one that succeeded (~5% of an exec's CPU, four appends per
 * exec). The headers, the ack's parse and the errors are those of `js.publish`: a refusal is a
 * `JetStreamApiError` with the server's code, no stream is `JetStreamNotEnabled`, no ack in time a
 * `TimeoutError`, a closed connection a `ClosedConnectionError`.
 */
import { JetStreamApiError, PubHeaders } from '@nats-io/jetstream';
import { jserrors } from '@nats-io/jetstream/internal';
import { ClosedConnectionError, headers, TimeoutError, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { HOST_ACK_INBOX } from './auth/permissions.ts';
import { InboxMux } from './inbox-mux.ts';

export type PubAck = { stream: string; seq: number; duplicate: boolean };
export type PublishOptions = {
  msgID: string;
  expectLastSubjectSequence?: number | undefined;
  expectLastMsgID?: string | undefined;
  timeoutMs: number;
};

type Waiter = { subject: string; resolve: (ack: PubAck) => void; reject: (err: Error) => void; deadline: number };

/** How often waiters past their deadline are failed (one timer for all, not one per append). */
const SWEEP_MS = 100;

const decoder = new TextDecoder();

export class JetStreamAcks {
  readonly #nc: NatsConnection;
  readonly #mux: InboxMux<Waiter>;
  #sweep: NodeJS.Timeout | undefined;

  constructor(nc: NatsConnection) {
    this.#nc = nc;
    this.#mux = new InboxMux<Waiter>(
      nc,
      (msg, waiter) => this.#onAck(msg, waiter),
      () => {
        if (this.#mux.size === 0 && this.#sweep) {
          clearInterval(this.#sweep);
          this.#sweep = undefined;
        }
      },
      // Every fact's publish shows its reply subject to whoever watches the fact's subject (the agent): under
      // `_INBOX.` it could name that inbox as its command's reply and settle another append with the host's answer.
      HOST_ACK_INBOX,
    );
  }

  publish(subject: string, payload: Uint8Array, options: PublishOptions): Promise<PubAck> {
    if (this.#nc.isClosed()) return Promise.reject(new ClosedConnectionError());
    const h = headers();
    h.set(PubHeaders.MsgIdHdr, options.msgID);
    if (options.expectLastSubjectSequence !== undefined) {
      h.set(PubHeaders.ExpectedLastSubjectSequenceHdr, `${options.expectLastSubjectSequence}`);
    }
    if (options.expectLastMsgID !== undefined) h.set(PubHeaders.ExpectedLastMsgIdHdr, options.expectLastMsgID);
    const acked = new Promise<PubAck>((resolve, reject) => {
      this.#sweep ??= setInterval(() => this.#expire(), SWEEP_MS);
      this.#mux.send(subject, payload, { subject, resolve, reject, deadline: Date.now() + options.timeoutMs }, h);
    });
    return acked;
  }

  #onAck(msg: Msg, waiter: Waiter): void {
    try {
      if (msg.headers?.code === 503) throw new jserrors.JetStreamNotEnabled('jetstream is not enabled');
      const ack = JSON.parse(decoder.decode(msg.data)) as Partial<PubAck> & {
        error?: ConstructorParameters<typeof JetStreamApiError>[0];
      };
      if (ack.error) throw new JetStreamApiError(ack.error);
      if (!ack.stream) throw new Error('invalid ack response');
      waiter.resolve({ stream: ack.stream, seq: ack.seq ?? 0, duplicate: ack.duplicate ?? false });
    } catch (err) {
      waiter.reject(err as Error);
    }
  }

  #expire(): void {
    const now = Date.now();
    for (const [token, waiter] of [...this.#mux.entries()]) {
      if (waiter.deadline <= now) this.#mux.settle(token)?.reject(new TimeoutError());
    }
  }

  close(): void {
    this.#mux.close();
  }
}
