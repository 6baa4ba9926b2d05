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
  timerMs,
} from './bus.ts';

/** `order`: subscription order, kept in delivery as NATS keeps it for one connection. */
type Sub = { pattern: string; handler: (msg: BusMsg) => void; order: number };

export class EmbeddedBus implements Bus {
  readonly kind = 'embedded' as const;
  /**
   * Subscriptions without wildcards (every request's inbox, most subjects) by subject, so a publish
   * costs O(wildcard subscriptions), not O(all subscriptions): with 1,000 requests in flight, scanning
   * every inbox per message made load quadratic.
   */
  readonly #exact = new Map<string, Set<Sub>>();
  readonly #wild = new Set<Sub>();
  #closed = false;
  #order = 0;

  /**
   * `handOver`: the caller gives `data` away (it keeps no reference and `data` spans its ArrayBuffer whole); a
   * lone receiver then gets it as its own (`BusMsg.owned`) and may move it to a worker instead of copying it.
   */
  publish(subject: string, data: Uint8Array | string, reply?: string, handOver = false): void {
    if (this.#closed) return;
    const targets = this.#targets(subject);
    if (targets.length === 0) return;
    const bytes = toBytes(data);
    // Shared by several receivers, the bytes are nobody's to move.
    const owned = handOver && targets.length === 1 && spansBuffer(bytes);
    setImmediate(() => {
      for (const sub of targets) {
        if (!this.#has(sub)) continue;
        const msg: BusMsg = {
          subject,
          data: bytes,
          ...(owned ? { owned } : {}),
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

  #targets(subject: string): Sub[] {
    const targets = [...(this.#exact.get(subject) ?? [])];
    const exact = targets.length;
    for (const sub of this.#wild) if (subjectMatches(sub.pattern, subject)) targets.push(sub);
    return exact > 0 && targets.length > exact ? targets.sort((a, b) => a.order - b.order) : targets;
  }

  #has(sub: Sub): boolean {
    return this.#wild.has(sub) || this.#exact.get(sub.pattern)?.has(sub) === true;
  }

  /** Whether anyone listens on `subject` (used for fast "no responders"). */
  hasSubscriber(subject: string): boolean {
    if ((this.#exact.get(subject)?.size ?? 0) > 0) return true;
    for (const sub of this.#wild) if (subjectMatches(sub.pattern, subject)) return true;
    return false;
  }

  subscribe(pattern: string, handler: (msg: BusMsg) => void): Subscription {
    const sub: Sub = { pattern, handler, order: this.#order++ };
    if (/(^|\.)(\*|>)(\.|$)/.test(pattern)) {
      this.#wild.add(sub);
      return { unsubscribe: () => void this.#wild.delete(sub) };
    }
    let set = this.#exact.get(pattern);
    if (!set) this.#exact.set(pattern, (set = new Set()));
    set.add(sub);
    return {
      unsubscribe: () => {
        const current = this.#exact.get(pattern);
        if (!current?.delete(sub)) return;
        if (current.size === 0) this.#exact.delete(pattern);
      },
    };
  }

  /** `handOver`: as for `publish`, the caller gives `data` away. */
  request(
    subject: string,
    data: Uint8Array | string,
    options: { timeoutMs: number; handOver?: boolean },
  ): Promise<Uint8Array> {
    if (!this.hasSubscriber(subject)) return Promise.reject(new NoRespondersError(subject));
    const inbox = `_INBOX.${randomUUID().replaceAll('-', '')}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        sub.unsubscribe();
        reject(new RequestTimeoutError(subject, options.timeoutMs));
      }, timerMs(options.timeoutMs));
      const sub = this.subscribe(inbox, (msg) => {
        clearTimeout(timer);
        sub.unsubscribe();
        resolve(msg.data);
      });
      this.publish(subject, data, inbox, options.handOver);
    });
  }

  async flush(): Promise<void> {
    await new Promise((r) => setImmediate(r));
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#exact.clear();
    this.#wild.clear();
  }
}

/** Whether `b` is the whole of its ArrayBuffer (a view into a bigger one must never be moved). */
const spansBuffer = (b: Uint8Array) => b.byteOffset === 0 && b.byteLength === b.buffer.byteLength;
