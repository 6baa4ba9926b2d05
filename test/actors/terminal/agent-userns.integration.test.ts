/**
 * inotify bounded per agent and for all agents together, live (agent-userns.ts): real sandboxed terminals of a
 * terminal manager, each grabbing inotify instances with perl while the others hold theirs. The canaries: an agent
 * holding more than its share by spreading over terminals or sub-agents, all agents more than theirs, and a
 * namespace left behind, and a sandbox opened outside its agent's namespace when that namespace cannot be made.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { which } from '../../../actors/terminal/pty-spawn.ts';
import { userInotifyMax } from '../../../actors/terminal/sandbox-scratch.ts';
import { inotifyShare } from '../../../machines/terminal/sandbox-sysctls.ts';
import { NR } from '../../support/syscalls.ts';
import { terminalHarness } from '../../support/terminal-harness.ts';

const ready = which('bwrap') && which('unshare') && which('nsenter') && which('perl');
const AGENT = 4;
const ALL = 10;
const { inotifyInstances: perAgent } = inotifyShare(`${AGENT}%`, userInotifyMax());
const { inotifyInstances: allAgents } = inotifyShare(`${ALL}%`, userInotifyMax());
const LINEAGE: Record<string, string[]> = { sub: ['main', 'a1', 'sub'], subsub: ['main', 'a1', 'sub', 'subsub'] };

/** Grabs up to 300 instances, prints how many, and leaves a child holding them for `holdS` seconds. */
const GRAB = [
  'my $n = 0; while ($n < 300) { last if syscall(NR, 0) < 0; $n++ }',
  '$| = 1; print "got $n\\n";',
  'if (fork() == 0) { close STDOUT; close STDERR; sleep $ARGV[0] }',
]
  .join('\n')
  .replace('NR', String(NR.init));

/** The user namespaces this process holds open (the agents' and all agents', agent-userns.ts). */
function namespaces(): string[] {
  return readdirSync('/proc/self/fd')
    .map((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })
    .filter((link) => link.startsWith('user:['))
    .sort();
}

