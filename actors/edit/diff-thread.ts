/**
 * @module
 * Big diffs off the event loop. The diff of a commit is linear (bounded Myers, then a coarse hunk), but for a
 * rewritten 8 MB file its work and garbage blocked the host for 100–280 ms, so pings and every other agent's
 * commands waited. Texts over `OFF_THREAD_CHARS` are diffed by one worker thread, started on first use;
 * smaller ones stay on this thread, where a round trip would cost more than the diff. The worker gives the
 * same report as `cappedDiff` (same code, tested against it). If the worker cannot start or dies, diffs run
 * here again, with a warning: slower, never wrong.
 */
import type { Logger } from 'pino';
import { LazyWorker } from '../common/lazy-worker.ts';
import { cappedDiff, type DiffReport } from './edit-report.ts';

/** Combined length of the two texts above which the diff runs on the worker. */
export const OFF_THREAD_CHARS = 512 * 1024;

export class DiffThread {
  readonly #worker: LazyWorker;
  readonly #log: Logger;
  readonly #threshold: number;

  constructor(log: Logger, threshold = OFF_THREAD_CHARS) {
    this.#log = log.child({ actor: 'diff-thread' });
    // Two levels up is the package root both from actors/edit/ (sources) and from dist/<x>/ (the bundle).
    this.#worker = new LazyWorker(new URL('../../actors/edit/diff-thread-worker.mjs', import.meta.url), this.#log);
    this.#threshold = threshold;
  }

  /** The capped unified diff of `before` → `after`, shown as `display`. */
  diff = async (display: string, before: string, after: string): Promise<DiffReport> => {
    if (this.#worker.broken || before.length + after.length < this.#threshold) {
      return cappedDiff(display, before, after);
    }
    try {
      const answer = await this.#worker.request({ display, before, after });
      if (answer['report']) return answer['report'] as DiffReport;
      throw new Error(String(answer['error'] ?? 'no report'));
    } catch (err) {
      this.#log.warn({ err: (err as Error).message }, 'diff worker failed; diffing on the main thread');
      return cappedDiff(display, before, after);
    }
  };

  /** Whether a worker thread is running (for tests). */
  get running(): boolean {
    return this.#worker.running;
  }

  close(): Promise<void> {
    return this.#worker.close();
  }
}
