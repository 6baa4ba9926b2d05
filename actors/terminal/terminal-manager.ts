/**
 * @module
 * All terminals of one host: the handler behind every terminal.* command.
 * Each method maps 1:1 onto a command, validates its data, checks ownership
 * and limits, and returns the reply fields (throwing RuntimeError on refusal).
 * Facts go out through the injected `emit` (events stream) and `emitOutput`
 * (output stream); both must resolve once the fact is durably appended.
 * Shared resources (domains.terminal.resources) are held through resource-locks.ts.
 */
import type { z } from 'zod';
import type { Logger } from 'pino';
import { finishedAgentError } from '../../machines/agent/agent.ts';
import { ErrorCode, NotFoundError, RuntimeError } from '../../schemas/errors.ts';
import { newId } from '../../schemas/ids.ts';
import {
  type ExecReply,
  TerminalClose,
  TerminalConfig,
  TerminalExec,
  TerminalOpen,
  TerminalRead,
  TerminalResize,
  TerminalSignal,
  TerminalWait,
  TerminalWrite,
} from '../../schemas/terminal.ts';
import type { IPty } from '@lydell/node-pty';
import { openSpec } from './pty-spawn.ts';
import { AgentCgroups } from './agent-cgroups.ts';
import { AgentUserns } from './agent-userns.ts';
import { PtyZygote } from './pty-zygote.ts';
import { makeRcFile, rcRemovals } from './shell-integration.ts';
import { releaseShellFiles, SandboxScratch } from './sandbox-scratch.ts';
import { guardedTerminals, ScratchGuard } from './scratch-guard.ts';
import { type DataOf, parse } from './command-data.ts';
import { ResourceLocks } from './resource-locks.ts';
import { assertQueueRoom, checkedTimeout, execReply, readOutput, type ReadReply, settle } from './terminal-exec.ts';
import type { OutputFact } from './terminal-output.ts';
import type { Emit } from './terminal-job.ts';
import { normalizeSignal } from './terminal-proc.ts';
import { TerminalSession } from './terminal-session.ts';
import { assertRoom, ownedSession, shuttingDownError } from './terminal-access.ts';

export type TerminalManagerOptions = {
  /** `domains.terminal` of the config (validated here; defaults fill the gaps). */
  config?: z.input<typeof TerminalConfig>;
  log: Logger;
  emit: Emit;
  emitOutput: (fact: OutputFact) => Promise<void>;
  /**
   * The agent's status if it has finished (completed, failed, cancelled), else undefined. Asked in the turn a
   * terminal is registered: a finish releases the agent's terminals once its fact is folded, so an open that
   * passed the gate before the finish either registers before that release (and is closed by it) or is
   * refused here.
   */
  finished?: (agentId: string) => string | undefined;
  /** Start shells in the helper process (pty-zygote.ts), off the event loop; default true. False: fork here. */
  spawnHelper?: boolean;
  /**
   * The agents from the root (or the top one on this host) down to `agentId`: the process limit's cgroups
   * nest as they do (agent-cgroups.ts). Default: the agent alone.
   */
  lineage?: (agentId: string) => readonly string[];
  /** The runtime's root agent: the operator's, whose processes are not bounded. */
  rootAgentId?: string;
  /** Where sandboxes' scratch directories go (`<dataDir>/sandbox`); default: a new temporary directory. */
  scratchDir?: string;
  /**
   * Told in the same turn a command line is typed (its Ctrl-E Ctrl-U first clears what the shell's line held):
   * the gate forgets the unfinished line it judged earlier writes with, then and only then. Cleared when an exec
   * was merely asked for, a refused exec left the shell's line as it was and the gate judging an empty one.
   */
  onCommandLine?: (terminalId: string) => void;
};

/** Recently closed ids, for a better error than "does not exist". */
const CLOSED_IDS_KEPT = 1000;

export class TerminalManager {
  readonly config: TerminalConfig;
  readonly log: Logger;
  #emit: Emit;
  #emitOutput: (fact: OutputFact) => Promise<void>;
  #sessions = new Map<string, TerminalSession>();
  #closedIds = new Set<string>();
  #resources: ResourceLocks;
  #shuttingDown = false;
  #finished: (agentId: string) => string | undefined;
  #zygote: PtyZygote;
  #lineage: (agentId: string) => readonly string[];
  #onCommandLine: ((terminalId: string) => void) | undefined;
  /** The per-agent limits' cgroups, where the machine has a pids or memory hierarchy to make them in. */
  readonly cgroups: AgentCgroups | undefined;
  readonly #scratch: SandboxScratch;
  /** One user namespace per agent for its sandboxes (inotify per agent); undefined where none can be made. */
  readonly #userns: AgentUserns | undefined;
  /** The sandboxes' disk bounds (maxScratchPerAgent, scratchDiskReserve); undefined when both are 0. */
  readonly scratchGuard: ScratchGuard | undefined;

