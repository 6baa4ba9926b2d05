/**
 * @module
 * Starts shells outside the runtime's event loop. node-pty forks the runtime itself, synchronously, and a
 * fork costs time in proportion to the forking process's memory: ~10-35 ms of a loop that every agent
 * shares, per terminal.open. Here the runtime only opens the PTY (no fork) and keeps its master; a small
 * helper process (`pty-zygote-child.mjs`, started on first use) starts the shell on the slave, in a new
 * session with the slave as its controlling terminal, and reports its pid and, later, its exit. The master
 * is then wrapped in node-pty's own terminal object, so reading, writing, flow control, resize and the
 * exit-after-close ordering are node-pty's as before.
 *
 * `spawn` resolves with undefined when the helper cannot be used (neither sh nor setsid on PATH, or the helper
 * failed to start or died): the caller then forks in process as before, slower but the same terminal.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { closeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { type IPty, spawn as ptySpawn } from '@lydell/node-pty';
import type { Logger } from 'pino';
import { type DirOp, makeDirsHere } from './cgroup-bounds.ts';
import { unmakeDirsSync } from './cgroup-dirs.mjs';
import { commandLine, type SpawnSpec, terminalEnv, which } from './pty-spawn.ts';
import { LINE_SETTINGS, sessionCommand } from './session-command.ts';
import { readStat } from './terminal-proc.ts';

type NativeTerm = { fd: number; pid: number; pty: string };
type OnExit = (exitCode: number, signal: number) => void;
/** node-pty's native binding: the same module object its UnixTerminal calls `fork` on. */
type Native = {
  fork: (...args: unknown[]) => NativeTerm;
  open: (cols: number, rows: number) => { master: number; slave: number; pty: string };
};
type FromChild =
  | { type: 'ready' }
  | { type: 'spawned'; id: number; pid: number }
  | { type: 'failed'; id: number; error: string }
  | { type: 'made'; id: number }
  | { type: 'unmade'; id: number; error: string }
  | { type: 'exit'; pid: number; exitCode: number; signal: number };

// Relative to the root, not this file: the same path from actors/terminal/ and from the bundle in dist/cli/.
const CHILD = fileURLToPath(new URL('../../actors/terminal/pty-zygote-child.mjs', import.meta.url));

function loadNative(): Native | undefined {
  try {
    const req = createRequire(import.meta.url);
    // Resolved from node-pty's own folder, so this is the very module object node-pty's UnixTerminal uses.
    const from = createRequire(req.resolve('@lydell/node-pty'));
    const native = from(`@lydell/node-pty-${process.platform}-${process.arch}/pty.node`) as Partial<Native>;
    return typeof native.fork === 'function' && typeof native.open === 'function' ? (native as Native) : undefined;
  } catch {
    return undefined;
  }
}

export class PtyZygote {
  readonly #log: Logger;
  #child: ChildProcess | undefined;
  #ready: Promise<boolean> | undefined;
  #next = 0;
  readonly #pending = new Map<number, { resolve: (pid: number) => void; reject: (e: Error) => void }>();
  /** Exit callbacks by shell pid; an exit reported before its terminal was built waits in `#early`. */
  readonly #exits = new Map<number, OnExit>();
  readonly #early = new Map<number, [number, number]>();
  /** Given up for good (no sh nor setsid, no native binding, the helper would not start): spawn in process. */
  #off = false;
  /** Stopped (`close`, at shutdown): no helper is started again, and no shell either (`spawn`). */
  #closed = false;
  readonly #native: Native | undefined;
  readonly #setsid: string | undefined;
  readonly #stty: string | undefined;
  readonly #sh: string | undefined;

  constructor(log: Logger, options: { enabled?: boolean } = {}) {
    this.#log = log.child({ actor: 'pty-zygote' });
    this.#native = options.enabled === false ? undefined : loadNative();
    this.#setsid = which('setsid');
    this.#stty = which('stty');
    this.#sh = which('sh');
    this.#off = !this.#native || (!this.#sh && !this.#setsid);
  }

