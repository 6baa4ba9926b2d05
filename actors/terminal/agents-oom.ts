/**
 * @module
 * The OOM decision at the bound of all agents together (`maxMemoryAllAgents`, the `agents` memory cgroup), made by
 * the runtime instead of the kernel. The kernel's OOM killer ranks processes by the memory they map. Memory an
 * agent holds through a small process (a memfd kept open by a `sleep`, a tmpfs mounted in a namespace of its own)
 * is charged to its cgroup but mapped by nothing, so the killer passed over it and killed another agent's program.
 *
 * Here the kernel's killer is off in `agents` (`memory.oom_control` = 1): a task that would pass the bound waits
 * in the kernel instead. Every POLL_MS the watch reads `under_oom`; while it is set, it kills in the terminal whose
 * leaf holds the most memory (charged to it, however held: `oomVictim`) every process but the shell, then, if
 * that freed too little, the shell, one terminal at a time, until the waiting tasks can go on. Killing a
 * sandbox's processes ends its namespaces, and with them what they held. Each agent's own bound below keeps the
 * kernel's killer: agent-cgroups.ts writes 0 into each agent's cgroup (v1 copies a parent's setting into a new
 * cgroup).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { type LeafUsage, oomVictim, underOom } from '../../machines/terminal/cgroup-v1.ts';
import { readPids } from './cgroup-files.ts';

/** How often the watch looks: a task at the bound waits at most this long for the decision. */
const POLL_MS = 100;
/** How long the processes a kill chose get to be gone before the watch decides again without them. */
const KILL_GRACE_MS = 2_000;

/** A terminal the watch killed in: when, which processes, and whether its shell went too. */
type Kill = { at: number; pids: number[]; shell: boolean };

export class AgentsOomWatch {
  readonly #agentsDir: string;
  readonly #leaves: () => Iterable<[terminalId: string, dir: string]>;
  readonly #shells: (terminalId: string) => readonly number[];
  readonly #killed: (terminalId: string, processes: number) => void;
  readonly #log: Logger;
  readonly #kills = new Map<string, Kill>();
  #timer: NodeJS.Timeout | undefined;

  /**
   * Turns the kernel's killer off in `agentsDir` and starts watching, or returns undefined (logged) when the file
   * cannot be written: the kernel's killer then stays. `leaves`: the leaves below `agentsDir` (terminal id, its
   * directory in the memory hierarchy); `shells`: a terminal's shell and the wrapper holding its PTY, spared
   * while anything else of the terminal is left to kill; `killed`: told of each terminal killed in, and how many
   * processes.
   */
  static start(
    agentsDir: string,
    leaves: () => Iterable<[terminalId: string, dir: string]>,
    shells: (terminalId: string) => readonly number[],
    killed: (terminalId: string, processes: number) => void,
    log: Logger,
  ): AgentsOomWatch | undefined {
    try {
      writeFileSync(join(agentsDir, 'memory.oom_control'), '1');
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'all agents at their memory bound: the kernel chooses what to kill');
      return undefined;
    }
    return new AgentsOomWatch(agentsDir, leaves, shells, killed, log);
  }

  private constructor(
    agentsDir: string,
    leaves: () => Iterable<[string, string]>,
    shells: (terminalId: string) => readonly number[],
    killed: (terminalId: string, processes: number) => void,
    log: Logger,
  ) {
    this.#agentsDir = agentsDir;
    this.#leaves = leaves;
    this.#shells = shells;
    this.#killed = killed;
    this.#log = log;
    this.#timer = setInterval(() => this.check(), POLL_MS);
    this.#timer.unref();
  }

  /**
   * One look. When tasks wait at the bound: unless processes it killed are still going, it kills in the terminal
   * holding the most memory every process but its shell, or, when nothing else is left there (or that was done
   * and the memory is still held, as by a shell that `exec`ed into a namespace of its own), the shell too.
   */
  check(): void {
    let text: string;
    try {
      text = readFileSync(join(this.#agentsDir, 'memory.oom_control'), 'utf8');
    } catch {
      return; // removed (the runtime stops)
    }
    if (!underOom(text)) {
      this.#kills.clear();
      return;
    }
    const now = Date.now();
    const usage: Array<LeafUsage & { pids: number[] }> = [];
    for (const [terminalId, dir] of this.#leaves()) {
      const pids = readPids(dir);
      let bytes = 0;
      try {
        bytes = Number(readFileSync(join(dir, 'memory.usage_in_bytes'), 'utf8'));
      } catch {} // gone
      usage.push({ terminalId, bytes, processes: pids.length, pids });
      const kill = this.#kills.get(terminalId);
      if (kill && now - kill.at < KILL_GRACE_MS && kill.pids.some((pid) => pids.includes(pid))) return; // dying
    }
    const leaf = usage.find((u) => u.terminalId === oomVictim(usage));
    if (!leaf) return;
    const spared = new Set(this.#shells(leaf.terminalId));
    const others = leaf.pids.filter((pid) => !spared.has(pid));
    const shell = others.length === 0 || this.#kills.has(leaf.terminalId);
    const pids = shell ? leaf.pids : others;
    this.#kills.set(leaf.terminalId, { at: now, pids, shell });
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {} // gone already
    }
    this.#killed(leaf.terminalId, pids.length);
    this.#log.warn(
      { terminalId: leaf.terminalId, bytes: leaf.bytes, processes: pids.length, shell },
      'all agents at their memory bound: killed in the terminal holding the most',
    );
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
