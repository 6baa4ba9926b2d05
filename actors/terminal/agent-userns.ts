/**
 * @module
 * The user namespaces sandboxes start below (machines/terminal/agent-userns.ts says why): one per agent, nested
 * as the agent tree is, below one for all agents. Each is made by a short-lived process, a holder: `unshare
 * --user --map-root-user` runs `holderScript` (the namespace's inotify maxima, then `cat` on a pipe the runtime
 * holds), inside its parent's namespace for a nested one (`nsenter --preserve-credentials`). Once it says it is
 * ready, the runtime opens the namespace (`/proc/<holder>/ns/user`) and ends the holder: the open descriptor keeps
 * the namespace, so no process outside the runtime does, and none that could be killed from outside to give the
 * agent a second share. A sandbox's command line enters its agent's namespace through that descriptor
 * (`/proc/<runtime>/fd/<fd>`) before bwrap makes its own below (pty-spawn.ts).
 *
 * An agent's namespace is kept until the agent has finished and no terminal of it or of a sub-agent is left
 * (counted per terminal, as the cgroups are); all agents' until the host stops. Every one goes with the runtime
 * too (its descriptors close). Where no namespace can be made at all (no `unshare` or `nsenter`, user namespaces
 * off), a sandbox still has its own bound (sandbox-sysctls.ts); that is logged once. Once one was made, a
 * namespace that cannot be (a holder killed or slow under load) fails the terminal's open instead: a sandbox
 * outside its agent's namespace would hold a share of its own.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readlinkSync } from 'node:fs';
import type { Logger } from 'pino';
import { ALL_AGENTS, HOLDER_READY, holderScript, usernsChain } from '../../machines/terminal/agent-userns.ts';
import { inotifyShare, type SandboxKernelLimits } from '../../machines/terminal/sandbox-sysctls.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { which } from './pty-spawn.ts';
import { userInotifyMax } from './sandbox-scratch.ts';

/** How long a holder gets to set its namespace up. */
const HOLDER_START_MS = 5_000;
/** How long after a holder's end what it printed may still come (its pipes held open by something it started). */
const HOLDER_SAID_MS = 250;

/** A namespace the runtime holds open: `path` names it to another process of the runtime's user. */
type Namespace = { fd: number; path: string };
type Entry = { key: string; ns: Promise<Namespace>; terminals: number; finished?: boolean; dropped?: boolean };
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
  /** Whether a namespace was made here once: from then on a failure refuses the terminal, it is not a fallback. */
  #made = false;

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
   * The user namespace the sandbox of `terminalId`, of the last agent of `lineage` (root first), starts below, as
   * a path for `nsenter --user`, making the namespaces on the way. Undefined where none can be made here (logged
   * once: the sandbox then has its own bound only); throws when one was made before and this one cannot be.
   * Counted until `release(terminalId)`.
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
      const { path } = await parent!.ns;
      // The host stopped meanwhile (dispose): its descriptors are closed, the path names nothing.
      if (entries.some((e) => e.dropped)) throw new Error('the runtime is stopping');
      return path;
    } catch (err) {
      this.release(terminalId);
      const why = (err as Error).message;
      if (this.#made)
        throw new RuntimeError(
          ErrorCode.Unavailable,
          `The user namespace of agent '${lineage.at(-1)}' could not be made (${why}): a sandbox outside it would ` +
            'hold an inotify share of its own, so the terminal was not opened. Try terminal.open again; if it ' +
            'keeps failing, read the runtime log.',
          { retryable: true },
        );
      if (!this.#warned) {
        this.#warned = true;
        this.#log.warn(
          { err: why },
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
   * A new entry for `key` below `parent`'s namespace, its holder starting. A namespace that could not be made takes
   * its entry out of the map: the next join tries again (the terminals counted in it keep their objects).
   */
  #entry(key: string, parent: Entry | undefined): Entry {
    const limits = key === ALL_AGENTS ? this.#limits.all : this.#limits.agent;
    const above = parent?.ns;
    const ns = above ? above.then((p) => this.#make(key, limits, p)) : this.#make(key, limits);
    const entry: Entry = { key, ns, terminals: 0 };
    ns.catch(() => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    this.#entries.set(key, entry);
    return entry;
  }

  #drop(entry: Entry): void {
    if (this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key);
    if (entry.dropped) return;
    entry.dropped = true;
    void entry.ns.then(
      ({ fd }) => closeSync(fd),
      () => undefined,
    );
  }

  /**
   * Makes `key`'s namespace (inside `parent`'s) with a holder, opens it once the holder is ready, and ends the
   * holder. Rejects when the holder fails, ends before it is opened, or is not ready within HOLDER_START_MS.
   */
  #make(key: string, limits: SandboxKernelLimits, parent?: Namespace): Promise<Namespace> {
    const { unshare, nsenter, sh } = this.#programs;
    const own = [unshare, '--user', '--map-root-user', '--', sh, '-c', holderScript(limits)];
    const argv = parent ? [nsenter, `--user=${parent.path}`, '--preserve-credentials', '--', ...own] : own;
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH } });
    return new Promise<Namespace>((resolve, reject) => {
      let said = '';
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        child.kill('SIGKILL');
        reject(err);
      };
      const timer = setTimeout(
        () => fail(new Error(`the namespace holder of '${key}' was not ready within ${HOLDER_START_MS} ms`)),
        HOLDER_START_MS,
      );
      child.stdout!.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        if (settled || !said.split('\n').includes(HOLDER_READY)) return;
        let fd: number;
        try {
          // In this turn: a holder that died meanwhile is a zombie not reaped yet, its pid not reused.
          fd = openSync(`/proc/${child.pid}/ns/user`, 'r');
        } catch (err) {
          return fail(new Error(`the namespace of '${key}' could not be opened: ${(err as Error).message}`));
        }
        if (!readlinkSync(`/proc/self/fd/${fd}`).startsWith('user:[')) {
          closeSync(fd);
          return fail(new Error(`the holder of '${key}' gave no user namespace`));
        }
        settled = true;
        clearTimeout(timer);
        // Set as it is made, not as a join returns it: every namespace but all agents' is made once its parent
        // was, so a failure after the first can never be taken for a machine without user namespaces.
        this.#made = true;
        // The descriptor keeps the namespace: the holder's cat ends with its input.
        child.stdin!.end();
        resolve({ fd, path: `/proc/${process.pid}/fd/${fd}` });
      });
      child.stderr!.on('data', (chunk: Buffer) => {
        said += chunk.toString();
      });
      child.stdin!.on('error', () => undefined);
      child.on('error', (err) => fail(err));
      child.on('exit', (code, signal) => {
        const ended = () =>
          fail(new Error(`the namespace holder of '${key}' ended (${signal ?? `exit ${code}`}): ${said.trim()}`));
        // 'exit' can come before the last of what it printed (why unshare failed): told once its pipes close,
        // or after HOLDER_SAID_MS if something it started holds them.
        const cap = setTimeout(ended, HOLDER_SAID_MS);
        cap.unref();
        child.once('close', () => {
          clearTimeout(cap);
          ended();
        });
      });
      // Neither the holder nor its pipes keep the runtime's event loop alive.
      child.unref();
      for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as { unref?: () => void }).unref?.();
    });
  }
}
