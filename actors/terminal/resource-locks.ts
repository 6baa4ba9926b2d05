/**
 * @module
 * The host's shared resources (`domains.terminal.resources`, e.g. a GPU or a port): commands that name one
 * wait until they hold it, in priority then arrival order. The state is the pure arbiter
 * (machines/terminal/arbiter.ts); this holds it, wakes the waiting commands, and emits
 * `resource.acquired` / `resource.released` facts as grants change.
 */
import * as arbiter from '../../machines/terminal/arbiter.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import type { Emit, Job } from './terminal-job.ts';

/** What a lock needs of a terminal session. */
type Holder = { terminalId: string; agentId: string };

export class ResourceLocks {
  #state: arbiter.ArbiterState;
  readonly #waiters = new Map<string, (waitMs: number) => void>();
  readonly #priority: Readonly<Record<string, number>>;
  readonly #emit: Emit;

  /** Throws when two resource names map to the same id (the config names the clash). */
  constructor(resources: readonly string[], priority: Readonly<Record<string, number>>, emit: Emit) {
    const tokens = new Map<string, string>();
    for (const r of resources) {
      const t = r.replace(/[^A-Za-z0-9_-]/g, '_');
      if (tokens.has(t))
        throw new RuntimeError(
          ErrorCode.InvalidMessage,
          `Resources '${tokens.get(t)}' and '${r}' map to the same ` +
            `id '${t}'; rename one in domains.terminal.resources.`,
        );
      tokens.set(t, r);
    }
    this.#state = arbiter.createArbiter(resources);
    this.#priority = priority;
    this.#emit = emit;
  }

  /** The names in `resources` that are not declared. */
  unknown(resources: readonly string[]): string[] {
    return arbiter.unknownResources(this.#state, resources);
  }

  /** Resolves with the wait in ms once the job holds its resources (-1 when its terminal closed first). */
  acquire(s: Holder, job: Job): Promise<number> {
    const key = `${s.terminalId}/${job.commandId}`;
    const waited = new Promise<number>((resolve) => this.#waiters.set(key, resolve));
    const { state, granted } = arbiter.request(
      this.#state,
      {
        key,
        agentId: s.agentId,
        terminalId: s.terminalId,
        commandId: job.commandId,
        resources: job.resources,
        priority: this.#priority[s.agentId] ?? 0,
        at: job.queuedAt,
      },
      Date.now(),
    );
    this.#state = state;
    void this.#announce([], 'finished', granted);
    return waited;
  }

  async release(s: Holder, job: Job, reason: 'finished' | 'cancelled'): Promise<void> {
    const { state, released, granted } = arbiter.release(this.#state, `${s.terminalId}/${job.commandId}`, Date.now());
    this.#state = state;
    await this.#announce(released, reason, granted);
  }

  /** A terminal closed: what it held or waited for is let go, and its waiting commands wake with -1. */
  releaseTerminal(terminalId: string): void {
    const { state, released, granted } = arbiter.releaseTerminal(this.#state, terminalId, Date.now());
    this.#state = state;
    for (const key of [...this.#waiters.keys()]) {
      if (key.startsWith(`${terminalId}/`)) {
        this.#waiters.get(key)!(-1);
        this.#waiters.delete(key);
      }
    }
    void this.#announce(released, 'closed', granted);
  }

  /** Emits released/acquired facts, then wakes the granted commands. */
  async #announce(
    released: arbiter.Grant[],
    reason: 'finished' | 'cancelled' | 'closed',
    granted: arbiter.Grant[],
  ): Promise<void> {
    const now = Date.now();
    for (const g of released) {
      for (const resource of g.resources) {
        await this.#emit({
          type: 'resource.released',
          agentId: g.agentId,
          data: {
            resource,
            agentId: g.agentId,
            terminalId: g.terminalId,
            commandId: g.commandId,
            heldMs: now - g.grantedAt,
            reason,
          },
        });
      }
    }
    for (const g of granted) {
      for (const resource of g.resources) {
        await this.#emit({
          type: 'resource.acquired',
          agentId: g.agentId,
          data: { resource, agentId: g.agentId, terminalId: g.terminalId, commandId: g.commandId, waitMs: g.waitMs },
        });
      }
      this.#waiters.get(g.key)?.(g.waitMs);
      this.#waiters.delete(g.key);
    }
  }
}
