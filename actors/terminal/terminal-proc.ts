/**
 * @module
 * Linux /proc readings for terminals: the foreground process group of a tty,
 * the processes of a session, and whether a process is blocked reading its
 * terminal (wchan `wait_woken`/`n_tty_read` with a descriptor on that tty) or
 * polling it the way a REPL does (see `ttyPoller`). All reads
 * tolerate processes vanishing mid-read. Elsewhere they return "unknown".
 */
import { execFile, spawnSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, readSync, readlinkSync, statSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import { SIGNALS } from '../../schemas/terminal.ts';

export type ProcStat = {
  pid: number;
  comm: string;
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
  tpgid: number;
  /** When the process started, in clock ticks after boot (field 22): with the pid, names one process for good. */
  startTime: string;
};

/** One buffer for every stat read: a line is ~300 bytes (a comm of 64 at most, 52 numbers). */
const STAT_BUF = Buffer.allocUnsafe(4096);

/**
 * `/proc/<pid>/stat`'s text, read into one shared buffer: open, read, close. readFileSync adds an fstat and a
 * buffer per file, ~40% of a scan of /proc (1.6 → 1.0 ms for 86 processes here); a close scans it a few times.
 */
function statText(pid: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(`/proc/${pid}/stat`, 'r');
  } catch {
    return undefined;
  }
  try {
    const n = readSync(fd, STAT_BUF, 0, STAT_BUF.length, 0);
    return n > 0 ? STAT_BUF.toString('utf8', 0, n) : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** A shell's working directory as the kernel has it (not what its output says: OSC 7 can be printed), or undefined. */
export function shellDirectory(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
}

export function readStat(pid: number): ProcStat | undefined {
  const text = statText(pid);
  const close = text?.lastIndexOf(')') ?? -1;
  if (text === undefined || close < 0) return undefined;
  const comm = text.slice(text.indexOf('(') + 1, close);
  // The fields after the name up to the start time (the 20th of them): a line has 50.
  const f = text.slice(close + 2).split(' ', 20);
  return {
    pid,
    comm,
    state: f[0]!,
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    session: Number(f[3]),
    tpgid: Number(f[5]),
    startTime: f[19]!,
  };
}

/** The foreground process group of the terminal `pid` is attached to (-1 when unknown). */
export function foregroundPgid(pid: number): number {
  return readStat(pid)?.tpgid ?? -1;
}

/**
 * Which processes make up process group `pgid`, each by pid, start time and executable (device and inode), from
 * a scan of /proc made now: equal twice only if no member came, went or exec'd another program. A name is the
 * agent's to choose and a group's leader is not all of it (a script that forks bash, which reads the tty).
 */
export function groupIdentity(pgid: number): string {
  const members = scan().filter((s) => s.pgrp === pgid && s.state !== 'Z');
  return members
    .map((s) => {
      try {
        const exe = statSync(`/proc/${s.pid}/exe`);
        return `${s.pid}:${s.startTime}:${exe.dev}:${exe.ino}`;
      } catch {
        return `${s.pid}:${s.startTime}:?`;
      }
    })
    .sort()
    .join(',');
}

/**
 * Every live (non-zombie unless asked) process of session `sid`, from a scan of /proc made now, or with
 * `recent`, from one at most `SHARED_SCAN_MS` old (for loops that wait for a session to empty).
 */
export function sessionMembers(sid: number, includeZombies = false, recent = false): ProcStat[] {
  return (recent ? recentScan() : scan()).filter((s) => s.session === sid && (includeZombies || s.state !== 'Z'));
}

/**
 * The processes below `pid` (children, grandchildren, … up to `depth` levels), from each one's
 * /proc/<pid>/task/<tid>/children: a few small reads where a scan of /proc reads every process's stat (3-10 ms
 * with a few hundred; a fleet opening 32 sandboxed terminals scanned once per terminal). Undefined when the
 * kernel has no children lists (CONFIG_PROC_CHILDREN): the caller scans instead. A process that left the tree
 * (re-parented to PID 1) is not found: use it to find what `pid` started, never to find everything to kill.
 */
export function descendants(pid: number, depth: number): ProcStat[] | undefined {
  const out: ProcStat[] = [];
  let level = [pid];
  for (let d = 0; d < depth && level.length > 0; d++) {
    const next: number[] = [];
    for (const p of level) {
      let tids: string[];
      try {
        tids = readdirSync(`/proc/${p}/task`);
      } catch {
        continue;
      }
      for (const tid of tids) {
        let list: string;
        try {
          list = readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8');
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT' && p === pid && d === 0) return undefined;
          continue;
        }
        for (const c of list.split(' ')) if (c.trim()) next.push(Number(c));
      }
    }
    for (const c of next) {
      const s = readStat(c);
      if (s) out.push(s);
    }
    level = next;
  }
  return out;
}

/** The bash of `leader`'s PTY session (inside bwrap a grandchild), lowest pid first: its tree, else a scan. */
export function sessionShell(leader: number): number | undefined {
  const below = descendants(leader, 4)?.filter((p) => p.comm === 'bash' && p.session === leader);
  const bashes = below?.length ? below : sessionMembers(leader).filter((p) => p.comm === 'bash');
  return bashes.sort((a, b) => a.pid - b.pid)[0]?.pid;
}

export function groupMembers(pgid: number): ProcStat[] {
  return scan().filter((s) => s.pgrp === pgid && s.state !== 'Z');
}

/**
 * How old a scan of /proc a waiting loop may reuse. A scan reads every /proc/<pid>/stat synchronously (3-10 ms
 * with a few hundred processes); 32 terminals closing at once each scanned every 20 ms, more than the loop had.
 * Signals always go to the processes of a fresh scan.
 */
const SHARED_SCAN_MS = 15;
let shared: { at: number; stats: ProcStat[] } | undefined;

function recentScan(): ProcStat[] {
  const now = performance.now();
  if (shared && now - shared.at < SHARED_SCAN_MS) return shared.stats;
  return scan();
}

function scan(): ProcStat[] {
  const at = performance.now();
  const out: ProcStat[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const s = readStat(Number(name));
    if (s) out.push(s);
  }
  shared = { at, stats: out };
  return out;
}

const TTY_READ_WCHAN = new Set(['wait_woken', 'n_tty_read']);

/** Whether `pid` sleeps in a tty read with a descriptor on `tty` (wchan is not specific to ttys, the descriptor is). */
export function isReadingTty(pid: number, tty: string): boolean {
  const s = readStat(pid);
  if (s?.state !== 'S') return false;
  let wchan: string;
  try {
    wchan = readFileSync(`/proc/${pid}/wchan`, 'utf8').trim();
  } catch {
    return false;
  }
  if (!TTY_READ_WCHAN.has(wchan)) return false;
  // stdin first; else any descriptor on the tty (git and ssh open /dev/tty for passwords).
  if (linkOf(pid, '0') === tty) return true;
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  return fds.some((fd) => fd !== '0' && linkOf(pid, fd) === tty);
}

function linkOf(pid: number, fd: string): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/**
 * The process of the foreground group that waits for terminal input, if any:
 * the group leader first, then (only if it is not) the other members.
 */
export function ttyReader(anyPidOnTty: number, tty: string): number | undefined {
  const pgid = foregroundPgid(anyPidOnTty);
  if (pgid <= 0) return undefined;
  if (isReadingTty(pgid, tty)) return pgid;
  for (const m of groupMembers(pgid)) if (m.pid !== pgid && isReadingTty(m.pid, tty)) return m.pid;
  return undefined;
}

/**
 * Wait channels of a process blocked in poll/select/epoll, as the kernel names them (optionally with a
 * compiler suffix such as `.constprop.0`). Measured: a python3 REPL sleeps in `poll_schedule_timeout`,
 * a node REPL in `do_epoll_wait`. Busy-waiting servers sleep there too, so this alone proves nothing.
 */
const POLL_WCHAN = /^(poll_schedule_timeout|do_epoll_wait|ep_poll|do_select|core_sys_select|do_sys_poll)(\.|$)/;

/**
 * Whether `pid` is blocked (state S) in poll/select/epoll with its stdin on `tty` (when its descriptors
 * can be read at all). Only a candidate for "waits at a prompt": the caller must also find the tty in
 * non-canonical mode (`ttyModesAsync`), which a REPL's line editor sets and a server never does.
 */
export function isPollingTty(pid: number, tty: string): boolean {
  if (readStat(pid)?.state !== 'S') return false;
  let wchan: string;
  try {
    wchan = readFileSync(`/proc/${pid}/wchan`, 'utf8').trim();
  } catch {
    return false;
  }
  if (!POLL_WCHAN.test(wchan)) return false;
  // "If reachable": a process whose descriptors we may not read (another uid) is judged on the rest.
  let stdin: string;
  try {
    stdin = readlinkSync(`/proc/${pid}/fd/0`);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EACCES';
  }
  return stdin === tty;
}

/** The foreground group's leader (or else a member) that polls the tty like a REPL at its prompt, if any. */
export function ttyPoller(anyPidOnTty: number, tty: string): number | undefined {
  const pgid = foregroundPgid(anyPidOnTty);
  if (pgid <= 0) return undefined;
  if (isPollingTty(pgid, tty)) return pgid;
  for (const m of groupMembers(pgid)) if (m.pid !== pgid && isPollingTty(m.pid, tty)) return m.pid;
  return undefined;
}

export function isAlive(pid: number): boolean {
  const s = readStat(pid);
  return s !== undefined && s.state !== 'Z' && s.state !== 'X';
}

/** Sends a signal, ignoring "no such process". Returns whether it was delivered. */
export function signalSafely(target: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false;
  }
}

/** Signal number → name (15 → "SIGTERM"). */
export const SIGNAL_NAMES = new Map<number, string>(
  Object.entries(osConstants.signals).map(([name, n]) => [n as number, name] as const),
);

/** "term", "TERM" or "SIGTERM" → "SIGTERM"; refuses signals not in SIGNALS. */
export function normalizeSignal(name: string): NodeJS.Signals {
  const upper = name.toUpperCase();
  const full = upper.startsWith('SIG') ? upper : `SIG${upper}`;
  if (!(SIGNALS as readonly string[]).includes(full)) {
    throw new RuntimeError(
      ErrorCode.InvalidMessage,
      `Signal '${name}' is not supported; use one of ${SIGNALS.join(', ')}.`,
    );
  }
  return full as NodeJS.Signals;
}

/**
 * SIGHUP+SIGTERM+SIGCONT (a stopped process must run to die of SIGTERM), or
 * SIGKILL (or SIGSTOP), to each process and to its group unless the group is in `spareGroups`.
 */
export function signalAll(
  members: Array<{ pid: number; pgrp: number }>,
  signal: 'SIGTERM' | 'SIGKILL' | 'SIGSTOP',
  spareGroups: number[],
): void {
  const groups = new Set(members.map((m) => m.pgrp).filter((g) => g > 1 && !spareGroups.includes(g)));
  const targets = [...[...groups].map((g) => -g), ...members.map((m) => m.pid)];
  for (const t of targets) {
    if (signal === 'SIGTERM') {
      signalSafely(t, 'SIGHUP');
      signalSafely(t, 'SIGTERM');
      signalSafely(t, 'SIGCONT');
    } else signalSafely(t, signal);
  }
}

/** Polls `done` every 20 ms for up to `ms`; resolves with whether it became true. */
export async function until(done: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= deadline) return false;
    await sleep(20);
  }
  return true;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The line discipline of a terminal (`stty -a -F <tty>`): echo and canonical (line) mode. */
