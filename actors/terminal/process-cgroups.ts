/**
 * @module
 * The process limit (`domains.terminal.maxProcessesPerAgent`): a pids cgroup per agent, nested as the agent
 * tree is (`<runtime>/a1/a2/…`), and one leaf per terminal in its agent's. The kernel counts every task (process
 * or thread) of a cgroup's subtree against its `pids.max` and each ancestor's, so a sub-agent spends its
 * parent's count too, and a fork bomb, under any name and in any language, stops at the bound: `fork` fails
 * with EAGAIN. The root agent (the operator) has no bound of its own. The shell joins its leaf before it runs
 * (pty-spawn.ts: a POSIX sh writes its own pid, then execs the terminal's command line), so nothing it starts is
 * ever outside. A terminal's close kills what is left in its leaf, a daemon that left the shell's session
 * (`setsid`, `nohup`) too. Inside the sandbox the cgroup files are read-only, so a command cannot move itself
 * out; an unsandboxed one running as the same user can.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { isAlive } from './terminal-proc.ts';
import { pidsCgroupDir } from '../../machines/terminal/pids-cgroup.ts';
import { ErrorCode, LimitExceededError, RuntimeError } from '../../schemas/errors.ts';

/** Tasks a shell's start needs at once (sh, bwrap and its init, bash, a command substitution of the rc). */
const SHELL_START_TASKS = 4;

/** How long a closed terminal's leftovers get to die after SIGKILL before the leaf is left behind. */
const RELEASE_WAIT_MS = 2_000;

type AgentDir = { dir: string; terminals: number };

export class ProcessCgroups {
  readonly #base: string;
  readonly #max: number;
  readonly #rootAgentId: string;
  readonly #log: Logger;
  /** By agent id: its cgroup (named by a counter: agent ids 64 deep would pass PATH_MAX). */
  readonly #agents = new Map<string, AgentDir>();
  /** By terminal id: its leaf and the agents on the way to it, root first. */
  readonly #leaves = new Map<string, { dir: string; lineage: readonly string[] }>();
  readonly #releasing = new Set<Promise<void>>();
  #next = 0;

  private constructor(base: string, max: number, rootAgentId: string, log: Logger) {
    this.#base = base;
    this.#max = max;
    this.#rootAgentId = rootAgentId;
    this.#log = log;
  }

  /**
   * This runtime's cgroup below its own in the pids hierarchy, or undefined (logged) when there is none it may
   * write: the limit is then not enforced, as the sandbox is not where bubblewrap is missing.
   */
  static open(max: number, rootAgentId: string, log: Logger, texts = procTexts): ProcessCgroups | undefined {
    if (max <= 0) return undefined;
    const where = pidsCgroupDir(...texts());
    const unenforced = (reason: string) => {
      log.warn({ reason }, 'domains.terminal.maxProcessesPerAgent is not enforced on this machine');
      return undefined;
    };
    if (!where.ok) return unenforced(where.reason);
    // One per runtime, not per process: tests run several runtimes in one process.
    const base = join(where.dir, `skein-${process.pid}-${randomBytes(4).toString('hex')}`);
    try {
      removeStale(where.dir);
      mkdirSync(base);
      return new ProcessCgroups(base, max, rootAgentId, log);
    } catch (err) {
      return unenforced(`cannot make a cgroup in ${where.dir}: ${(err as Error).message}`);
    }
  }

  /** The runtime's cgroup directory (tests read the counts there). */
  get base(): string {
    return this.#base;
  }

