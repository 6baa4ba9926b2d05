/**
 * @module
 * Big command payloads parsed off the event loop. Decoding and `JSON.parse` of a 10 MB `file.write` took
 * tens of milliseconds on the host's thread, in one piece, so every other agent's commands and pings
 * waited. Payloads over `OFF_THREAD_BYTES` are parsed by one worker thread, started on first use; the
 * parsed value comes back by structured clone (a copy, far cheaper than a parse). Smaller payloads, a
 * payload the worker cannot parse (the host then parses it itself and throws the error that names it) and
 * a worker that cannot start or dies all give `undefined`: the caller parses on its own thread, slower,
 * never different.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';

/** Payload size above which the parse runs on the worker. */
export const OFF_THREAD_BYTES = 1024 * 1024;

type Pending = (parsed: { value: unknown } | undefined) => void;

export class JsonThread {
  #worker: Worker | undefined;
  #broken = false;
  #next = 0;
  readonly #pending = new Map<number, Pending>();
  readonly #log: Logger;
  readonly #threshold: number;

  constructor(log: Logger, threshold = OFF_THREAD_BYTES) {
    this.#log = log.child({ actor: 'json-thread' });
    this.#threshold = threshold;
  }

  /** Whether `parse` would send a payload of this size to the worker. */
  offThread(bytes: number): boolean {
    return !this.#broken && bytes >= this.#threshold;
  }

  /** The parsed payload, or `undefined` when the caller must parse it (see the module doc). */
  parse(payload: Uint8Array): Promise<{ value: unknown } | undefined> {
    if (!this.offThread(payload.byteLength)) return Promise.resolve(undefined);
    let worker: Worker;
    try {
      worker = this.#start();
    } catch (err) {
      this.#broken = true;
      this.#log.warn({ err }, 'JSON worker did not start; parsing on the main thread');
      return Promise.resolve(undefined);
    }
    const id = this.#next++;
    // A copy of just this payload's bytes (a view may share a larger buffer), moved, not cloned again.
    const bytes = payload.slice();
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      worker.postMessage({ id, bytes }, [bytes.buffer]);
    });
  }

  /** Whether a worker thread is running (for tests). */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker) await worker.terminate();
    this.#settleAll();
  }

  #settleAll(): void {
    for (const resolve of this.#pending.values()) resolve(undefined);
    this.#pending.clear();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    // Two levels up is the package root both from infra/transport/ (sources) and from dist/<x>/ (the bundle).
    const worker = new Worker(new URL('../../infra/transport/json-thread-worker.mjs', import.meta.url));
    worker.unref(); // never what keeps a process alive
    worker.on('message', (m: { id: number; value?: unknown; failed?: boolean }) => {
      const resolve = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      resolve?.(m.failed ? undefined : { value: m.value });
    });
    const fail = (err: Error) => {
      if (this.#worker !== worker) return; // an old worker, closed on purpose
      this.#log.warn({ err: err.message }, 'JSON worker failed; parsing on the main thread');
      this.#worker = undefined;
      this.#broken = true;
      this.#settleAll();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (this.#pending.size > 0) fail(new Error(`JSON worker exited with code ${code}`));
      else if (this.#worker === worker) this.#worker = undefined;
    });
    this.#worker = worker;
    return worker;
  }
}
