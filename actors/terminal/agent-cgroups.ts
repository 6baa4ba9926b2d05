/**
 * @module
 * The per-agent limits of what runs in terminals: processes (`domains.terminal.maxProcessesPerAgent`, the v1
 * `pids` hierarchy) and memory (`domains.terminal.maxMemoryPerAgent`, the v1 `memory` hierarchy). In each
 * hierarchy, a cgroup per agent, nested as the agent tree is (`<runtime>/a1/a2/…`), and one leaf per terminal in
 * its agent's. The kernel counts every task (process or thread) and every page (anonymous memory, tmpfs files,
 * page cache) of a cgroup's subtree against its bound and each ancestor's, so a sub-agent spends its parent's
 * too:
 * - past `pids.max`, `fork` fails with EAGAIN, whatever the program;
 * - past `memory.limit_in_bytes`, the kernel reclaims what it can, then kills a process of that subtree (the
 *   biggest); a write to a tmpfs fails with ENOMEM. The runtime, outside, is never the one killed. Below the
 *   operator the runtime chooses instead of the kernel (agents-oom.ts: in the terminal holding the most).
 *
 * The root agent (the operator) has no bound of its own. The shell joins its leaves before it runs (pty-spawn.ts:
 * a POSIX sh writes its own pid, then execs the terminal's command line), so nothing it starts is ever outside.
 * A terminal's close kills what is left in its leaf, a daemon that left the shell's session (`setsid`, `nohup`)
 * too. Inside the sandbox the cgroup files are read-only, so a command cannot move itself out; an unsandboxed one
 * running as the same user can.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmdirSync } from 'node:fs';
import { totalmem } from 'node:os';
import { dirname, join, posix } from 'node:path';
import type { Logger } from 'pino';
import { AgentsOomWatch } from './agents-oom.ts';
import { ownMemoryLimit, procTexts, removeTree, staleCgroups, thisRuntime } from './cgroup-files.ts';
import { emptyLeaf, emptyStale, HiddenScans, type LeafHierarchy } from './leaf-empty.ts';
import { joinCostHint, JoinWarmer } from './join-cost.ts';
import {
  type BoundFile,
  boundOps,
  type DirMaker,
  type DirOp,
  makeDirsHere,
  memoryBound,
  writeBound,
} from './cgroup-bounds.ts';
import { cgroupPath, cgroupV1Dir, type CgroupController, type MemoryBound } from '../../machines/terminal/cgroup-v1.ts';
import type { LimitHit } from '../../machines/terminal/limit-hints.ts';
import { runtimeCgroupName } from '../../machines/terminal/stale-cgroups.ts';
import { ErrorCode, LimitExceededError, RuntimeError } from '../../schemas/errors.ts';
import type { AgentLimitKey } from '../../schemas/terminal-values.ts';

/** Tasks a shell's start needs at once (sh, bwrap and its init, bash, a command substitution of the rc). */
const SHELL_START_TASKS = 4;

/** The limits' keys of `domains.terminal` (TerminalConfig). */
export type AgentLimits = {
  maxProcessesPerAgent: number;
  maxMemoryPerAgent: MemoryBound;
  maxMemoryAllAgents?: MemoryBound;
};

/** Below each base: the cgroup every agent but the operator sits in (`maxMemoryAllAgents` bounds it). */
const AGENTS = 'agents';

/** One hierarchy the limits live in: where this runtime's cgroup is, and the files each agent's bound sets. */
type Hierarchy = {
  controller: CgroupController;
  key: AgentLimitKey;
  base: string;
  /** `base` as `/proc/<pid>/cgroup` shows it to this process. */
  path: string;
  /** Written in order into each non-root agent's cgroup; a file the kernel lacks is skipped when `optional`. */
  bound: BoundFile[];
  /** The bound as a hint shows it. */
  shown: string;
  /** The bound of all agents together, written into `AGENTS`; the hint shows it too. */
  group?: { bound: BoundFile[]; shown: string };
};

