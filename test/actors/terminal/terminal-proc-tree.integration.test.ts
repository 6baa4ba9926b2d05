import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
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
