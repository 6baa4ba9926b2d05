/**
 * A close by a bound (`stopSession` `now`, as the scratch guard closes a terminal), live on real terminals: nothing
 * more of the command line runs, and no process of it runs a trap. Killed in the wrong order, a shell woken by its
 * job's death runs the rest of its line, and a shell's death as the session leader sends its jobs SIGHUP (and
 * SIGCONT to a stopped group). The canaries: files the rest of the line and the traps would make.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { which } from '../../../actors/terminal/pty-spawn.ts';
import { sessionMembers } from '../../../actors/terminal/terminal-proc.ts';
import { terminalHarness } from '../../support/terminal-harness.ts';

const modes = [{ sandbox: false }, ...(which('bwrap') ? [{ sandbox: true }] : [])];

describe.each(modes)("a bound's close (sandbox: $sandbox)", ({ sandbox }) => {
  let h: ReturnType<typeof terminalHarness> | undefined;
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
  });

  /** Runs `command` in a fresh terminal until `ready` holds of its session, then closes it as a bound would. */
  async function closedWhile(
    command: string,
    ready: (members: ReturnType<typeof sessionMembers>) => boolean,
    prepare: (workspace: string) => void = () => {},
  ) {
    h = terminalHarness({ sandbox });
    prepare(h.workspace);
    const { terminalId } = await h.open('a1', { sandbox });
    const running = h.manager.exec('a1', { terminalId, command, timeoutMs: 30_000 }).catch((e: Error) => e);
    const session = h.manager.get(terminalId)!;
    await expect.poll(() => ready(sessionMembers(session.pty.pid)), { timeout: 10_000 }).toBe(true);
    await session.close('disk-limit', 0, 'the test closed it as a bound would');
    expect(await running).toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 300));
    expect(sessionMembers(session.pty.pid)).toEqual([]);
    return h.workspace;
  }

  it('runs nothing more of the command line, nor a trap of a job it killed', async () => {
    // Jobs in groups of their own, with traps on every signal a close could let them see before their SIGKILL (made
    // by the shell itself, no fork: a window of microseconds is enough), started after 300 decoy groups that make
    // each read of the session and each round of kills take longer.
    const trapped = (n: number) => `bash -c 'trap ": > CANARY-trap${n}" HUP TERM CONT; while :; do sleep 0.05; done'`;
    const decoys = 'for i in $(seq 300); do sleep 100 & done';
    const ws = await closedWhile(
      `${decoys}; ${trapped(1)} & ${trapped(2)}; : > CANARY-after`,
      (members) => members.filter((m) => m.comm === 'bash').length >= 3 && members.length > 300,
    );
    expect(['after', 'trap1', 'trap2'].filter((c) => existsSync(join(ws, `CANARY-${c}`)))).toEqual([]);
  });

  it.skipIf(!which('cc'))("nor a trap of a process in the shell's own group that keeps changing its pid", async () => {
    // A command substitution runs in the shell's group; its process forks and lets its parent exit (a new pid every
    // ~50 µs), so a kill by pid finds it gone: only a signal to the whole group reaches it.
    const ws = await closedWhile(
      'x=$(./hop); : > CANARY-after',
      () => hopping(h!.workspace),
      (workspace) => {
        writeFileSync(join(workspace, 'hop.c'), hopper(false));
        execFileSync('cc', ['-o', join(workspace, 'hop'), join(workspace, 'hop.c')]);
      },
    );
    expect(['after', 'hop'].filter((c) => existsSync(join(ws, `CANARY-${c}`)))).toEqual([]);
  });
});

/**
 * In a sandbox, what a process of the agent's uid could do against a close that stops before it kills: wake the
 * stopped shell, hide from the reads by name, or change pid and group at every fork. The shell is the pid
 * namespace's init there, and its SIGKILL takes the whole namespace at once.
 */