/**
 * Where a leaf counts what met a bound: processes of it killed at the memory bound, forks in it refused at the
 * process bound (v1 shows both in the cgroup where it happened, whichever ancestor's bound it was).
 */
const MET: Record<CgroupController, { file: string; field: string }> = {
  memory: { file: 'memory.oom_control', field: 'oom_kill' },
  pids: { file: 'pids.events', field: 'max' },
};

/** `made`: settled once the join that made the agent's cgroup did (rejected when it failed). */
type AgentDir = { rel: string; terminals: number; made: Promise<void> };
/**
 * A terminal's leaf: its path below each base, the agents on the way to it (root first) and the entries its join
 * counted (a release uncounts those, not the agent's entry of the day: a failed join's entry may have been
 * replaced since), and the counts of `MET` already reported.
 */
type Leaf = { rel: string; lineage: readonly string[]; counted: AgentDir[]; reported: Map<string, number> };

export class AgentCgroups {
  readonly #hierarchies: readonly Hierarchy[];
  readonly #maxProcesses: number;
  readonly #rootAgentId: string;
  readonly #log: Logger;
  /** By agent id: its cgroup's path below each base (named by a counter: ids 64 deep would pass PATH_MAX). */
  readonly #agents = new Map<string, AgentDir>();
  /**
   * By terminal id: its leaf's path below each base, the agents on the way to it (root first), and the counts
   * of `MET` already reported.
   */
  readonly #leaves = new Map<string, Leaf>();
  readonly #releasing = new Set<Promise<void>>();
  /** At the bound of all agents, the runtime chooses what to kill (agents-oom.ts); its kills by terminal. */
  #oom: AgentsOomWatch | undefined;
  readonly #oomKills = new Map<string, number>();
  #next = 0;
  /** The /proc scans for processes hidden below leaves (the releases', the OOM watch's). */
  readonly #scans: HiddenScans;
  /** Starts the grace period a terminal's join waits for while its shell starts (join-cost.ts). */
  readonly #warm: JoinWarmer;