/** Pids of this process's children running `cat` (a namespace holder's last program, before it is ended). */
function holders(): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
        return stat.includes('(cat)') && stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] === String(process.pid);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe.skipIf(!ready)('inotify per agent: a user namespace per agent, nested, below one for all agents', () => {
  let h: ReturnType<typeof terminalHarness> | undefined;
  /** A terminal manager whose agents hold `AGENT`% each and `all`% together. */
  function manager(all: number) {
    h = terminalHarness(
      { sandbox: true, sandboxInotifyShare: `${AGENT}%`, sandboxInotifyShareAllAgents: `${all}%`, maxPerAgent: 8 },
      { lineage: (agentId: string) => LINEAGE[agentId] ?? ['main', agentId] },
    );
    writeFileSync(`${h.workspace}/grab.pl`, GRAB);
    return h;
  }
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
  });

  /** Opens a sandboxed terminal of `agentId`, grabs, and says how many it got (held for `holdS` s). */
  async function grab(agentId: string, holdS = 30): Promise<number> {
    const { terminalId } = await h!.open(agentId, { sandbox: true });
    const r = await h!.manager.exec(agentId, { terminalId, command: `perl grab.pl ${holdS}` });
    const got = /got (\d+)/.exec(r.output);
    if (!got) throw new Error(`no count in ${JSON.stringify(r)}`);
    return Number(got[1]);
  }

  it('holds an agent to its share however many terminals and sub-agents it spreads over', async () => {
    manager(50);
    expect(perAgent).toBeGreaterThan(1);
    const spread = [await grab('a1'), await grab('a1'), await grab('sub'), await grab('subsub')];
    expect(spread[0]).toBe(perAgent);
    // The canary: the agent and its sub-agents together past the share.
    expect(spread.reduce((a, b) => a + b, 0)).toBe(perAgent);
    // Another agent has a share of its own.
    expect(await grab('b1')).toBe(perAgent);
    // The root agent's own terminals are bounded too, apart from its sub-agents.
    expect(await grab('main')).toBe(perAgent);
  });

  it('holds all agents together to their share', async () => {
    manager(ALL);
    const agents = Math.ceil(allAgents / perAgent) + 1;
    const got: number[] = [];
    for (let i = 0; i < agents; i++) got.push(await grab(`n${i}`));
    // The canary: more than all agents' share, however many agents.
    expect(got.reduce((a, b) => a + b, 0)).toBe(allAgents);
    expect(got.at(-1)).toBe(0);
  });

  it('keeps no process that, killed from outside, would give an agent a second share', async () => {
    manager(ALL);
    expect(await grab('a1')).toBe(perAgent);
    // Whatever the runtime started to make the namespaces, killed from outside (the old holders lived on).
    for (const pid of holders()) process.kill(pid, 'SIGKILL');
    // As an attacker would: after the runtime has seen them end.
    await new Promise((r) => setTimeout(r, 300));
    // The canary: a1's next terminal in a new namespace, with a new share, while the first still holds its own.
    expect(await grab('a1', 0)).toBe(0);
    expect(holders()).toEqual([]);
    expect(namespaces()).toHaveLength(2);
  });

  /** A terminal manager whose `unshare` works `works` times and fails after; `remove` when done. */
  /** `unshare` that works `works` times, then fails saying why: at once, or `late` (after it exited). */
  function failingUnshare(works: number, late = false) {
    const bin = mkdtempSync(join(tmpdir(), 'skein-unshare-'));
    const real = which('unshare')!;
    const say = late ? `(sleep 0.1; echo 'no namespace for you' >&2) &` : `echo 'no namespace for you' >&2;`;
    writeFileSync(
      join(bin, 'unshare'),
      `#!/bin/sh\nn=$(cat ${bin}/count 2>/dev/null || echo 0)\necho $((n + 1)) > ${bin}/count\n` +
        `[ "$n" -ge ${works} ] && { ${say} exit 1; }\nexec ${real} "$@"\n`,
    );
    chmodSync(join(bin, 'unshare'), 0o755);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      manager(ALL);
    } finally {
      process.env.PATH = path;
    }
    return { remove: () => rmSync(bin, { recursive: true, force: true }) };
  }
  const refused = (agentId: string) =>
    new RegExp(
      `user namespace of agent '${agentId}' could not be made \\(.*no namespace for you.*\\)` +
        '.*Try terminal\\.open again',
      's',
    );

  it("refuses a sandbox when its agent's namespace cannot be made, once namespaces could be", async () => {
    // All agents' namespace, then a1's; b1's fails.
    const bin = failingUnshare(2);
    try {
      expect(await grab('a1', 0)).toBe(perAgent);
      // The canary: b1's sandbox opened outside any agent's namespace, with a share of its own.
      await expect(h!.open('b1', { sandbox: true })).rejects.toThrow(refused('b1'));
      expect(h!.manager.list('b1')).toEqual({ terminals: [] });
      // a1's namespace is still there and bounds it.
      expect(await grab('a1', 0)).toBe(perAgent);
    } finally {
      bin.remove();
    }
  });

  it('names why a holder failed when what it printed comes after its end', async () => {
    // Node's 'exit' can come before a child's last output (CI once lost it: `ended (exit 1): ` and nothing more).
    const bin = failingUnshare(1, true);
    try {
      await expect(h!.open('a1', { sandbox: true })).rejects.toThrow(refused('a1'));
    } finally {
      bin.remove();
    }
  });

  it("refuses them too when the first sandboxes open together and only all agents' namespace was made", async () => {
    const bin = failingUnshare(1);
    try {
      // The canary: a sandbox opened with a share of its own because no open had returned a namespace yet.
      const opens = await Promise.allSettled(['a1', 'b1'].map((agentId) => h!.open(agentId, { sandbox: true })));
      expect(opens.map((o) => o.status)).toEqual(['rejected', 'rejected']);
      expect(String((opens[0] as PromiseRejectedResult).reason)).toMatch(refused('a1'));
    } finally {
      bin.remove();
    }
  });

  it("keeps an agent's namespace while it lives, lets it go when it finishes, and all at the stop", async () => {
    const { open, manager: terminals } = manager(ALL);
    const { terminalId } = await open('a1', { sandbox: true });
    // All agents' namespace and a1's, held by this process alone.
    expect(namespaces()).toHaveLength(2);
    await expect.poll(() => holders(), { timeout: 5_000 }).toEqual([]);
    const before = namespaces();
    await terminals.close('a1', { terminalId, graceMs: 0 });
    // Kept while a1 lives: its next terminal starts in the same one.
    expect(namespaces()).toEqual(before);
    expect(await grab('a1', 0)).toBe(perAgent);
    expect(namespaces()).toEqual(before);
    // a1 finishes (its terminals are closed): its namespace goes; all agents' stays until the manager stops.
    await terminals.closeAllForAgent('a1');
    await expect.poll(() => namespaces().length, { timeout: 5_000 }).toBe(1);
    expect(await grab('a2', 0)).toBe(perAgent);
    await terminals.shutdown();
    await expect.poll(() => namespaces(), { timeout: 5_000 }).toEqual([]);
  });
});
