/**
 * @module
 * The message bus skein's host and clients talk over: NATS core semantics
 * (subjects with `*` and `>`, publish, subscribe, request/reply). Three
 * implementations: a NATS connection (`nats-bus.ts`), the in-process
 * embedded bus (`embedded-bus.ts`) and a socket client of an embedded
 * runtime (`socket-bus.ts`).
 */
export type BusMsg = {
  subject: string;
  data: Uint8Array;
  /**
   * `data` is this message's alone: it spans its ArrayBuffer whole and nobody else (sender, other subscriber,
   * reader) keeps it, so the receiver may move it to a worker thread (detaching it) instead of copying it.
   */
  owned?: boolean | undefined;
  reply?: string | undefined;
  respond(data: Uint8Array | string): void;
};

export type Subscription = { unsubscribe(): void };

export interface Bus {
  readonly kind: 'nats' | 'embedded' | 'socket';
  publish(subject: string, data: Uint8Array | string): void;
  subscribe(pattern: string, handler: (msg: BusMsg) => void): Subscription;
  /** Rejects with `NoRespondersError` at once when nobody listens, `RequestTimeoutError` after `timeoutMs`. */
  request(subject: string, data: Uint8Array | string, options: { timeoutMs: number }): Promise<Uint8Array>;
  /** Resolves once everything published so far has reached the server (a no-op in process). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export class NoRespondersError extends Error {
  override name = 'NoRespondersError';
  constructor(subject: string) {
    super(`no responders on '${subject}': is the runtime running (skein up) and the agent id right?`);
  }
}

export class RequestTimeoutError extends Error {
  override name = 'RequestTimeoutError';
  constructor(subject: string, timeoutMs: number) {
    super(
      `no reply on '${subject}' within ${timeoutMs} ms; a tool call may be waiting for a permission ` +
        `answer (skein approvals) — answer it, or allow more time (skein call --timeout <ms>)`,
    );
  }
}

/** NATS wildcard matching: `*` is one token, `>` one or more trailing tokens. */
export function subjectMatches(pattern: string, subject: string): boolean {
  return tokensMatch(pattern.split('.'), subject.split('.'));
}

/** `subjectMatches` over subjects already split into tokens (the embedded bus splits each pattern once). */
export function tokensMatch(p: readonly string[], s: readonly string[]): boolean {
  for (let i = 0; i < p.length; i++) {
    const token = p[i]!;
    if (token === '>') return s.length > i;
    if (i >= s.length) return false;
    if (token !== '*' && token !== s[i]) return false;
  }
  return p.length === s.length;
}

const encoder = new TextEncoder();
/** The longest delay a Node timer takes (2^31 - 1 ms, ~24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A request's timeout as a timer takes it: a longer one fired at once and wrote a TimeoutOverflowWarning to the
 * process's stderr, each time (a client sets its requests' timeouts: a flood of them wrote as fast as it sent).
 */
export function timerMs(timeoutMs: number): number {
  return Math.min(Math.max(timeoutMs, 1), MAX_TIMER_MS);
}

export function toBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === 'string' ? encoder.encode(data) : data;
}
