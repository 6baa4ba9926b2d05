/**
 * @module
 * What a terminal's cgroup join costs and how to shorten it. A shell's first move between v1 cgroups after a quiet
 * moment waits for `cgroup_threadgroup_rwsem` to leave its fast mode, an RCU grace period (12.6 ms of a 19 ms open,
 * traced; the join right after it, into the other hierarchy, 0.15 ms). The runtime starts that wait as the open
 * begins (`JoinWarmer`), and its start says how the machine's owner can remove the rest (`joinCostHint`).
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type { Logger } from 'pino';

/**
 * Writes the runtime's own pid to the `cgroup.procs` of the cgroup it is in now (`where`, read again before each
 * write: an operator may have moved the runtime since its start, and a write to where it was would move it back),
 * at most one write at a time.
 */
export class JoinWarmer {
  readonly #where: () => string | undefined;
  readonly #log: Pick<Logger, 'debug'>;
  #busy = false;
  #off = false;

  constructor(where: () => string | undefined, log: Pick<Logger, 'debug'>) {
    this.#where = where;
    this.#log = log;
  }

  /**
   * Starts the grace period while the shell is being started, on the thread pool (a thread blocks in the write):
   * the launcher's join, coming during it, shares it (open p50 16 ms against 19.5 here, terminal bench). The
   * runtime stays where it is: the kernel skips a move to the same cgroup, after taking the rwsem. Called once an
   * open has made its leaves (a refused open makes no write). One write in flight at most, none after one failed
   * (a runtime that may not write its own cgroup). A pid that cannot exist would move nothing, but this kernel
   * looks it up before taking the rwsem: ESRCH at once, no grace period.
   */
  warm(write: (file: string, data: string) => Promise<void> = writeFile): void {
    if (this.#busy || this.#off) return;
    let procs: string | undefined;
    try {
      procs = this.#where();
    } catch (err) {
      return this.#stop(err, undefined);
    }
    if (procs === undefined) return this.#stop(new Error('not in a cgroup of this hierarchy now'), undefined);
    this.#busy = true;
    write(procs, String(process.pid))
      .catch((err: unknown) => this.#stop(err, procs))
      .finally(() => {
        this.#busy = false;
      });
  }

  #stop(err: unknown, file: string | undefined): void {
    this.#off = true;
    this.#log.debug({ err: (err as Error).message, file }, 'terminal opens wait for their own grace period');
  }
}

/**
 * Says once, at start, what a terminal's open pays for its cgroup join and how the machine's owner can remove it.
 * A shell's first move between v1 cgroups after a quiet moment waits for an RCU grace period (12.6 ms of a
 * 19 ms open measured here; the join right after it shares that wait). With `rcu_expedited` set the kernel ends
 * grace periods at once (at a cost to the whole machine: it interrupts every CPU), and the open took 9 ms.
 * Nothing is said where the file reads other than `0` (set already, or no such kernel knob).
 */
export function joinCostHint(
  log: Pick<Logger, 'info'>,
  read: () => string = () => readFileSync('/sys/kernel/rcu_expedited', 'utf8'),
): void {
  let value: string;
  try {
    value = read().trim();
  } catch {
    return;
  }
  if (value !== '0') return;
  log.info(
    { setting: '/sys/kernel/rcu_expedited', now: 0, suggested: 1 },
    'each terminal open waits for an RCU grace period (~10-20 ms, part of it while its shell starts) to join ' +
      "its agent's cgroups; setting the kernel's rcu_expedited to 1 (echo 1 > /sys/kernel/rcu_expedited, as " +
      'root; it is system-wide) removes most of it',
  );
}
