/**
 * @module
 * The user namespaces sandboxes start below (machines/terminal/agent-userns.ts says why): one per agent, nested
 * as the agent tree is, below one for all agents. Each is made and held by a small process, a holder: `unshare
 * --user --map-root-user` runs `holderScript` (the namespace's inotify maxima, then `cat` on a pipe the runtime
 * holds), inside its parent's namespace for a nested one (`nsenter --preserve-credentials`). A sandbox's command
 * line enters its agent's namespace the same way before bwrap makes its own below (pty-spawn.ts).
 *
 * An agent's holder lives until the agent has finished and no terminal of it or of a sub-agent is left (counted
 * per terminal, as the cgroups are); all agents' until the host stops. Every holder goes with the runtime too (its
 * pipe ends). Where no namespace can be made
 * (no `unshare` or `nsenter`, user namespaces off), a sandbox still has its own bound (sandbox-sysctls.ts); that
 * is logged once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Logger } from 'pino';
import { ALL_AGENTS, HOLDER_READY, holderScript, usernsChain } from '../../machines/terminal/agent-userns.ts';
import { inotifyShare, type SandboxKernelLimits } from '../../machines/terminal/sandbox-sysctls.ts';
import { which } from './pty-spawn.ts';
import { userInotifyMax } from './sandbox-scratch.ts';

/** How long a holder gets to set its namespace up. */
const HOLDER_START_MS = 5_000;

type Holder = { pid: number; child: ChildProcess };
type Entry = { key: string; holder: Promise<Holder>; terminals: number; finished?: boolean };
type Programs = { unshare: string; nsenter: string; sh: string };

export class AgentUserns {
  readonly #programs: Programs;
  readonly #limits: { all: SandboxKernelLimits; agent: SandboxKernelLimits };
  readonly #rootAgentId: string;
  readonly #log: Logger;
  readonly #entries = new Map<string, Entry>();
  /** Per terminal, the entries it counts in (objects: a key's entry may be replaced after its holder failed). */
  readonly #leaves = new Map<string, Entry[]>();
  #warned = false;

  /**
   * The namespaces of a terminal manager whose sandboxes hold `share` of the runtime user's inotify maxima per
   * agent and `allShare` for all agents; undefined (logged) where `unshare`, `nsenter` or `sh` is missing.
   */
  static open(
    shares: { share: `${number}%`; allShare: `${number}%` },
    rootAgentId: string,
    log: Logger,
  ): AgentUserns | undefined {
    const [unshare, nsenter, sh] = ['unshare', 'nsenter', 'sh'].map((p) => which(p));
    if (!unshare || !nsenter || !sh) {
      log.warn(
        { missing: ['unshare', 'nsenter', 'sh'].filter((_, i) => ![unshare, nsenter, sh][i]) },
        "inotify is bounded per sandboxed terminal only, not per agent: install util-linux's unshare and nsenter",
      );
      return undefined;
    }
    const max = userInotifyMax();
    const limits = { all: inotifyShare(shares.allShare, max), agent: inotifyShare(shares.share, max) };
    return new AgentUserns({ unshare, nsenter, sh }, limits, rootAgentId, log);
  }

  private constructor(
    programs: Programs,
    limits: { all: SandboxKernelLimits; agent: SandboxKernelLimits },
    rootAgentId: string,
    log: Logger,
  ) {
    this.#programs = programs;
    this.#limits = limits;
    this.#rootAgentId = rootAgentId;
    this.#log = log;
  }

  /**
   * The user namespace (`/proc/<pid>/ns/user`) the sandbox of `terminalId`, of the last agent of `lineage` (root
   * first), starts below, making the namespaces on the way; undefined where they cannot be made (logged once: the
   * sandbox then has its own bound only). Counted until `release(terminalId)`.
   */
  async join(terminalId: string, lineage: readonly string[]): Promise<string | undefined> {
    const chain = usernsChain(lineage, this.#rootAgentId);
    const entries: Entry[] = [];
    // In one turn, no await: a release in between would see a count it did not make.
    for (const key of chain) {
      const entry = this.#entries.get(key) ?? this.#entry(key, entries.at(-1));
      entry.terminals++;
      entries.push(entry);
    }
    const parent = entries.at(-1);
    this.#leaves.set(terminalId, entries);
    try {
      return `/proc/${(await parent!.holder).pid}/ns/user`;
    } catch (err) {
      this.release(terminalId);
      if (!this.#warned) {
        this.#warned = true;
        this.#log.warn(
          { err: (err as Error).message },
          'no user namespace per agent here: inotify is bounded per sandboxed terminal only',
        );
      }
      return undefined;
    }
  }

  /** The terminal's sandbox has ended: its agents' namespaces no terminal needs any more go. */
  release(terminalId: string): void {
    const entries = this.#leaves.get(terminalId);
    if (!entries) return;
    this.#leaves.delete(terminalId);
    for (const entry of [...entries].reverse()) {
      // Kept while the agent lives (a holder costs a process start, ~30 ms from this big process); all agents'
      // until the host stops.
      if (--entry.terminals > 0 || !entry.finished) continue;
      this.#drop(entry);
    }
  }

  /** The agent has finished: its namespace goes with its last terminal (now, if none is left). */
  finished(agentId: string): void {
    const entry = this.#entries.get(agentId);
    if (!entry || agentId === ALL_AGENTS) return;
    entry.finished = true;
    if (entry.terminals === 0) this.#drop(entry);
  }

  /** Host stop, after every terminal closed. */
  dispose(): void {
    for (const terminalId of [...this.#leaves.keys()]) this.release(terminalId);
    for (const entry of [...this.#entries.values()]) this.#drop(entry);
  }

  /**
   * A new entry for `key` below `parent`'s namespace, its holder starting. A holder that fails to start or ends
   * unasked (killed from outside) takes its entry out of the map: the next join tries again (the terminals
   * counted in it keep their objects).
   */
  #entry(key: string, parent: Entry | undefined): Entry {
    const limits = key === ALL_AGENTS ? this.#limits.all : this.#limits.agent;
    const above = parent?.holder;
    const holder = above ? above.then((h) => this.#spawn(key, limits, h)) : this.#spawn(key, limits);
    const entry: Entry = { key, holder, terminals: 0 };
    const forget = () => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    };
    holder.then((h) => h.child.once('exit', forget), forget);
    this.#entries.set(key, entry);
    return entry;
  }

  #drop(entry: Entry): void {
    if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key);
    void entry.holder.then(
      (h) => h.child.kill('SIGKILL'),
      () => undefined,
    );
  }

  #spawn(key: string, limits: SandboxKernelLimits, parent?: Holder): Promise<Holder> {
    const { unshare, nsenter, sh } = this.#programs;
    const own = [unshare, '--user', '--map-root-user', '--', sh, '-c', holderScript(limits)];
    const argv = parent ? [nsenter, `--user=/proc/${parent.pid}/ns/user`, '--preserve-credentials', '--', ...own] : own;
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
    return new Promise<Holder>((resolve, reject) => {
      let said = '';
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the namespace holder of '${key}' was not ready within ${HOLDER_START_MS} ms`));
      }, HOLDER_START_MS);
      child.stdout!.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        if (!said.split('\n').includes(HOLDER_READY)) return;
        clearTimeout(timer);
        resolve({ pid: child.pid!, child });
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        said += chunk.toString();
      });
      child.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      child.on('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`the namespace holder of '${key}' ended (${signal ?? `exit ${code}`}): ${said.trim()}`));
      });
      // Neither the holder nor its pipes keep the runtime's event loop alive.
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as { unref?: () => void }).unref?.();
    });
  }
}