describe.skipIf(!which('bwrap') || !which('cc'))("a bound's close of a sandbox, against a stop's weak points", () => {
  let h: ReturnType<typeof terminalHarness> | undefined;
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
  });

  async function closedWhile(command: string, ready: (names: string[]) => boolean) {
    h = terminalHarness({ sandbox: true });
    writeFileSync(join(h.workspace, 'hop.c'), hopper(true));
    execFileSync('cc', ['-o', join(h.workspace, 'hop'), join(h.workspace, 'hop.c')]);
    const { terminalId } = await h.open('a1', { sandbox: true });
    const running = h.manager.exec('a1', { terminalId, command, timeoutMs: 30_000 }).catch((e: Error) => e);
    const session = h.manager.get(terminalId)!;
    const names = () => descendantsOf(session.pty.pid).map((m) => m.comm);
    await expect.poll(() => ready(names()), { timeout: 10_000 }).toBe(true);
    closedAt = Date.now() / 1000;
    await session.close('disk-limit', 0, 'the test closed it as a bound would');
    expect(await running).toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 300));
    expect(descendantsOf(session.pty.pid)).toEqual([]);
    return h.workspace;
  }
  let closedAt = 0;

  it('the shell exec-ing a program that leaves the session, then writes on', async () => {
    // It writes the time every 5 ms once it left the session (setsid, its parent-death signal cleared): the shell
    // is then no longer in the terminal's session, and a close that knew it by that passed it over.
    const leaver =
      'exec perl -e \'use POSIX; use Time::HiRes qw(time); $0 = "leaver"; my $c = fork; ' +
      'if (!$c) { setpgid(0, 0); sleep 99; exit } sleep 1; setpgid(0, $c); setsid(); syscall(157, 1, 0); ' +
      'while (1) { open F, ">>", "CANARY-time"; printf F "%.3f\\n", time; close F; ' +
      "select(undef, undef, undef, 0.005) }'";
    const ws = await closedWhile(leaver, () => existsSync(join(h!.workspace, 'CANARY-time')));
    const times = readFileSync(join(ws, 'CANARY-time'), 'utf8').trim().split('\n').map(Number);
    // The canary: a write 200 ms or more after the close began (the hole gave it ~500 ms).
    expect(Math.max(...times) - closedAt).toBeLessThan(0.2);
  });

  it('a process that left the session and keeps sending the shell SIGCONT', async () => {
    const waker = `perl -e 'use POSIX; exit if fork; POSIX::setsid(); $0 = "waker"; kill "CONT", 1 while 1'`;
    const ws = await closedWhile(`${waker}; sleep 100; : > CANARY-after`, (n) => n.includes('waker'));
    expect(existsSync(join(ws, 'CANARY-after'))).toBe(false);
  });

  it('a process named bwrap that keeps sending the shell SIGCONT', async () => {
    const waker = `perl -e '$0 = "bwrap"; kill "CONT", 1 while 1'`;
    const ws = await closedWhile(`${waker} & sleep 100; : > CANARY-after`, (n) => n.includes('bwrap'));
    expect(existsSync(join(ws, 'CANARY-after'))).toBe(false);
  });

  it('a process that changes its pid and its group at every fork, with traps', async () => {
    const ws = await closedWhile('./hop; sleep 100; : > CANARY-after', () => hopping(h!.workspace));
    expect(['after', 'hop'].filter((c) => existsSync(join(ws, `CANARY-${c}`)))).toEqual([]);
  });
});

/** Every process below `pid` (by parent links, from one read of /proc): what a sandbox holds, in whatever session. */
function descendantsOf(pid: number): Array<{ pid: number; comm: string }> {
  const all: Array<{ pid: number; ppid: number; comm: string }> = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(close + 2).split(' ');
      if (state !== 'Z')
        all.push({ pid: Number(name), ppid: Number(ppid), comm: stat.slice(stat.indexOf('(') + 1, close) });
    } catch {} // gone
  }
  const below = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) if (!below.has(p.pid) && below.has(p.ppid)) below.add(p.pid), (grew = true);
  }
  return all.filter((p) => p.pid !== pid && below.has(p.pid)).map(({ pid: p, comm }) => ({ pid: p, comm }));
}

/**
 * Whether the hopper has begun to fork (its mark file). Not by a read of /proc: a pid that lives ~50 µs is gone
 * before a scan reaches its stat, so a scan finds it only by luck (CI, 6 December, missed it for 10 s).
 */
const hopping = (workspace: string) => existsSync(join(workspace, 'HOPPING'));

/**
 * A C program that forks for ever, each parent exiting (with `newGroup`, each child also takes a process group of
 * its own); a trap on HUP, CONT and TERM makes the canary file. It marks the start of its loop with HOPPING.
 */
const hopper = (newGroup: boolean) => `
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
static void canary(int s) { (void)s; int fd = open("CANARY-hop", O_WRONLY | O_CREAT, 0644); if (fd >= 0) close(fd); }
int main(void) {
  struct sigaction a; memset(&a, 0, sizeof a); a.sa_handler = canary;
  sigaction(SIGHUP, &a, 0); sigaction(SIGCONT, &a, 0); sigaction(SIGTERM, &a, 0);
  prctl(PR_SET_NAME, "hopper");
  int mark = open("HOPPING", O_WRONLY | O_CREAT, 0644); if (mark >= 0) close(mark);
  for (;;) { if (fork() > 0) _exit(0); ${newGroup ? 'setpgid(0, 0);' : ''} }
}
`;