  private constructor(
    hierarchies: readonly Hierarchy[],
    maxProcesses: number,
    rootAgentId: string,
    log: Logger,
    shells: (terminalId: string) => readonly number[],
    /** The mount table `open` read (where the runtime's cgroup is found again before each warm write). */
    mountinfo: string,
  ) {
    this.#hierarchies = hierarchies;
    this.#maxProcesses = maxProcesses;
    this.#rootAgentId = rootAgentId;
    this.#log = log;
    this.#scans = new HiddenScans(hierarchies);
    const first = hierarchies[0]!;
    this.#warm = new JoinWarmer(() => {
      const where = cgroupV1Dir(mountinfo, readFileSync('/proc/self/cgroup', 'utf8'), first.controller);
      return where.ok ? join(where.dir, 'cgroup.procs') : undefined;
    }, log);
    const memory = hierarchies.find((h) => h.controller === 'memory');
    if (!memory) return;
    const tree = {
      base: memory.base,
      bounds: () => [AGENTS, ...[...this.#agents].filter(([id]) => id !== rootAgentId).map(([, a]) => a.rel)],
      leaves: () =>
        [...this.#leaves]
          .filter(([, leaf]) => leaf.rel.startsWith(`${AGENTS}/`))
          .map(([terminalId, leaf]): [string, string] => [terminalId, leaf.rel]),
      shells,
      killed: (id: string, n: number) => this.#oomKills.set(id, (this.#oomKills.get(id) ?? 0) + n),
      scan: (rels: readonly string[]) => this.#scans.scan(rels, 'oom'),
    };
    this.#oom = AgentsOomWatch.start(tree, AGENTS, log);
  }

  /**
   * This runtime's cgroups below its own, one per hierarchy with a bound set, or undefined when there are none.
   * A hierarchy it cannot write is logged and left out: that limit is then not enforced, as the sandbox is not
   * where bubblewrap is missing.
   */
  static open(
    limits: AgentLimits,
    rootAgentId: string,
    log: Logger,
    /** A terminal's shell and the wrapper holding its PTY (agents-oom.ts spares them while it can). */
    shells: (terminalId: string) => readonly number[] = () => [],
    texts = procTexts,
  ): AgentCgroups | undefined {
    const [mountinfo, cgroup] = texts();
    // One per runtime, not per process: tests run several runtimes in one process.
    const me = thisRuntime();
    const name = runtimeCgroupName(me, randomBytes(4).toString('hex'));
    const hierarchies: Hierarchy[] = [];
    /** Dead runtimes' cgroups beside this one's, by name, in each hierarchy they are in. */
    const stale = new Map<string, LeafHierarchy[]>();
    const add = (
      controller: CgroupController,
      key: AgentLimitKey,
      bound: (dir: string) => Pick<Hierarchy, 'bound' | 'shown' | 'group'>,
    ) => {
      const unenforced = (reason: string) => log.warn({ reason }, `domains.terminal.${key} is not enforced here`);
      const where = cgroupV1Dir(mountinfo, cgroup, controller);
      if (!where.ok) return unenforced(where.reason);
      try {
        const values = bound(where.dir);
        if (values.bound.length === 0 && !values.group) return;
        const at = (n: string) => ({
          base: join(where.dir, n),
          path: posix.join(cgroupPath(cgroup, controller) ?? '/', n),
        });
        for (const dead of staleCgroups(where.dir, me))
          stale.set(dead, [...(stale.get(dead) ?? []), { controller, ...at(dead) }]);
        const { base, path } = at(name);
        mkdirSync(base);
        mkdirSync(join(base, AGENTS));
        writeBound(join(base, AGENTS), values.group?.bound ?? []);
        hierarchies.push({ controller, key, base, path, ...values });
      } catch (err) {
        unenforced(`cannot make a cgroup in ${where.dir}: ${(err as Error).message}`);
      }
    };
    if (limits.maxProcessesPerAgent > 0) {
      const value = String(limits.maxProcessesPerAgent);
      add('pids', 'maxProcessesPerAgent', () => ({ bound: [{ file: 'pids.max', value }], shown: value }));
    }
    const allAgents = limits.maxMemoryAllAgents ?? 0;
    if (limits.maxMemoryPerAgent !== 0 || allAgents !== 0) {
      add('memory', 'maxMemoryPerAgent', (dir) => {
        const available = Math.min(totalmem(), ownMemoryLimit(dir));
        const each = memoryBound(limits.maxMemoryPerAgent, available);
        const all = memoryBound(allAgents, available);
        return { bound: each?.bound ?? [], shown: each?.shown ?? 'none', ...(all ? { group: all } : {}) };
      });
    }
    void emptyStale(stale, log);
    if (hierarchies.length === 0) return undefined;
    joinCostHint(log);
    return new AgentCgroups(hierarchies, limits.maxProcessesPerAgent, rootAgentId, log, shells, mountinfo);
  }

  /** `JoinWarmer.warm`: called once a terminal's open has made its leaves (join-cost.ts). */
  warmJoin(write?: (file: string, data: string) => Promise<void>): void {
    this.#warm.warm(write);
  }

  /** This runtime's cgroup in `controller`'s hierarchy (tests read the counts there), if that limit is on. */
  base(controller: CgroupController): string | undefined {
    return this.#hierarchies.find((h) => h.controller === controller)?.base;
  }

  /**
   * Leaves for `terminalId` in the cgroups of the last agent of `lineage` (root first), making the agents'
   * cgroups on the way; returns the `cgroup.procs` files the shell writes its pid to (`SpawnSpec.cgroupProcs`).
   * The directories are made by `makeDirs` (the shell helper's process: a cgroup's mkdir takes ~0.4 ms in the
   * kernel, and 32 terminals opened at once held this loop ~55 ms while the first agents' commands waited). The
   * entries and counts are taken in the call's first turn, so a release in between never removes an agent's
   * cgroup a join is using. A join that finds an agent's entry waits for the join that made it, and fails with
   * it: a leaf never goes into an agent's cgroup that is not made and bounded (`makeDirs` removes what a failed
   * batch made, so a batch of the same agent's already under way finds no directory either).
   */
  async join(terminalId: string, lineage: readonly string[], makeDirs: DirMaker = makeDirsHere): Promise<string[]> {
    let rel = '';
    const ops: DirOp[] = [];
    const created: Array<[string, AgentDir, (err?: unknown) => void]> = [];
    const waits: Array<Promise<void>> = [];
    for (const [i, agentId] of lineage.entries()) {
      // The operator's terminals stay outside AGENTS; an agent below it (or the top one on this host) is in it.
      const root = agentId === this.#rootAgentId;
      const parent = !root && (i === 0 || lineage[i - 1] === this.#rootAgentId) ? AGENTS : rel;
      let agent = this.#agents.get(agentId);
      if (agent && dirname(agent.rel) === (parent || '.')) waits.push(agent.made);
      else {
        let settle: (err?: unknown) => void = () => {};
        const made = new Promise<void>((resolve, reject) => {
          settle = (err) => (err === undefined ? resolve() : reject(err));
        });
        made.catch(() => undefined); // a join that waits for it reports the failure
        agent = { rel: join(parent, `a${++this.#next}`), terminals: 0, made };
        for (const h of this.#hierarchies) {
          const dir = join(h.base, agent.rel);
          ops.push({ mkdir: dir });
          if (!root) ops.push(...boundOps(dir, h.bound));
        }
        this.#agents.set(agentId, agent);
        created.push([agentId, agent, settle]);
      }
      rel = agent.rel;
    }
    const counted = lineage.map((agentId) => this.#agents.get(agentId)!);
    for (const agent of counted) agent.terminals++;
    const leaf = join(rel, `t-${terminalId}`);
    this.#leaves.set(terminalId, { rel: leaf, lineage, counted, reported: new Map() });
    for (const h of this.#hierarchies) ops.push({ mkdir: join(h.base, leaf) });
    try {
      await Promise.all(waits);
      await makeDirs(ops);
    } catch (err) {
      // Not made: the agent's next terminal makes its cgroup again (the caller releases this leaf).
      for (const [agentId, agent, settle] of created) {
        settle(err ?? new Error('not made'));
        if (this.#agents.get(agentId) === agent) this.#agents.delete(agentId);
      }
      throw new RuntimeError(
        ErrorCode.Unavailable,
        `cannot make the cgroups of terminal '${terminalId}' under ` +
          `${this.#hierarchies.map((h) => h.base).join(' and ')} (${(err as Error).message}); ask the operator ` +
          `to check the cgroups or set ${this.#hierarchies.map((h) => `domains.terminal.${h.key}`).join(' and ')} to 0`,
      );
    }
    for (const [, , settle] of created) settle();
    return this.#hierarchies.map((h) => join(h.base, leaf, 'cgroup.procs'));
  }

  /**
   * Why a terminal of the last agent of `lineage` could not start, when it is the process bound: the first agent
   * on the way whose subtree is at (or a shell's start short of) its `pids.max`, with the count; else undefined.
   */
  exhausted(lineage: readonly string[]): LimitExceededError | undefined {
    const pids = this.base('pids');
    if (!pids) return undefined;
    for (const agentId of lineage) {
      const agent = this.#agents.get(agentId);
      if (!agent || agentId === this.#rootAgentId) continue;
      let current: number;
      try {
        current = Number(readFileSync(join(pids, agent.rel, 'pids.current'), 'utf8'));
      } catch {
        continue;
      }
      if (current + SHELL_START_TASKS <= this.#maxProcesses) continue;
      const who = agentId === lineage[lineage.length - 1] ? `Agent '${agentId}'` : `Its ancestor '${agentId}'`;
      return new LimitExceededError(
        `${who} and its sub-agents run ${current} processes and threads in their terminals, at the bound ` +
          `(domains.terminal.maxProcessesPerAgent = ${this.#maxProcesses}): no shell can start; stop some ` +
          '(terminal.signal, terminal.close) or ask the operator for a higher bound.',
      );
    }
    return undefined;
  }

  /**
   * The per-agent limits this terminal's processes met since the last call (or its start), as the kernel counted
   * them in its leaves. Reads a file per limit: called when a command failed, not on every command.
   */
  hits(terminalId: string): LimitHit[] {
    const leaf = this.#leaves.get(terminalId);
    if (!leaf) return [];
    const hits: LimitHit[] = [];
    for (const h of this.#hierarchies) {
      const met = MET[h.controller];
      let total: number;
      try {
        const text = readFileSync(join(h.base, leaf.rel, met.file), 'utf8');
        total = Number(new RegExp(`^${met.field} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
        if (h.controller === 'memory') total += this.#oomKills.get(terminalId) ?? 0;
      } catch {
        continue; // the leaf is going (the terminal closes)
      }
      const before = leaf.reported.get(h.controller) ?? 0;
      if (total > before) {
        const all = h.group ? { allAgents: h.group.shown } : {};
        hits.push({ key: h.key, bound: h.shown, count: total - before, ...all });
      }
      leaf.reported.set(h.controller, total);
    }
    return hits;
  }

  /** A terminal's leaf's `cgroup.procs` (every process of a sandbox: none can move out), if it has one. */
  procsFile(terminalId: string): string | undefined {
    const leaf = this.#leaves.get(terminalId);
    const h = this.#hierarchies[0];
    return leaf && h ? join(h.base, leaf.rel, 'cgroup.procs') : undefined;
  }

  /** After the terminal's shell ended: kills what is left in its leaves, then removes the cgroups it emptied. */
  release(terminalId: string): Promise<void> {
    const leaf = this.#leaves.get(terminalId);
    if (!leaf) return Promise.resolve();
    this.#leaves.delete(terminalId);
    this.#oomKills.delete(terminalId);
    const done = this.#release(leaf).catch((err) =>
      this.#log.warn({ terminalId, err: (err as Error).message }, 'terminal cgroup left behind'),
    );
    this.#releasing.add(done);
    void done.finally(() => this.#releasing.delete(done));
    return done;
  }

  async #release(leaf: Leaf): Promise<void> {
    try {
      await emptyLeaf(leaf.rel, this.#hierarchies, this.#scans);
    } finally {
      // The leaf's count goes whatever became of it: a leaf left behind keeps its agent's cgroup by itself.
      for (const [i, agent] of [...leaf.counted.entries()].reverse()) {
        if (--agent.terminals > 0) continue;
        // Fails while a child agent's cgroup is still there (EBUSY). In one turn, no await: a join of this agent in
        // between would reuse the entry and make its leaf in a removed directory. The agent's own cgroup holds no
        // process (its terminals' leaves do), so it has no page cache to reclaim. Once one hierarchy's is gone
        // the entry goes (the agent's next terminal makes new ones), so none is kept that names a missing one.
        let gone = false;
        for (const h of this.#hierarchies) {
          try {
            rmdirSync(join(h.base, agent.rel));
            gone = true;
          } catch (err) {
            if ((err as NodeJS.ErrnoException).code === 'ENOENT') gone = true;
          }
        }
        const agentId = leaf.lineage[i]!;
        if (gone && this.#agents.get(agentId) === agent) this.#agents.delete(agentId);
      }
    }
  }

  /** Host stop, after every terminal closed: waits for the releases and removes this runtime's cgroups. */
  async dispose(): Promise<void> {
    this.#oom?.stop();
    for (const terminalId of [...this.#leaves.keys()]) void this.release(terminalId);
    await Promise.all(this.#releasing);
    for (const h of this.#hierarchies) {
      try {
        await removeTree(h.base, h);
      } catch (err) {
        this.#log.warn({ err: (err as Error).message }, 'terminal cgroup left behind');
      }
    }
  }
}
