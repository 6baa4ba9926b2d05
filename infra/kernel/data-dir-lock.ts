/**
 * @module
 * One runtime per data dir. `<data>/lock` names the process that holds it (pid, its start time from /proc, the
 * host name); it is taken before anything in the data dir is opened and removed on stop. It is created by
 * link(2) from a file already written, so it exists whole or not at all, and only one of two starts gets it. A
 * lock whose process is gone (SIGKILL, a crash) or is another process under a reused pid is taken over: under
 * `<data>/lock.break`, taken the same way, and only if it still names that process, so two starts after a crash
 * cannot both take it.
 */
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** The data dir's lock while this process holds it. */
export type DataDirLock = { readonly path: string; release(): void };

/** Another live runtime holds the data dir. */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  readonly pid: number;
  constructor(dataDir: string, path: string, holder: Holder) {
    const where = holder.host === hostname() ? '' : ` on host ${holder.host}`;
    const self = holder.pid === process.pid && !where ? ', this process' : '';
    super(
      `data dir ${dataDir} is in use by another skein runtime (pid ${holder.pid}${where}${self}, ` +
        `since ${holder.at}): stop it first (Ctrl-C where it runs, or kill ${holder.pid}), or pass another --data; ` +
        `if no skein runs as pid ${holder.pid}${where}, remove ${path}`,
    );
    this.pid = holder.pid;
  }
}

/**
 * Takes `<dataDir>/lock` for this process, or throws DataDirLockedError naming the live holder. Tries a few times
 * while another start takes over a stale lock at the same moment.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  const path = join(dataDir, 'lock');
  const me = JSON.stringify({ pid: process.pid, start: startTimeOf(process.pid), host: hostname(), at: now() });
  for (let attempt = 0; attempt < TAKE_ATTEMPTS; attempt++) {
    if (create(path, me)) return holding(path, me);
    const text = read(path);
    if (text === undefined) continue; // released meanwhile
    const holder = parse(text);
    if (holder && isLive(holder, text)) throw new DataDirLockedError(dataDir, path, holder);
    const broken = breakStale(path, text, `${me.slice(0, -1)},"breaking":true}`);
    if (!broken) await new Promise((resolve) => setTimeout(resolve, TAKE_RETRY_MS));
  }
  throw new Error(
    `could not take ${path}: other skein runtimes are starting on data dir ${dataDir} at the same moment; ` +
      'start one at a time',
  );
}

/** Tries; each waits TAKE_RETRY_MS while another start takes a stale lock over (a few ms at most). */
const TAKE_ATTEMPTS = 20;
const TAKE_RETRY_MS = 25;

type Holder = { pid: number; start: number | undefined; host: string; at: string };

/**
 * The locks this process holds, by their text (how many hold each): a lock naming this process is live only if
 * it is one of them. A second runtime in the same process must not take its own pid's lock over.
 */
const held = new Map<string, number>();

function holding(path: string, me: string): DataDirLock {
  held.set(me, (held.get(me) ?? 0) + 1);
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      const left = (held.get(me) ?? 1) - 1;
      if (left > 0) held.set(me, left);
      else held.delete(me);
      try {
        if (read(path) === me) unlinkSync(path);
      } catch {
        // Left behind, it names this process, which is gone by the next start elsewhere: taken over then.
      }
    },
  };
}

/**
 * Removes `path` if it still holds `stale`, under `<path>.break` (holding `me`); false when another start holds
 * the break (the caller waits). A break left by a start that died in its few microseconds is removed the same
 * way: that read-then-remove is the one step two starts could race on, and only after such a death.
 */
function breakStale(path: string, stale: string, me: string): boolean {
  const breaker = `${path}.break`;
  if (!create(breaker, me)) {
    const other = read(breaker);
    const holder = other === undefined ? undefined : parse(other);
    if (other === undefined || (holder && isLive(holder, other))) return false;
    if (read(breaker) === other) unlinkSync(breaker);
    return true;
  }
  try {
    // Only the holder of the break removes a lock that is not its own, and the stale holder cannot release it:
    // what was read is still there.
    if (read(path) === stale) unlinkSync(path);
  } finally {
    unlinkSync(breaker);
  }
  return true;
}

/**
 * Whether the process `holder` (read as `text`) names still runs; on another host assumed, as it cannot be
 * checked from here.
 */
function isLive(holder: Holder, text: string): boolean {
  if (holder.host !== hostname()) return true;
  if (holder.pid === process.pid) return held.has(text);
  try {
    process.kill(holder.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  const stat = procStat(holder.pid);
  if (!stat) return procStat(process.pid) === undefined; // gone meanwhile; or no /proc (not Linux): the pid answers
  // A zombie (killed, not yet reaped by its parent) holds nothing; another start time is a reused pid.
  return stat.state !== 'Z' && (holder.start === undefined || holder.start === stat.start);
}

/** Creates `path` holding `text`, whole, unless it exists. */
function create(path: string, text: string): boolean {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${text}\n`, { mode: 0o600 });
  try {
    linkSync(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(tmp);
  }
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** The holder a lock names; undefined for anything else (not written by skein: taken over). */
function parse(text: string): Holder | undefined {
  try {
    const { pid, start, host, at } = JSON.parse(text) as Record<string, unknown>;
    if (!Number.isSafeInteger(pid) || (pid as number) <= 0 || typeof host !== 'string') return undefined;
    return {
      pid: pid as number,
      start: Number.isSafeInteger(start) ? (start as number) : undefined,
      host,
      at: typeof at === 'string' ? at : 'an unknown time',
    };
  } catch {
    return undefined;
  }
}

function startTimeOf(pid: number): number | undefined {
  return procStat(pid)?.start;
}

/** State and start time (clock ticks after boot) from /proc/<pid>/stat; undefined without /proc. */
function procStat(pid: number): { state: string; start: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', start: Number(fields[19]) };
}

function now(): string {
  return new Date().toISOString();
}