export function ttyModes(tty: string): { echo: boolean; canonical: boolean } | undefined {
  if (!tty.startsWith('/dev/')) return undefined;
  const r = spawnSync('stty', ['-a', '-F', tty], { encoding: 'utf8', timeout: 1000 });
  return r.status === 0 ? parseStty(r.stdout) : undefined;
}

/** `ttyModes` without blocking the event loop (for the input poll, which may ask every poll tick). */
export function ttyModesAsync(tty: string): Promise<{ echo: boolean; canonical: boolean } | undefined> {
  if (!tty.startsWith('/dev/')) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    execFile('stty', ['-a', '-F', tty], { encoding: 'utf8', timeout: 1000 }, (err, stdout) =>
      resolve(err ? undefined : parseStty(stdout)),
    );
  });
}

function parseStty(out: string): { echo: boolean; canonical: boolean } {
  return { echo: !/(^|\s)-echo(\s|$)/.test(out), canonical: !/(^|\s)-icanon(\s|$)/.test(out) };
}

/**
 * Whether the terminal is at a password-style prompt: echo off in canonical (line) mode, as `read -s`,
 * ssh and sudo set it. Readline (the shell's own prompt) and full-screen programs also turn echo off,
 * but in non-canonical mode: their input is recorded.
 */
export function echoIsOff(tty: string): boolean {
  const modes = ttyModes(tty);
  return modes !== undefined && !modes.echo && modes.canonical;
}
