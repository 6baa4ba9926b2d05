/**
 * @module
 * The in-process bus of embedded mode: NATS subject semantics without a
 * broker. Delivery is asynchronous (next macrotask), like a network hop, so a
 * publisher never re-enters its own subscriber.
 */
import { randomUUID } from 'node:crypto';
import {
  NoRespondersError,
  RequestTimeoutError,
  subjectMatches,
  toBytes,
  type Bus,
  type BusMsg,
  type Subscription,
} from './bus.ts';

type Sub = { pattern: string; handler: (msg: BusMsg) => void };

export class EmbeddedBus implements Bus {
  readonly kind = 'embedded' as const;
  readonly #subs = new Set<Sub>();
  #closed = false;

  publish(subject: string, data: Uint8Array | string, reply?: string): void {
    if (this.#closed) return;
    const bytes = toBytes(data);
    const targets = [...this.#subs].filter((s) => subjectMatches(s.pattern, subject));
    if (targets.length === 0) return;
    setImmediate(() => {
      for (const sub of targets) {
        if (!this.#subs.has(sub)) continue;
        const msg: BusMsg = {
          subject,
          data: bytes,
          reply,
          respond: (answer) => {
            if (reply) this.publish(reply, answer);
          },
        };
        try {
          sub.handler(msg);
        } catch {
          // A subscriber's bug must not stop delivery to the others; the host catches its own.
        }
      }
    });
  }

  /** Whether anyone listens on `subject` (used for fast "no responders"). */
  hasSubscriber(subject: string): boolean {
    for (const sub of this.#subs) if (subjectMatches(sub.pattern, subject)) return true;
    return false;
  }

  subscribe(pattern: string, handler: (msg: BusMsg) => void): Subscription {
    const sub: Sub = { pattern, handler };
    this.#subs.add(sub);
    return { unsubscribe: () => void this.#subs.delete(sub) };
  }

  request(subject: string, data: Uint8Array | string, options: { timeoutMs: number }): Promise<Uint8Array> {
    if (!this.hasSubscriber(subject)) return Promise.reject(new NoRespondersError(subject));
    const inbox = `_INBOX.${randomUUID().replaceAll('-', '')}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        sub.unsubscribe();
        reject(new RequestTimeoutError(subject, options.timeoutMs));
      }, options.timeoutMs);
      const sub = this.subscribe(inbox, (msg) => {
        clearTimeout(timer);
        sub.unsubscribe();
        resolve(msg.data);
      });
      this.publish(subject, data, inbox);
    });
  }

  async flush(): Promise<void> {
    await new Promise((r) => setImmediate(r));
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#subs.clear();
  }
}
