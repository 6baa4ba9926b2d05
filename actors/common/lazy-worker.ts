/**
 * @module
 * One worker thread started on first use, for work that must not hold the host's event loop (big diffs,
 * big JSON). Requests carry an id; the worker answers each with a message holding the same id (messages
 * without one, such as a ready signal, are ignored). A worker that fails or exits with requests pending
 * rejects them and marks itself broken, so callers fall back to doing the work inline: slower, never
 * wrong; with `restarts`, that many deaths are survived first (the next request starts a new worker).
 * `close()` rejects what is pending; the next request starts a new worker.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';

type Answer = Record<string, unknown> & { id: number };
type Pending = { resolve: (m: Answer) => void; reject: (e: Error) => void };

/** All a worker logs: its deaths. A pino Logger is one; a client that logs nothing passes `{ warn() {} }`. */
export type WorkerLog = Pick<Logger, 'warn'>;

export class LazyWorker {
  #worker: Worker | undefined;
  #broken = false;
  #next = 0;
  readonly #pending = new Map<number, Pending>();
  readonly #url: URL;
  readonly #log: WorkerLog;
  /** Deaths left before the worker is given up (then `broken`). */
  #restarts: number;

  constructor(url: URL, log: WorkerLog, options: { restarts?: number } = {}) {
    this.#url = url;
    this.#log = log;
    this.#restarts = options.restarts ?? 0;
  }

  /** True once the worker could not start or died with work pending: do the work inline from then on. */
  get broken(): boolean {
    return this.#broken;
  }

  /** Whether a worker thread is running (for tests). */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  /** Sends `message` (with `transfer` moved, not copied) and resolves with the worker's answer to it. */
  request(message: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<Answer> {
    return new Promise((resolve, reject) => {
      let worker: Worker;
      try {
        worker = this.#start();
      } catch (err) {
        this.#broken = true;
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      const id = this.#next++;
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ ...message, id }, transfer);
    });
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#rejectAll(new Error('worker closed'));
    if (worker) await worker.terminate();
  }

  #rejectAll(err: Error): void {
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(this.#url);
    worker.unref(); // never what keeps a process alive
    worker.on('message', (m: Partial<Answer>) => {
      if (typeof m?.id !== 'number') return;
      const p = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      p?.resolve(m as Answer);
    });
    const fail = (err: Error) => {
      if (this.#worker !== worker) return; // an old worker, closed on purpose
      this.#worker = undefined;
      if (this.#restarts > 0) {
        this.#restarts--;
        this.#log.warn({ err: err.message }, 'worker thread failed; the next work starts a new one');
      } else {
        this.#log.warn({ err: err.message }, 'worker thread failed; the work runs on the main thread');
        this.#broken = true;
      }
      this.#rejectAll(err);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (this.#pending.size > 0) fail(new Error(`worker thread exited with code ${code}`));
      else if (this.#worker === worker) this.#worker = undefined;
    });
    this.#worker = worker;
    return worker;
  }
}
