/**
 * @module
 * The private broker's JetStream after its store's disk filled. nats-server 2.9 then stops answering every
 * JetStream request (appends, `$JS.API.INFO`) and keeps not answering after space returns, while the server
 * itself may answer or not; it logs nothing. Every command that appends then waited out its retries' timeouts and
 * got no reply, for good, until someone restarted the server. The watchdog sees it (the store's disk nearly full
 * and the JetStream API silent twice in a row), says so to every append at once
 * (`unavailable`, naming the disk), and restarts the server once the disk has room again; the host's connection
 * reconnects by itself. Checked only while the disk is nearly full: a slow JetStream on a busy machine with
 * room on its disk is never taken for a stuck one.
 */
import { statfsSync } from 'node:fs';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { ErrorCode, RuntimeError } from '../../schemas/index.ts';

const MiB = 1024 * 1024;
/** The least time between two restarts. */
const RESTART_GAP_MS = 15_000;

export type WatchdogOptions = {
  nc: NatsConnection;
  storeDir: string;
  /** Stops the server (the supervisor starts it again). */
  restart: () => Promise<void>;
  logger: Logger;
  everyMs?: number;
  /** How long a JetStream request may take before it counts as unanswered. */
  probeTimeoutMs?: number;
  /** Below this much free space on the store's disk, JetStream may be stuck: it is checked. */
  lowBytes?: number;
  /** The free space a restart waits for (the server sizes its store from the disk when it starts). */
  roomBytes?: number;
  /** Free bytes on the disk of `dir` (statfs; tests give their own). */
  freeBytes?: (dir: string) => number;
};

export class JetStreamWatchdog {
  readonly #o: Required<WatchdogOptions>;
  readonly #timer: NodeJS.Timeout;
  #silent = 0;
  #stuck = false;
  #checking = false;
  #restarting = false;
  #restartedAt = 0;

  constructor(options: WatchdogOptions) {
    this.#o = {
      everyMs: 2_000,
      probeTimeoutMs: 2_000,
      lowBytes: 4 * MiB,
      roomBytes: 16 * MiB,
      freeBytes: (dir) => {
        const s = statfsSync(dir);
        return s.bavail * s.bsize;
      },
      ...options,
    };
    this.#timer = setInterval(() => void this.#check(), this.#o.everyMs);
    this.#timer.unref();
  }

  /** Whether JetStream is taken for stuck now. */
  get stuck(): boolean {
    return this.#stuck;
  }

  /** Throws `unavailable` while JetStream is stuck: an append fails at once instead of after its timeouts. */
  assert(): void {
    if (!this.#stuck) return;
    throw new RuntimeError(
      ErrorCode.Unavailable,
      `the private broker's JetStream stopped answering when the disk of its store ${this.#o.storeDir} filled; ` +
        `nothing was acknowledged — free space on that disk (${Math.round(this.#o.roomBytes / MiB)} MiB): ` +
        'the broker is restarted then, and the runtime recovers by itself',
      { retryable: true },
    );
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async #check(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      const free = this.#free();
      if (this.#stuck) return await this.#maybeRestart(free);
      if (free === undefined || free >= this.#o.lowBytes) {
        this.#silent = 0;
        return;
      }
      if (this.#o.nc.isClosed() || (await this.#answers())) {
        this.#silent = 0;
        return;
      }
      this.#silent += 1;
      if (this.#silent < 2) return;
      this.#stuck = true;
      this.#o.logger.error(
        { storeDir: this.#o.storeDir, freeBytes: free },
        "the private broker's JetStream stopped answering with its store's disk full; appends fail until " +
          'space returns and the broker is restarted',
      );
    } finally {
      this.#checking = false;
    }
  }

  async #maybeRestart(free: number | undefined): Promise<void> {
    if (this.#restarting) return;
    if (await this.#answers()) {
      this.#stuck = false;
      this.#silent = 0;
      this.#o.logger.info({ storeDir: this.#o.storeDir }, "the private broker's JetStream answers again");
      return;
    }
    if (free === undefined || free < this.#o.roomBytes) return;
    // One restart at a time, and time for the new server to start and the connection to come back.
    if (Date.now() - this.#restartedAt < RESTART_GAP_MS) return;
    this.#restarting = true;
    this.#restartedAt = Date.now();
    try {
      this.#o.logger.warn(
        { storeDir: this.#o.storeDir, freeBytes: free },
        "restarting the private broker: its store's disk has room again and its JetStream is still stuck",
      );
      await this.#o.restart();
    } catch (err) {
      this.#o.logger.error({ err }, 'the private broker could not be restarted; trying again');
    } finally {
      this.#restarting = false;
    }
  }

  #free(): number | undefined {
    try {
      return this.#o.freeBytes(this.#o.storeDir);
    } catch {
      return undefined;
    }
  }

  async #answers(): Promise<boolean> {
    try {
      await this.#o.nc.request('$JS.API.INFO', '', { timeout: this.#o.probeTimeoutMs });
      return true;
    } catch {
      return false;
    }
  }
}