  constructor(options: TerminalManagerOptions) {
    this.#finished = options.finished ?? (() => undefined);
    this.config = TerminalConfig.parse(options.config ?? {});
    this.log = options.log.child({ actor: 'terminal' });
    this.#zygote = new PtyZygote(this.log, { enabled: options.spawnHelper ?? true });
    this.#emit = options.emit;
    this.#emitOutput = options.emitOutput;
    this.#resources = new ResourceLocks(this.config.resources, this.config.agentPriority, this.#emit);
    this.#lineage = options.lineage ?? ((agentId) => [agentId]);
    this.#onCommandLine = options.onCommandLine;
    const shells = (id: string) => {
      const s = this.#sessions.get(id);
      return s ? [s.pty.pid, s.shellPid] : [];
    };
    this.cgroups = AgentCgroups.open(this.config, options.rootAgentId ?? 'main', this.log, shells);
    this.#scratch = new SandboxScratch(options.scratchDir, this.config.sandboxInotifyShare);
    const shares = { share: this.config.sandboxInotifyShare, allShare: this.config.sandboxInotifyShareAllAgents };
    const root = options.rootAgentId ?? 'main';
    this.#userns = AgentUserns.open(shares, root, this.log);
    this.scratchGuard = ScratchGuard.start({
      base: this.#scratch.base,
      limits: { maxPerAgent: this.config.maxScratchPerAgent, reserve: this.config.scratchDiskReserve },
      checkMs: this.config.scratchCheckMs,
      terminals: () =>
        guardedTerminals(this.#sessions.values(), this.#lineage, root, (id) => this.cgroups?.procsFile(id)),
      close: (terminalId, why) => void this.#sessions.get(terminalId)?.close('disk-limit', 0, why),
      log: this.log,
    });
  }

  /**
   * terminal.open. `workspace`: the agent's workspace (relative cwd base, sandbox writable root); `commandId`:
   * the command's id, recorded as the cause of terminal.opened.
   */
  async open(agentId: string, data: unknown, context: { workspace?: string; commandId?: string } = {}) {
    const d = parse(TerminalOpen, data);
    this.#assertRoom(agentId);
    const spec = openSpec(newId('t'), agentId, d, this.config, context.workspace);
    const { shellPath } = spec;
    if (spec.sandbox) Object.assign(spec, this.#scratch.of(spec.terminalId));
    // The shell starts in the helper process, off this event loop (pty-zygote.ts); undefined: fork here.
    const rc = await makeRcFile();
    const typed = this.#onCommandLine;
    if (typed) {
      const write = rc.writeCommand;
      rc.writeCommand = (command) => {
        write(command);
        typed(spec.terminalId);
      };
    }
    const lineage = this.#lineage(agentId);
    let pty: IPty | undefined;
    try {
      if (this.cgroups) {
        spec.cgroupProcs = await this.cgroups.join(spec.terminalId, lineage, (ops) => this.#zygote.makeDirs(ops));
        // The grace period the shell's join waits for starts now, and runs while the shell is started.
        this.cgroups.warmJoin();
      }
      const userns = spec.sandbox ? await this.#userns?.join(spec.terminalId, lineage) : undefined;
      if (userns) spec.userns = userns;
      if (this.#shuttingDown) throw shuttingDownError();
      pty = await this.#zygote.spawn(spec, rc.path, rc.dir);
      // Checked again in the turn the terminal is registered: other opens or a finish came meanwhile.
      this.#assertRoom(agentId);
      const finished = this.#finished(agentId);
      if (finished) throw finishedAgentError(agentId, finished, 'open terminals');
    } catch (err) {
      const bound = this.cgroups?.exhausted(lineage);
      pty?.kill('SIGKILL');
      void this.cgroups?.release(spec.terminalId);
      this.#userns?.release(spec.terminalId);
      // No agent ever reached this shell: its rc directory, placeholders and scratch can go at once.
      releaseShellFiles(spec.terminalId, rc);
      throw bound ?? (this.#shuttingDown ? shuttingDownError() : err);
    }
    const session = new TerminalSession({
      spec,
      started: { rc, pty },
      config: this.config,
      log: this.log,
      emit: this.#emit,
      emitOutput: this.#emitOutput,
      acquire: (s, job) => this.#resources.acquire(s, job),
      release: (s, job, reason) => this.#resources.release(s, job, reason),
      onClosed: (s) => this.#onClosed(s),
      ...(this.cgroups ? { limitsHit: () => this.cgroups?.hits(spec.terminalId) ?? [] } : {}),
    });
    this.#sessions.set(session.terminalId, session);
    try {
      await session.open(this.config.openTimeoutMs, context.commandId);
    } catch (err) {
      // A shell that could not fork for the process limit says only that it exited: say why.
      const bound = this.cgroups?.exhausted(lineage);
      await session.close('requested', 0);
      throw bound ?? err;
    }
    return {
      terminalId: session.terminalId,
      pid: session.pty.pid,
      tty: session.tty,
      cwd: session.cwd,
      cols: session.cols,
      rows: session.rows,
      shell: shellPath,
      sandbox: session.spec.sandbox,
    };
  }

  /**
   * Runs a command; `onEnded` is called at its end mark, while its finish is still being appended (work that
   * needs only the command to have ended, like collecting its file changes, overlaps that append).
   */
  async exec(agentId: string, data: unknown, onEnded?: () => void): Promise<ExecReply> {
    return this.execChecked(agentId, parse(TerminalExec, data), { onEnded });
  }

  /** `exec` with data the codec already checked against TerminalExec (the host's handler): not parsed again. */
  async execChecked(
    agentId: string,
    d: DataOf<typeof TerminalExec>,
    { onEnded, expectDir }: { onEnded?: (() => void) | undefined; expectDir?: string | undefined } = {},
  ): Promise<ExecReply> {
    const s = this.#owned(agentId, d.terminalId);
    const timeoutMs = checkedTimeout(d.timeoutMs, this.config.maxTimeoutMs) ?? this.config.defaultTimeoutMs;
    const resources = [...new Set(d.resources ?? [])];
    const unknown = this.#resources.unknown(resources);
    if (unknown.length) {
      throw new RuntimeError(
        ErrorCode.InvalidMessage,
        `Resource '${unknown[0]}' is not declared; use one of: ` +
          `${this.config.resources.join(', ') || '(none configured)'}.`,
      );
    }
    assertQueueRoom(s, this.config.maxQueuedPerTerminal);
    const job = await s.submit(d.command, timeoutMs, resources, expectDir);
    if (onEnded) {
      if (job.outputEnd !== undefined) onEnded();
      else job.onEnded = onEnded;
    }
    await settle(job, d.yieldMs);
    return execReply(s, job, d.maxBytes ?? this.config.defaultMaxBytes);
  }

  async wait(agentId: string, data: unknown): Promise<ExecReply> {
    const d = parse(TerminalWait, data);
    const s = this.#owned(agentId, d.terminalId, true);
    const job = d.commandId ? s.jobs.get(d.commandId) : s.lastJob;
    if (!job) {
      throw new NotFoundError(
        d.commandId
          ? `Command '${d.commandId}' is not known on terminal ` +
              `'${d.terminalId}'; use the commandId from a terminal.exec reply.`
          : `Terminal '${d.terminalId}' has run no command; start one with terminal.exec.`,
      );
    }
    await settle(job, checkedTimeout(d.timeoutMs, this.config.maxTimeoutMs));
    return execReply(s, job, d.maxBytes ?? this.config.defaultMaxBytes);
  }

  async read(agentId: string, data: unknown): Promise<ReadReply> {
    const d = parse(TerminalRead, data);
    const s = this.#owned(agentId, d.terminalId, true);
    return readOutput(
      s,
      d.cursor,
      d.maxBytes ?? this.config.defaultMaxBytes,
      d.screen === true && s.status !== 'closed',
    );
  }

  async write(agentId: string, data: unknown) {
    const d = parse(TerminalWrite, data);
    const s = this.#owned(agentId, d.terminalId);
    const bytes = await s.write(d.data, d.secret === true);
    return { terminalId: s.terminalId, bytes };
  }

  async resize(agentId: string, data: unknown) {
    const d = parse(TerminalResize, data);
    const s = this.#owned(agentId, d.terminalId);
    await s.resize(d.cols, d.rows);
    return { terminalId: s.terminalId, cols: d.cols, rows: d.rows };
  }

  async signal(agentId: string, data: unknown) {
    const d = parse(TerminalSignal, data);
    normalizeSignal(d.signal);
    const s = this.#owned(agentId, d.terminalId);
    return { terminalId: s.terminalId, ...(await s.signal(d.signal)) };
  }

  /** terminal.pause-all: `all` (the root agent asking) pauses every terminal of the host. */
  async pauseAll(agentId: string, options: { all?: boolean } = {}) {
    const terminalIds: string[] = [];
    for (const s of this.#scope(agentId, options.all)) if (await s.pause()) terminalIds.push(s.terminalId);
    return { terminalIds };
  }

  async resumeAll(agentId: string, options: { all?: boolean } = {}) {
    const terminalIds: string[] = [];
    for (const s of this.#scope(agentId, options.all)) if (await s.resume()) terminalIds.push(s.terminalId);
    return { terminalIds };
  }

  async close(agentId: string, data: unknown) {
    const d = parse(TerminalClose, data);
    const s = this.#owned(agentId, d.terminalId);
    await s.close('requested', d.graceMs ?? this.config.closeGraceMs);
    return { terminalId: s.terminalId, exitCode: s.closed?.exitCode ?? null, signal: s.closed?.signal ?? null };
  }

  /** When an agent is cancelled, removed or finished: close all its terminals (but `keep`, a worker's). */
  async closeAllForAgent(agentId: string, keep?: string): Promise<string[]> {
    const mine = [...this.#sessions.values()].filter((s) => s.agentId === agentId && s.terminalId !== keep);
    await Promise.all(mine.map((s) => s.close('agent-closed', this.config.closeGraceMs)));
    this.#userns?.finished(agentId);
    return mine.map((s) => s.terminalId);
  }

  list(agentId: string, options: { all?: boolean } = {}) {
    return {
      terminals: this.#scope(agentId, options.all).map((s) => ({
        terminalId: s.terminalId,
        agentId: s.agentId,
        pid: s.pty.pid,
        cwd: s.cwd,
        status: s.status,
        queued: s.queue.length,
      })),
    };
  }

  /** Refuses an open while shutting down or at the per-agent or per-host limit. */
  #assertRoom(agentId: string): void {
    assertRoom([...this.#sessions.values()], agentId, this.config, this.#shuttingDown);
  }

  /** Host stop: close every terminal (each one's deadlines stop with its machine). */
  async shutdown(): Promise<void> {
    this.#shuttingDown = true;
    await Promise.all([...this.#sessions.values()].map((s) => s.close('shutdown', this.config.closeGraceMs)));
    await rcRemovals();
    this.#zygote.close();
    this.scratchGuard?.dispose();
    await this.cgroups?.dispose();
    this.#userns?.dispose();
    await this.#scratch.dispose();
  }

  /** The live session (tests, replay tooling). */
  get(terminalId: string): TerminalSession | undefined {
    return this.#sessions.get(terminalId);
  }

  get size(): number {
    return this.#sessions.size;
  }

  #scope(agentId: string, all?: boolean): TerminalSession[] {
    return [...this.#sessions.values()].filter(
      (s) => (all || s.agentId === agentId) && s.status !== 'closed' && s.status !== 'closing',
    );
  }

  /** Throws what a command on `terminalId` by `agentId` would: not found, closed, or another agent's. */
  assertOwned(agentId: string, terminalId: string): void {
    this.#owned(agentId, terminalId);
  }

  #owned(agentId: string, terminalId: string, allowClosed = false): TerminalSession {
    return ownedSession(this.#sessions, this.#closedIds, { agentId, terminalId, allowClosed });
  }

  #onClosed(s: TerminalSession): void {
    this.#sessions.delete(s.terminalId);
    this.#closedIds.add(s.terminalId);
    if (this.#closedIds.size > CLOSED_IDS_KEPT) this.#closedIds.delete(this.#closedIds.values().next().value!);
    this.#resources.releaseTerminal(s.terminalId);
    // What the shell left running (a daemon out of its session) dies with the terminal.
    void this.cgroups?.release(s.terminalId);
    this.#userns?.release(s.terminalId);
  }
}
