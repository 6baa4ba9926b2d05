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
  tokensMatch,
  toBytes,
  type Bus,
  type BusMsg,
  type Subscription,
  timerMs,
} from './bus.ts';

/**
 * `order`: subscription order, kept in delivery as NATS keeps it for one connection. `tokens`: a wildcard
 * pattern's, split once. `key`: where it is kept (its pattern, or a wildcard one's `prefixOf`).
 */
type Sub = { pattern: string; tokens: string[]; key: string; handler: (msg: BusMsg) => void; order: number };

/**
 * Wildcard subscriptions are kept under their leading literal tokens, up to PREFIX of them (`skein.out.a` for
 * `skein.out.a.>`, `_INBOX_a` for `_INBOX_a.*`, `skein.cmd` for the host's `skein.cmd.>`), so a publish is matched
 * only against the subscriptions kept under its own first one, two and three tokens (and those that start with a
 * wildcard, which no agent may make): an agent's subscriptions, all inside its own subjects, cost nothing to
 * another agent's publishes (one agent's 65,536 of them made a sibling's exec 19 → 318 ms).
 */
const PREFIX = 3;

function prefixOf(tokens: readonly string[]): string {
  let k = 0;
  while (k < PREFIX && k < tokens.length && tokens[k] !== '*' && tokens[k] !== '>') k++;
  return tokens.slice(0, k).join('.');
}

/** Adds `sub` to `map`'s set at its key; unsubscribing removes it, and the set once empty. */
function keep(map: Map<string, Set<Sub>>, sub: Sub): Subscription {
  const { key } = sub;
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(sub);
  return {
    unsubscribe: () => {
      const current = map.get(key);
      if (!current?.delete(sub)) return;
      if (current.size === 0) map.delete(key);
    },
  };
}

export class EmbeddedBus implements Bus {
  readonly kind = 'embedded' as const;
  /**
   * Subscriptions without wildcards (every request's inbox, most subjects) by subject, so a publish
   * costs O(wildcard subscriptions), not O(all subscriptions): with 1,000 requests in flight, scanning
   * every inbox per message made load quadratic.
   */
  readonly #exact = new Map<string, Set<Sub>>();
  /** Wildcard subscriptions by their leading literal tokens (`prefixOf`); '' for those that start with one. */
  readonly #wild = new Map<string, Set<Sub>>();
  #closed = false;
  #order = 0;
  /** Wildcard subscriptions matched against a subject so far (what a publish costs; tests read it). */
  matchAttempts = 0;

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
    let sources = targets.length > 0 ? 1 : 0;
    const tokens = subject.split('.');
    for (const set of this.#wildFor(tokens)) {
      const before = targets.length;
      this.matchAttempts += set.size;
      for (const sub of set) if (tokensMatch(sub.tokens, tokens)) targets.push(sub);
      if (targets.length > before) sources++;
    }
    return sources > 1 ? targets.sort((a, b) => a.order - b.order) : targets;
  }

  /**
   * The wildcard subscriptions that may match a subject of `tokens`: those kept under its first k tokens, for k
   * up to PREFIX and below its length (a pattern's first wildcard stands for one of its tokens at least).
   */
  #wildFor(tokens: readonly string[]): Array<Set<Sub>> {
    const sets: Array<Set<Sub>> = [];
    const add = (set: Set<Sub> | undefined) => set && sets.push(set);
    add(this.#wild.get(''));
    let key = '';
    for (let k = 1; k <= PREFIX && k < tokens.length; k++) {
      key = k === 1 ? tokens[0]! : `${key}.${tokens[k - 1]}`;
      // An empty first token makes the key '' again: those were added above (a subject `.x` got them twice).
      if (key !== '') add(this.#wild.get(key));
    }
    return sets;
  }

  #has(sub: Sub): boolean {
    return (sub.tokens.length > 0 ? this.#wild : this.#exact).get(sub.key)?.has(sub) === true;
  }

  /** Whether anyone listens on `subject` (used for fast "no responders"). */
  hasSubscriber(subject: string): boolean {
    if ((this.#exact.get(subject)?.size ?? 0) > 0) return true;
    const tokens = subject.split('.');
    for (const set of this.#wildFor(tokens)) for (const sub of set) if (tokensMatch(sub.tokens, tokens)) return true;
    return false;
  }

  subscribe(pattern: string, handler: (msg: BusMsg) => void): Subscription {
    const wild = /(^|\.)(\*|>)(\.|$)/.test(pattern);
    const tokens = wild ? pattern.split('.') : [];
    const sub: Sub = { pattern, tokens, key: wild ? prefixOf(tokens) : pattern, handler, order: this.#order++ };
    return keep(wild ? this.#wild : this.#exact, sub);
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
