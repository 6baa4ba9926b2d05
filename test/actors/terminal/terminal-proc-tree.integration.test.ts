import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { leafSessionMembers } from '../../../actors/terminal/session-stop.ts';
import { descendants } from '../../../actors/terminal/terminal-proc.ts';

/** Every process's parent, from a scan of /proc: what `descendants` must agree with. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      out.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** The process group of `pid` (0 when it is gone). */
function groupOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return 0;
  }
}

function below(root: number, depth: number, ppid: Map<number, number>): number[] {
  let level = [root];
  const out: number[] = [];
  for (let d = 0; d < depth; d++) {
    level = [...ppid].filter(([, p]) => level.includes(p)).map(([pid]) => pid);
    out.push(...level);
  }
  return out.sort((a, b) => a - b);
}

describe('descendants: the processes a pid started, from the kernel children lists', () => {
  it('finds children and grandchildren to the depth asked, as a /proc scan does, not a re-parented one', async () => {
    // bash → sleep 300, bash → subshell → sleep 301, and a double fork whose sleep 302 is re-parented away.
    // In a process group of its own, which the re-parented sleep keeps: the test finds and kills its own
    // processes only (a `pkill` by name here once killed other programs' `sleep 300`).
    const child = spawn('bash', ['-c', '(sleep 302 &) ; sleep 300 & (sleep 301; true) & echo ready; wait'], {
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true,
    });
    try {
      await new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
      // Until the three sleeps have exec'd (a forked child is still `bash` until then, on a loaded machine for a
      // while): the re-parented one too, which CI once checked before it had.
      const sleeping = (pids: number[]) =>
        ['sleep\u0000300\u0000', 'sleep\u0000301\u0000'].every((c) => pids.some((pid) => cmdline(pid) === c));
      const orphaned = (ppid: Map<number, number>) =>
        [...ppid].find(([pid]) => cmdline(pid) === 'sleep\u0000302\u0000' && groupOf(pid) === child.pid);
      let ppid = parents();
      for (
        let i = 0;
        i < 250 && !(below(child.pid!, 2, ppid).length >= 3 && sleeping(below(child.pid!, 2, ppid)) && orphaned(ppid));
        i++
      ) {
        await new Promise((r) => setTimeout(r, 20));
        ppid = parents();
      }
      const two = descendants(child.pid!, 2)!;
      expect(two.map((s) => s.pid).sort((a, b) => a - b)).toEqual(below(child.pid!, 2, ppid));
      expect(two.map((s) => s.comm).sort()).toEqual(['bash', 'sleep', 'sleep']);
      expect(
        descendants(child.pid!, 1)!
          .map((s) => s.comm)
          .sort(),
      ).toEqual(['bash', 'sleep']);
      const orphan = orphaned(ppid);
      expect(orphan).toBeDefined();
      expect(two.map((s) => s.pid)).not.toContain(orphan![0]);
      expect(descendants(2 ** 22 + 1, 3)).toEqual([]);
    } finally {
      process.kill(-child.pid!, 'SIGKILL');
    }
  });
});

describe('leafSessionMembers: a session read from a cgroup leaf instead of a scan of /proc', () => {
  it("keeps the leaf tree's pids that are the session's live processes; scans /proc without a leaf", async () => {
    // A session of its own (setsid: its leader is bash) with two sleeps, and a sleep of this test's session.
    const session = spawn('setsid', ['bash', '-c', 'sleep 310 & sleep 311 & echo ready; wait'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const other = spawn('sleep', ['312'], { stdio: 'ignore' });
    const dir = mkdtempSync(join(tmpdir(), 'skein-leaf-'));
    try {
      await new Promise<void>((resolve) => session.stdout!.once('data', () => resolve()));
      let ppid = parents();
      const sleeps = () => below(session.pid!, 1, ppid).filter((pid) => cmdline(pid).startsWith('sleep\u0000'));
      for (let i = 0; i < 250 && sleeps().length < 2; i++) {
        await new Promise((r) => setTimeout(r, 20));
        ppid = parents();
      }
      const [s310, s311] = sleeps().sort((a, b) => cmdline(a).localeCompare(cmdline(b)));
      expect([cmdline(s310!), cmdline(s311!)]).toEqual(['sleep\u0000310\u0000', 'sleep\u0000311\u0000']);
      // The leaf lists the leader, one of its sleeps and a process of another session (not the other sleep).
      const leaf = join(dir, 't-1');
      mkdirSync(leaf);
      writeFileSync(join(leaf, 'cgroup.procs'), `${session.pid}\n${s310}\n${other.pid}\n`);
      const pids = (list: Array<{ pid: number }>) => list.map((m) => m.pid).sort((a, b) => a - b);
      expect(pids(leafSessionMembers(session.pid!, leaf))).toEqual([session.pid!, s310!].sort((a, b) => a - b));
      // The cgroups below the leaf count too (an unsandboxed shell can make one and move into it).
      const all = [session.pid!, s310!, s311!].sort((a, b) => a - b);
      mkdirSync(join(leaf, 'below'));
      writeFileSync(join(leaf, 'below', 'cgroup.procs'), `${s311}\n`);
      expect(pids(leafSessionMembers(session.pid!, leaf))).toEqual(all);
      // No leaf, or one gone: every process of the session, as a scan finds them.
      expect(pids(leafSessionMembers(session.pid!, undefined))).toEqual(all);
      expect(pids(leafSessionMembers(session.pid!, join(dir, 'gone')))).toEqual(all);
    } finally {
      for (const pid of below(session.pid!, 1, parents())) process.kill(pid, 'SIGKILL');
      session.kill('SIGKILL');
      other.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
