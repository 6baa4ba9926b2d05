/**
 * @module
 * How a terminal's processes end at its close (`stopSession`): gracefully (SIGTERM, a grace period, then SIGKILL,
 * the shell last so it can reap and report), or at once when a bound closed it (`killAtOnce`), so that nothing of
 * the terminal runs after the close begins.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readCgroup } from './cgroup-files.ts';
import {
  isAlive,
  type ProcStat,
  readStat,
  sessionMembers,
  signalAll,
  signalSafely,
  sleep,
  until,
} from './terminal-proc.ts';

/** The live processes of the terminal's session, from a fresh read, or with `recent` one a waiting loop may share. */
type Members = (recent?: boolean) => ProcStat[];

/**
 * The live processes of session `sid`, the candidates read from a cgroup `leaf` (its `cgroup.procs` and those of
 * any cgroup below it) instead of a scan of /proc: every process of a sandboxed terminal's session is in its leaf
 * (the shell joins it before bwrap starts; a child is born in its parent's cgroup) and none can move out (the
 * cgroup files are read-only inside). A few reads and a stat per process of the terminal, where a scan stats
 * every process of the machine (3-5 ms with ~100 here, and each close read several). The scan when there is no
 * leaf, it is gone, or its tree could not be read whole.
 */
export function leafSessionMembers(sid: number, leaf: string | undefined, recent = false): ProcStat[] {
  const tree = leaf !== undefined && existsSync(leaf) ? readCgroup(leaf) : undefined;
  if (!tree?.complete) return sessionMembers(sid, false, recent);
  const out: ProcStat[] = [];
  for (const pid of new Set(tree.pids)) {
    const s = readStat(pid);
    if (s && s.session === sid && s.state !== 'Z') out.push(s);
  }
  return out;
}

/** Whether `pid` is the init of its innermost pid namespace (its last NSpid is 1, and it has more than one). */
function isNamespaceInit(pid: number): boolean {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('NSpid:'));
    const ids = line?.slice('NSpid:'.length).trim().split(/\s+/) ?? [];
    return ids.length > 1 && ids.at(-1) === '1';
  } catch {
    return false; // gone
  }
}

/**
 * `stopSession`'s `now`: nothing of the terminal runs once the close begins. Killed after its foreground job, a
 * shell would print that the job was killed and run the rest of its command line; a job killed after the shell
 * would get the SIGHUP of its death as the session leader (and SIGCONT, to a stopped group) and run its trap.
 *
 * In a sandbox the shell is the pid namespace's init: SIGKILL to it is atomic for everything inside, as the kernel
 * kills every process of the namespace with SIGKILL before its init's death sends any signal, and nothing there
 * can undo it (a stop could be undone by a SIGCONT from a process outside the session, a pid or group changed
 * between a read and a kill). bubblewrap's processes outside go after it, once the namespace is empty.
 *
 * Unsandboxed (no bound closes such a terminal today): the shell and its group are stopped, every other member is
 * stopped and killed, read again until none is new, then the shell's group and the shell. That is as good as a
 * process of the runtime's uid lets it be: one that left the session can wake the shell with SIGCONT, and one that
 * changes pid and group at every fork outruns the reads, until the terminal's cgroup release.
 */
async function killAtOnce(leader: number, shellPid: number, sandbox: boolean, members: Members): Promise<void> {
  // Still the terminal's shell, not a pid reused after it was reaped (its group could be the runtime's own).
  const shell = readStat(shellPid);
  const ours = shell !== undefined && shell.session === leader;
  // A sandbox's init is known by its parent (bubblewrap, the PTY's leader, has no other child) and its NSpid, not
  // by its session: a program it execs can leave the session with setsid.
  if (sandbox && shell !== undefined && shell.ppid === leader && isNamespaceInit(shellPid)) {
    signalSafely(shellPid, 'SIGKILL');
    // bubblewrap goes once the namespace is empty (its init a zombie, after the kernel killed and reaped the rest):
    // its death as the session leader hangs up the terminal, whose SIGHUP a process left inside would handle.
    await until(() => !isAlive(shellPid), 1_000);
    signalAll(members(), 'SIGKILL', []);
    return;
  }
  const shellGroup = ours && shell.pgrp > 1 && shell.pgrp !== readStat(process.pid)?.pgrp ? shell.pgrp : undefined;
  if (ours) signalSafely(shellPid, 'SIGSTOP');
  if (shellGroup !== undefined) signalSafely(-shellGroup, 'SIGSTOP');
  const wrapper = (m: ProcStat) => m.pid === leader || m.pid === shellPid || (sandbox && m.comm === 'bwrap');
  const spared = [leader, ...(shellGroup === undefined ? [] : [shellGroup])];
  const killed = new Set<number>();
  for (let round = 0; round < 5; round++) {
    const others = members().filter((m) => !wrapper(m) && !killed.has(m.pid));
    if (others.length === 0) break;
    signalAll(others, 'SIGSTOP', spared);
    signalAll(others, 'SIGKILL', spared);
    for (const m of others) killed.add(m.pid);
  }
  if (shellGroup !== undefined) signalSafely(-shellGroup, 'SIGKILL');
  if (ours) signalSafely(shellPid, 'SIGKILL');
  signalAll(members(), 'SIGKILL', []);
}

/**
 * Ends every process of a terminal's session: the shell's children first (SIGTERM, then SIGKILL after
 * `graceMs`) while the shell lives to reap them (an orphan's zombie waits for PID 1); then, once the shell
 * has reported the killed command's status (`commandSettled`), the shell itself; bubblewrap's processes exit
 * (and reap) on their own when it is gone. Resolves when the session is empty or the waits ran out.
 * `now` (a bound closed the terminal): everything at once (`killAtOnce`), so nothing more of the command line
 * it was given runs, and a sandbox's pid namespace ends with its init. `leaf`: a sandboxed terminal's cgroup leaf,
 * where its session's processes are read (`leafSessionMembers`); without it, /proc is scanned.
 */
export async function stopSession(o: {
  leader: number;
  shellPid: number;
  sandbox: boolean;
  graceMs: number;
  commandSettled: () => boolean;
  exited: Promise<unknown>;
  now?: boolean;
  leaf?: string | undefined;
}): Promise<void> {
  const members: Members = (recent = false) => leafSessionMembers(o.leader, o.leaf, recent);
  if (o.now) await killAtOnce(o.leader, o.shellPid, o.sandbox, members);
  const wrapper = (m: { pid: number; comm: string }) =>
    m.pid === o.leader || m.pid === o.shellPid || (o.sandbox && m.comm === 'bwrap');
  const others = (recent = false) => members(recent).filter((m) => !wrapper(m));
  // After a bound's kills, only SIGKILL: a process still there would run its SIGTERM or SIGHUP trap.
  signalAll(others(), o.now ? 'SIGKILL' : 'SIGTERM', [o.leader, o.shellPid]);
  if (!(await until(() => others(true).length === 0, o.graceMs))) {
    signalAll(others(), 'SIGKILL', [o.leader, o.shellPid]);
    await until(() => others(true).length === 0, 1_000);
  }
  await until(o.commandSettled, 500);
  signalSafely(o.shellPid, 'SIGKILL');
  const exited = await Promise.race([o.exited.then(() => true), sleep(1_000).then(() => false)]);
  if (!exited) {
    signalAll(members(), 'SIGKILL', []);
    signalSafely(-o.leader, 'SIGKILL');
    await Promise.race([o.exited, sleep(2_000)]);
  }
  await until(() => members(true).length === 0, 1_000);
}
