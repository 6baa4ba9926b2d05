/**
 * @module
 * The OOM decision at every agent's memory bound (`maxMemoryPerAgent`, each agent's cgroup) and at the bound of all
 * agents together (`maxMemoryAllAgents`, the `agents` cgroup), made by the runtime instead of the kernel. The
 * kernel's OOM killer ranks processes by the memory they map. Memory an agent holds through a small process (a
 * memfd kept open by a `sleep`) is charged to its cgroup but mapped by nothing, so the killer passed over it and
 * killed another agent's program, or a parent's program when a sub-agent held it (a live review did both).
 *
 * Here the kernel's killer is off in `agents` and so in every cgroup below it (`memory.oom_control` = 1; v1 copies
 * a parent's setting into a new cgroup): a task that would pass a bound waits in the kernel instead. Every POLL_MS
 * the watch reads `under_oom` of each bound; in the shallowest one set (v1 marks every cgroup below the one at its
 * bound, so at the bound of all agents every agent's reads set too), it chooses the terminal whose leaf
 * holds the most memory (charged to it, however held: `oomVictim`) and kills there, one step at a time while the
 * bound stays met: the process of that terminal mapping the most (what the kernel would have killed), then every
 * process but its shell, then the shell. Killing a sandbox's processes ends its namespaces and what they held. The
 * operator's terminals are outside `agents` and keep the kernel's killer (they have no bound).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { type LeafUsage, oomVictim, underOom } from '../../machines/terminal/cgroup-v1.ts';
import { readCgroup } from './cgroup-files.ts';
import { isAlive } from './terminal-proc.ts';

/** How often the watch looks: a task at a bound waits at most this long for the decision. */
const POLL_MS = 100;
/** How long the processes a kill chose get to be gone before the watch decides again without them. */
const KILL_GRACE_MS = 2_000;

/** What a kill in a terminal took: the process mapping the most, every process but the shell, or all. */
export type KillStep = 'biggest' | 'commands' | 'all';
const NEXT: Record<KillStep, KillStep> = { biggest: 'commands', commands: 'all', all: 'all' };

/** A terminal the watch killed in: when, which processes, and the step. */
type Kill = { at: number; pids: number[]; step: KillStep };

export type OomWatchTree = {
  /** The memory hierarchy's base (this runtime's cgroup). */
  base: string;
  /** The cgroups with a bound the watch decides at, below `base`: `agents` and each agent's (paths below base). */
  bounds: () => Iterable<string>;
  /** The terminals' leaves below `agents`: terminal id, path below base. */
  leaves: () => Iterable<[terminalId: string, rel: string]>;
  /** A terminal's shell and the wrapper holding its PTY, spared while anything else of it is left to kill. */
  shells: (terminalId: string) => readonly number[];
  /** Told of each terminal killed in, and how many processes. */
  killed: (terminalId: string, processes: number) => void;
  /**
   * Leaves' processes by every process's own cgroup file (one scan, a list per leaf of `rels`), for leaves whose
   * files cannot show them all (more sub-cgroups than a read takes); undefined when the runtime's scan budget is
   * spent for now.
   */
  scan: (rels: readonly string[]) => readonly (readonly number[])[] | undefined;
};

export class AgentsOomWatch {
  readonly #tree: OomWatchTree;
  readonly #log: Logger;
  readonly #kills = new Map<string, Kill>();
  #timer: NodeJS.Timeout | undefined;

