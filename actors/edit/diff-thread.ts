/**
 * @module
 * Big diffs off the event loop. The diff of a commit is linear (bounded Myers, then a coarse hunk), but for a
 * rewritten 8 MB file its work and garbage blocked the host for 100–280 ms, so pings and every other agent's
 * commands waited. Texts over `OFF_THREAD_CHARS` are diffed by one worker thread, started on first use;
 * smaller ones stay on this thread, where a round trip would cost more than the diff. The worker gives the
 * same report as `cappedDiff` (same code, tested against it). If the worker cannot start or dies, diffs run
 * here again, with a warning: slower, never wrong.
 */
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { cappedDiff, type DiffReport } from './edit-report.ts';

/** Combined length of the two texts above which the diff runs on the worker. */
export const OFF_THREAD_CHARS = 512 * 1024;

type Pending = { resolve: (r: DiffReport) => void; reject: (e: Error) => void };

export class DiffThread {
  #worker: Worker | undefined;
  #broken = false;
  #next = 0;
  readonly #pending = new Map<number, Pending>();
  readonly #log: Logger;
  readonly #threshold: number;

  constructor(log: Logger, threshold = OFF_THREAD_CHARS) {
    this.#log = log.child({ actor: 'diff-thread' });
    this.#threshold = threshold;
  }

  /** The capped unified diff of `before` → `after`, shown as `display`. */
  diff = (display: string, before: string, after: string): Promise<DiffReport> => {
    if (this.#broken || before.length + after.length < this.#threshold) {
      return Promise.resolve(cappedDiff(display, before, after));
    }
    const worker = this.#start();
    const id = this.#next++;
    return new Promise<DiffReport>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, display, before, after });
    }).catch((err: Error) => {
      this.#log.warn({ err: err.message }, 'diff worker failed; diffing on the main thread');
      return cappedDiff(display, before, after);
    });
  };

  /** Whether a worker thread is running (for tests). */
  get running(): boolean {
    return this.#worker !== undefined;
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker) await worker.terminate();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    // Two levels up is the package root both from actors/edit/ (sources) and from dist/<x>/ (the bundle).
    const worker = new Worker(new URL('../../actors/edit/diff-thread-worker.mjs', import.meta.url));
    worker.unref(); // never what keeps a process alive
    worker.on('message', (m: { id?: number; report?: DiffReport; error?: string }) => {
      if (m.id === undefined) return;
      const p = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (m.report) p?.resolve(m.report);
      else p?.reject(new Error(m.error ?? 'no report'));
    });
    const fail = (err: Error) => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#broken = true;
      for (const p of this.#pending.values()) p.reject(err);
      this.#pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => {
      if (this.#pending.size > 0) fail(new Error(`diff worker exited with code ${code}`));
      if (this.#worker === worker) this.#worker = undefined;
    });
    this.#worker = worker;
    return worker;
  }
}
