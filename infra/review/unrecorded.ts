/**
 * @module
 * Changes on disk whose action-log record could not be appended (a full disk,
 * the broker down): an edit's, and a shell command's. Such a file would differ
 * from the log and be missing from review, so it could not be rejected. The
 * change is kept here, by path, and recorded again with backoff until the log
 * takes it; then it shows in review. Each wait and each recovery is logged.
 *
 * A path's changes are recorded in the order they were made, before anything
 * else of that path: every new record, and every review, of a path first
 * `flush`es what waits for it, under the path's lock (which every record is
 * made under), and fails if the log still refuses it. A later change recorded
 * first would start from a disk holding the waiting one: the planner would fold
 * that into the log's base as made outside, and a reject would leave it (a
 * review's probe: a canary left on disk after reject-all). A path whose record
 * keeps failing holds up only that path.
 */
import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { ReviewWrite } from '../../actors/review/mark-rebase.ts';
import { ErrorCode, RuntimeError, reasonOf } from '../../schemas/index.ts';

export type PendingRecord = {
  path: string;
  /** Whose change it is (a review flushes only the changes its log would hold). */
  agentId: string;
  /** Records the change; called with the path's lock held; throws while the log cannot be written. */
  record(): Promise<void>;
};

export type UnrecordedOptions = {
  logger: Logger;
  /** The review's path lock (`PathLock.withLock`): records of a path are made under it. */
  withLock: <T>(paths: readonly string[], fn: () => Promise<T>) => Promise<T>;
  minDelayMs?: number;
  maxDelayMs?: number;
};

export class UnrecordedChanges {
  readonly #logger: Logger;
  readonly #withLock: UnrecordedOptions['withLock'];
  /** Resolved path → its changes waiting, oldest first. */
  readonly #pending = new Map<string, PendingRecord[]>();
  #timer: NodeJS.Timeout | undefined;
  #delayMs: number;
  readonly #minMs: number;
  readonly #maxMs: number;
  #stopped = false;
  /** The retry under way: one at a time. */
  #running: Promise<void> | undefined;
  /**
   * Records, under the locks of the paths given, the changes commands made there that are not recorded yet (still
   * running, or ended and waiting for those locks): `infra/terminal/shell-records.ts`, set by the terminal domain.
   */
  #collect: ((paths: readonly string[], running: boolean) => Promise<void>) | undefined;
  /** Told what an edit wrote where it collected from running commands (`shellRecords.written`). */
  #written: ((path: string, content: string | Buffer | null, review?: ReviewWrite) => Promise<void>) | undefined;

  constructor(options: UnrecordedOptions) {
    this.#logger = options.logger.child({ actor: 'unrecorded-changes' });
    this.#withLock = options.withLock;
    this.#minMs = options.minDelayMs ?? 500;
    this.#maxMs = options.maxDelayMs ?? 10_000;
    this.#delayMs = this.#minMs;
  }

  /** Sets what `flush` collects first, and what `written` tells (the terminal domain's commands). */
  collectWith(
    collect: (paths: readonly string[], running: boolean) => Promise<void>,
    written?: (path: string, content: string | Buffer | null, review?: ReviewWrite) => Promise<void>,
  ): void {
    this.#collect = collect;
    this.#written = written;
  }