  /**
   * Turns the kernel's killer off in `agents` (below `tree.base`) and starts watching, or returns undefined (logged)
   * when the file cannot be written: the kernel's killer then stays everywhere.
   */
  static start(tree: OomWatchTree, agents: string, log: Logger): AgentsOomWatch | undefined {
    try {
      writeFileSync(join(tree.base, agents, 'memory.oom_control'), '1');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'agents at a memory bound: the kernel chooses what to kill');
      return undefined;
    }
    return new AgentsOomWatch(tree, log);
  }

  private constructor(tree: OomWatchTree, log: Logger) {
    this.#tree = tree;
    this.#log = log;
    this.#timer = setInterval(() => {
      try {
        this.check();
      } catch (err) {
        // Out of descriptors for a moment (EMFILE): the next look decides; a timer's throw would end the runtime.
        this.#log.warn({ err: (err as Error).message }, 'agents at a memory bound: a look failed');
      }
    }, POLL_MS);
    this.#timer.unref();
  }

  /** One look: when tasks wait at a bound, one kill step in the terminal below it holding the most memory. */
  check(): void {
    const { base } = this.#tree;
    const met = [...this.#tree.bounds()]
      .filter((rel) => {
        try {
          return underOom(readFileSync(join(base, rel, 'memory.oom_control'), 'utf8'));
        } catch {
          return false; // removed (its agent's last terminal closed, or the runtime stops)
        }
      })
      .sort((a, b) => a.length - b.length);
    if (met.length === 0) {
      this.#kills.clear();
      return;
    }
    const now = Date.now();
    // What it killed last is still dying (the memory not freed yet): no decision before it is gone.
    for (const kill of this.#kills.values()) if (now - kill.at < KILL_GRACE_MS && kill.pids.some(isAlive)) return;
    const leaves = [...this.#tree.leaves()].map(([terminalId, rel]) => ({
      terminalId,
      rel,
      read: readCgroup(join(base, rel)),
    }));
    // Leaves below a met bound that hide processes below more sub-cgroups than a read takes are scanned, all at
    // once; without that scan (its budget spent) the watch does not decide: the leaf would look empty and another
    // be killed in. The watch's budget is its own, so releases scanning for hidden processes cannot starve it.
    const hiding = leaves.filter((l) => !l.read.complete && met.some((rel) => l.rel.startsWith(`${rel}/`)));
    const found = hiding.length > 0 ? this.#tree.scan(hiding.map((l) => l.rel)) : [];
    if (found === undefined) return;
    const usage: Array<LeafUsage & { rel: string; pids: number[] }> = [];
    for (const { terminalId, rel, read } of leaves) {
      const i = hiding.findIndex((l) => l.rel === rel);
      const pids = i < 0 ? read.pids : [...new Set([...read.pids, ...(found[i] ?? [])])];
      let bytes = 0;
      try {
        bytes = Number(readFileSync(join(base, rel, 'memory.usage_in_bytes'), 'utf8'));
      } catch {} // gone
      usage.push({ terminalId, rel, bytes, processes: pids.length, pids });
    }
    // The shallowest bound met that has a terminal to kill in: one with none (its last terminal closing) must not
    // leave another agent's met bound waiting.
    let scope = '';
    let leaf: (typeof usage)[number] | undefined;
    for (const rel of met) {
      const below = usage.filter((u) => u.rel.startsWith(`${rel}/`));
      leaf = below.find((u) => u.terminalId === oomVictim(below));
      scope = rel;
      if (leaf) break;
    }
    if (!leaf) return;
    const spared = new Set(this.#tree.shells(leaf.terminalId));
    const commands = leaf.pids.filter((pid) => !spared.has(pid));
    const previous = this.#kills.get(leaf.terminalId);
    let step: KillStep = previous ? NEXT[previous.step] : 'biggest';
    if (commands.length === 0) step = 'all';
    const pids = step === 'all' ? leaf.pids : step === 'commands' ? commands : [biggest(commands)];
    this.#kills.set(leaf.terminalId, { at: now, pids, step });
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {} // gone already
    }
    this.#tree.killed(leaf.terminalId, pids.length);
    this.#log.warn(
      { terminalId: leaf.terminalId, bound: scope, bytes: leaf.bytes, processes: pids.length, step },
      'agents at a memory bound: killed in the terminal holding the most',
    );
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** The process mapping the most memory (resident pages, /proc/<pid>/statm); the first when none can be read. */
function biggest(pids: readonly number[]): number {
  let best = pids[0]!;
  let most = -1;
  for (const pid of pids) {
    try {
      const resident = Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
      if (resident > most) [best, most] = [pid, resident];
    } catch {} // gone
  }
  return best;
}