  /**
   * The shell for `spec` started by the helper, as node-pty's terminal object; undefined: spawn in process.
   * After `close` it throws: an open still on its way at shutdown starts no shell anywhere.
   */
  async spawn(spec: SpawnSpec, rcPath: string, rcDir: string): Promise<IPty | undefined> {
    if (this.#closed) throw stoppedError();
    if (this.#off || !(await this.#start())) return undefined;
    if (this.#closed) throw stoppedError();
    const native = this.#native!;
    // Throws (the spawn fails as in process) for a missing prlimit or bwrap: checked before anything opens.
    const { file, args } = commandLine(spec, rcPath, rcDir);
    const env = { ...terminalEnv(spec), PWD: spec.cwd, TERM: 'xterm-256color' };
    const opened = native.open(spec.cols, spec.rows);
    let pid: number;
    try {
      pid = await this.#request({ tty: opened.pty, file, args, env, cwd: spec.cwd });
    } catch (err) {
      closeSync(opened.master);
      if (this.#closed) throw stoppedError();
      this.#log.warn({ err, terminalId: spec.terminalId }, 'the shell helper did not start the shell; forking here');
      return undefined;
    } finally {
      // The shell holds the slave now (or never will): the master sees EIO once the shell's side closes.
      closeSync(opened.slave);
    }
    return this.#wrap(native, { fd: opened.master, pid, pty: opened.pty }, spec, file, args);
  }

  /**
   * A terminal's cgroup steps (`AgentCgroups.join`) run in the helper's process, in order with every other
   * batch and before the spawn requested after them; here, synchronously, when the helper is not in use.
   */
  async makeDirs(ops: readonly DirOp[]): Promise<void> {
    // While the helper lives, here too after spawns moved in process (`#wrap`): batches queued there come first.
    // After `close`, here: a helper started for an open still on its way at shutdown would outlive the runtime.
    if (!this.#child?.connected && (this.#off || this.#closed || !(await this.#start()))) return makeDirsHere(ops);
    const child = this.#child;
    try {
      await new Promise<number>((resolve, reject) => {
        if (!child?.connected) return reject(new Error('the shell helper is not running'));
        const id = this.#next++;
        this.#pending.set(id, { resolve, reject });
        this.#hold();
        child.send({ type: 'dirs', id, ops });
      });
    } catch (err) {
      // Refused by the helper: the batch failed. The helper gone with it (the batches it held are rejected in the
      // order they were sent, so they are made here in that order): made here, as a spawn then forks here, after
      // removing what the helper may have made of it before it died.
      if (child?.connected) throw err;
      unmakeDirsSync(ops);
      return makeDirsHere(ops);
    }
  }

  /** Stops the helper; shells it started keep running until their terminals close them. */
  close(): void {
    this.#closed = true;
    const child = this.#child;
    this.#child = undefined;
    this.#ready = undefined;
    for (const p of this.#pending.values()) p.reject(new Error('the shell helper was stopped'));
    this.#pending.clear();
    if (child?.connected) child.disconnect();
  }

  /** node-pty's UnixTerminal around a PTY it did not fork: its `fork` answers with the helper's shell once. */
  #wrap(native: Native, term: NativeTerm, spec: SpawnSpec, file: string, args: string[]): IPty {
    const fork = native.fork;
    let onExit: OnExit | undefined;
    native.fork = (...forkArgs: unknown[]) => {
      onExit = forkArgs[10] as OnExit;
      return term;
    };
    let pty: IPty;
    try {
      pty = ptySpawn(file, args, { name: 'xterm-256color', cols: spec.cols, rows: spec.rows, cwd: spec.cwd });
    } finally {
      native.fork = fork;
    }
    if (!onExit) {
      // Not node-pty's binding after all (another copy of the package): never leave the shell unowned.
      closeSync(term.fd);
      process.kill(term.pid, 'SIGKILL');
      this.#off = true;
      throw new Error('node-pty did not take the helper-started shell; terminals spawn in process from now on');
    }
    const early = this.#early.get(term.pid);
    if (early) {
      this.#early.delete(term.pid);
      onExit(...early);
    } else {
      this.#exits.set(term.pid, onExit);
    }
    return pty;
  }

  #request(m: {
    tty: string;
    file: string;
    args: string[];
    env: Record<string, string>;
    cwd: string;
  }): Promise<number> {
    return new Promise((resolve, reject) => {
      const child = this.#child;
      if (!child?.connected) {
        reject(new Error('the shell helper is not running; open the terminal again'));
        return;
      }
      const id = this.#next++;
      this.#pending.set(id, { resolve, reject });
      this.#hold();
      const argv = this.#sh ? sessionCommand(this.#sh, m.tty, this.#stty, m.file, m.args) : undefined;
      const spawn = { type: 'spawn', id, argv, setsid: this.#setsid, stty: this.#stty, settings: LINE_SETTINGS };
      child.send({ ...m, ...spawn });
    });
  }

  #start(): Promise<boolean> {
    if (this.#closed) return Promise.resolve(false);
    if (this.#ready) return this.#ready;
    this.#ready = new Promise<boolean>((resolve) => {
      let child: ChildProcess;
      try {
        child = fork(CHILD, [], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'], serialization: 'json' });
      } catch (err) {
        this.#log.warn({ err }, 'shell helper could not start; terminals spawn in process');
        this.#off = true;
        resolve(false);
        return;
      }
      this.#child = child;
      // Never what keeps the runtime alive once idle (open terminals hold it through their PTYs); while it
      // starts or starts a shell, its channel does (`#hold`).
      child.unref();
      child.on('message', (m: FromChild) => this.#receive(m, resolve));
      // Every error, not the first only: a send on a channel that just closed reports here too.
      child.on('error', (err) => this.#log.warn({ err }, 'shell helper failed'));
      child.once('exit', (code, signal) => {
        if (this.#child === child) {
          this.#log.warn({ code, signal }, 'shell helper exited; terminals spawn in process from now on');
          this.#off = true;
        }
        for (const p of this.#pending.values()) p.reject(new Error('the shell helper exited; open the terminal again'));
        this.#pending.clear();
        this.#orphaned();
        resolve(false);
      });
    });
    return this.#ready;
  }

  /**
   * The helper died with shells of open terminals still running: nobody reports their exits any more, so
   * each is watched until it is gone, then reported as killed (its status is lost with the helper).
   */
  #orphaned(): void {
    const watched = [...this.#exits];
    this.#exits.clear();
    for (const [pid, onExit] of watched) {
      const timer = setInterval(() => {
        let gone = false;
        try {
          process.kill(pid, 0);
          // A zombie nobody reaps (no init that reaps in a container) has ended too.
          gone = readStat(pid)?.state === 'Z';
        } catch {
          gone = true;
        }
        if (gone) {
          clearInterval(timer);
          this.#log.warn({ pid }, 'shell gone after its helper died; its exit status is unknown, reported as SIGKILL');
          onExit(0, 9);
        }
      }, 250);
      timer.unref();
    }
  }

  /** The channel keeps this process alive only while an answer is awaited. */
  #hold(): void {
    if (this.#pending.size > 0) this.#child?.channel?.ref();
    else this.#child?.channel?.unref();
  }

  #receive(m: FromChild, ready: (ok: boolean) => void): void {
    if (m.type === 'ready') {
      ready(true);
      this.#hold();
    } else if (m.type === 'spawned' || m.type === 'failed' || m.type === 'made' || m.type === 'unmade') {
      const p = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      this.#hold();
      if (m.type === 'spawned') p?.resolve(m.pid);
      else if (m.type === 'made') p?.resolve(0);
      else if (m.type === 'unmade') p?.reject(new Error(m.error));
      else p?.reject(new Error(`the shell could not be started: ${m.error}`));
    } else if (m.type === 'exit') {
      const onExit = this.#exits.get(m.pid);
      this.#exits.delete(m.pid);
      if (onExit) onExit(m.exitCode, m.signal);
      else this.#early.set(m.pid, [m.exitCode, m.signal]);
    }
  }
}

function stoppedError(): Error {
  return new Error('the shell helper was stopped (the terminals are shutting down); no shell was started');
}