  /**
   * The writer wrote `content` at `path` (null: deleted it), locks still held: commands still running are seen
   * changing it from there on (an edit's, after its flush took their changes so far; a review's, `review`: its
   * change carried to what each started from). Never throws.
   */
  async written(path: string, content: string | Buffer | null, review?: ReviewWrite): Promise<void> {
    await this.#written?.(path, content, review).catch((err: unknown) =>
      this.#logger.warn({ err, path }, 'shell side effects: running commands not rebased on a write'),
    );
  }

  get size(): number {
    let n = 0;
    for (const list of this.#pending.values()) n += list.length;
    return n;
  }

  /**
   * The changes waiting, one entry per path and agent (how many), of the agents `of` accepts (all when missing),
   * ordered by path: `review.list` names them, as they are not in any log yet.
   */
  waiting(of?: (agentId: string) => boolean): Array<{ path: string; agentId: string; changes: number }> {
    const out: Array<{ path: string; agentId: string; changes: number }> = [];
    for (const [path, list] of [...this.#pending].sort(([a], [b]) => a.localeCompare(b))) {
      const counts = new Map<string, number>();
      for (const c of list) if (!of || of(c.agentId)) counts.set(c.agentId, (counts.get(c.agentId) ?? 0) + 1);
      for (const [agentId, changes] of counts) out.push({ path, agentId, changes });
    }
    return out;
  }

  /** Keeps a change whose record failed with `error`, behind any of its path's, and schedules a retry. */
  add(change: PendingRecord, error: unknown): void {
    const key = resolve(change.path);
    if (this.#stopped) {
      this.#logger.error(
        { path: key, err: error },
        'a change on disk could not be recorded in the action log while the runtime stops: it will not show in review',
      );
      return;
    }
    const list = this.#pending.get(key) ?? [];
    list.push(change);
    this.#pending.set(key, list);
    this.#logger.error(
      { path: key, err: error, waiting: this.size },
      'a change on disk could not be recorded in the action log; retrying until the log can be written',
    );
    this.#schedule();
  }

  /**
   * With the locks of `paths` held: records the changes waiting for them, in order, after collecting those commands
   * made there and did not record yet (`collect`: false for a command's own record, whose overlapping commands'
   * changes are settled by claims; `running`: also from commands still running, for an edit). Throws, naming the
   * path, when the log still refuses one: the caller's own change must then wait too (or be refused, if not made).
   */
  async flush(paths: readonly string[], options: { collect?: boolean; running?: boolean } = {}): Promise<void> {
    await this.#flushQueued(paths);
    // Last, right before the caller reads the disk: a command that ended while the queue was recorded (slowly,
    // a log coming back) is collected too.
    if ((options.collect ?? true) && this.#collect) {
      await this.#collect(paths, options.running ?? true);
      await this.#flushQueued(paths); // what the log refused of them: the caller is refused too
    }
  }

  async #flushQueued(paths: readonly string[]): Promise<void> {
    if (this.#pending.size === 0) return;
    for (const path of paths) {
      const key = resolve(path);
      try {
        await this.#flushPath(key);
      } catch (err) {
        this.#schedule();
        throw new RuntimeError(
          ErrorCode.Unavailable,
          `earlier changes to ${key} are not recorded in the action log yet (${reasonOf(err)}); they are ` +
            'retried until the log can be written',
          {
            retryable: true,
            cause: err,
            reason: `earlier changes to ${key} are not recorded in the action log yet (${reasonOf(err)})`,
          },
        );
      }
    }
  }

  /**
   * Records the waiting changes of the paths where one is `of` an agent (all when missing), each path under its
   * lock; throws for the first path the log still refuses.
   */
  async flushAll(of?: (agentId: string) => boolean): Promise<void> {
    for (const [key, list] of [...this.#pending]) {
      if (!of || list.some((c) => of(c.agentId))) {
        await this.#withLock([key], () => this.flush([key], { running: false }));
      }
    }
  }

  async #flushPath(key: string): Promise<void> {
    const list = this.#pending.get(key);
    if (!list) return;
    while (list.length > 0) {
      await list[0]!.record();
      list.shift();
      this.#logger.info({ path: key, waiting: this.size }, 'change recorded in the action log after all');
    }
    this.#pending.delete(key);
  }

  #schedule(): void {
    if (this.#timer || this.#stopped || this.#pending.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#running) return; // it reschedules if anything is left
      this.#running = this.#retry().finally(() => {
        this.#running = undefined;
        this.#schedule(); // a change added while it ran
      });
    }, this.#delayMs);
    this.#timer.unref();
  }

  /** Each waiting path under its lock; one that still fails does not hold up the others. */
  async #retry(): Promise<void> {
    let failed = false;
    for (const key of [...this.#pending.keys()]) {
      if (this.#stopped) return;
      try {
        await this.#withLock([key], () => this.#flushPath(key));
      } catch {
        failed = true;
      }
    }
    if (failed) {
      this.#delayMs = Math.min(this.#maxMs, this.#delayMs * 2);
      this.#schedule();
    } else this.#delayMs = this.#minMs;
  }

  /**
   * Stops retrying and, within `lastTryMs` in all (a hung log must not hold the stop), waits for a retry under way
   * and tries each path once more (the log may be back before the next retry was due), all before the log closes.
   * Logs the changes left: an edit's is found again at the next start (its `edit.applied`), a command's is not
   * (shell tracking's baseline is the disk).
   */
  async close(lastTryMs = 3_000): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const end = Date.now() + lastTryMs;
    const last = (async () => {
      await this.#running;
      for (const key of [...this.#pending.keys()]) {
        if (Date.now() > end) return;
        await this.#withLock([key], () => this.#flushPath(key)).catch(() => undefined); // the next path still tries
      }
    })();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([last, new Promise<void>((r) => (timer = setTimeout(r, lastTryMs)))]);
    clearTimeout(timer);
    if (this.#pending.size > 0) {
      this.#logger.error(
        { paths: [...this.#pending.keys()].slice(0, 50), waiting: this.size },
        "stopping with changes on disk the action log never recorded: an edit's reach review at the next start, " +
          "a command's do not",
      );
    }
  }
}