  /**
   * A leaf for `terminalId` in the cgroup of the last agent of `lineage` (root first), making the agents'
   * cgroups on the way; returns the `cgroup.procs` file the shell writes its pid to (`SpawnSpec.cgroupProcs`).
   */
  join(terminalId: string, lineage: readonly string[]): string {
    let dir = this.#base;
    try {
      for (const agentId of lineage) {
        let agent = this.#agents.get(agentId);
        if (!agent?.dir.startsWith(`${dir}/`)) {
          agent = { dir: join(dir, `a${++this.#next}`), terminals: 0 };
          mkdirSync(agent.dir);
          if (agentId !== this.#rootAgentId) writeFileSync(join(agent.dir, 'pids.max'), String(this.#max));
          this.#agents.set(agentId, agent);
        }
        dir = agent.dir;
      }
      for (const agentId of lineage) this.#agents.get(agentId)!.terminals++;
      const leaf = join(dir, `t-${terminalId}`);
      mkdirSync(leaf);
      this.#leaves.set(terminalId, { dir: leaf, lineage });
      return join(leaf, 'cgroup.procs');
    } catch (err) {
      throw new RuntimeError(
        ErrorCode.Unavailable,
        `cannot make the process-limit cgroup of terminal '${terminalId}' under ${this.#base} ` +
          `(${(err as Error).message}); ask the operator to check the pids cgroup or set ` +
          'domains.terminal.maxProcessesPerAgent to 0',
      );
    }
  }

  /**
   * Why a terminal of the last agent of `lineage` could not start, when it is the bound: the first agent on the
   * way whose subtree is at (or a shell's start short of) its `pids.max`, with the count; else undefined.
   */
  exhausted(lineage: readonly string[]): LimitExceededError | undefined {
    for (const agentId of lineage) {
      const agent = this.#agents.get(agentId);
      if (!agent || agentId === this.#rootAgentId) continue;
      let current: number;
      try {
        current = Number(readFileSync(join(agent.dir, 'pids.current'), 'utf8'));
      } catch {
        continue;
      }
      if (current + SHELL_START_TASKS <= this.#max) continue;
      const who = agentId === lineage[lineage.length - 1] ? `Agent '${agentId}'` : `Its ancestor '${agentId}'`;
      return new LimitExceededError(
        `${who} and its sub-agents run ${current} processes and threads in their terminals, at the bound ` +
          `(domains.terminal.maxProcessesPerAgent = ${this.#max}): no shell can start; stop some ` +
          '(terminal.signal, terminal.close) or ask the operator for a higher bound.',
      );
    }
    return undefined;
  }

  /** After the terminal's shell ended: kills what is left in its leaf, then removes the cgroups it emptied. */
  release(terminalId: string): Promise<void> {
    const leaf = this.#leaves.get(terminalId);
    if (!leaf) return Promise.resolve();
    this.#leaves.delete(terminalId);
    const done = this.#release(leaf.dir, leaf.lineage).catch((err) =>
      this.#log.warn({ terminalId, err: (err as Error).message }, 'process-limit cgroup left behind'),
    );
    this.#releasing.add(done);
    void done.finally(() => this.#releasing.delete(done));
    return done;
  }

  async #release(leaf: string, lineage: readonly string[]): Promise<void> {
    const deadline = Date.now() + RELEASE_WAIT_MS;
    for (;;) {
      const pids = readPids(leaf);
      if (pids.length === 0) break;
      if (Date.now() > deadline) throw new Error(`${pids.length} processes in ${leaf} outlived SIGKILL`);
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {} // gone already
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    rmdirSync(leaf);
    for (const agentId of [...lineage].reverse()) {
      const agent = this.#agents.get(agentId);
      if (!agent || --agent.terminals > 0) continue;
      try {
        rmdirSync(agent.dir); // fails while a child agent's cgroup is still there: removed with that one
        this.#agents.delete(agentId);
      } catch {}
    }
  }

  /** Host stop, after every terminal closed: waits for the releases and removes this runtime's cgroup. */
  async dispose(): Promise<void> {
    for (const terminalId of [...this.#leaves.keys()]) void this.release(terminalId);
    await Promise.all(this.#releasing);
    try {
      removeTree(this.#base);
    } catch (err) {
      this.#log.warn({ err: (err as Error).message }, 'process-limit cgroup left behind');
    }
  }
}

function procTexts(): [string, string] {
  return [readFileSync('/proc/self/mountinfo', 'utf8'), readFileSync('/proc/self/cgroup', 'utf8')];
}

function readPids(dir: string): number[] {
  return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
}

/**
 * The cgroups of runtimes whose process is gone (killed), when empty: a shell still running in one (it outlived a
 * SIGKILLed runtime) keeps it.
 */
function removeStale(dir: string): void {
  for (const name of readdirSync(dir)) {
    const pid = /^skein-(\d+)-[0-9a-f]+$/.exec(name)?.[1];
    if (pid === undefined || Number(pid) === process.pid || isAlive(Number(pid))) continue;
    try {
      removeTree(join(dir, name));
    } catch {}
  }
}

/** Removes a cgroup tree bottom-up (a cgroup directory is removed empty, its control files with it). */
function removeTree(dir: string): void {
  let entries: string[];
  try {
    entries = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return; // not there
  }
  for (const name of entries) removeTree(join(dir, name));
  rmdirSync(dir);
}
