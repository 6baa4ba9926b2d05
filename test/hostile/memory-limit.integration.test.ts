/**
 * `domains.terminal.maxMemoryPerAgent`: how much memory an agent and its sub-agents use at once in their
 * terminals. Before it, one allowed program (`perl`, `python3`, a build) could take the machine's memory; the
 * kernel's OOM killer then picked from the whole machine, the runtime and nats-server included. Each attack asks
 * for far more than the bound, from a real sandboxed terminal of a sub-agent; the canary is a file written only
 * if the memory was got. The bound is a memory cgroup per agent (agent-cgroups.ts), so it needs a cgroup v1 memory
 * hierarchy the test process may write; where the machine has none, the attacks are reported skipped and the one
 * test that runs checks that the runtime says the bound is not enforced.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import { ok } from '../support/replies.ts';
import { attack, canary } from './support.ts';
import { count, leafOf, limitSuite, runtimeKills } from './cgroup-support.ts';

const MiB = 1024 * 1024;
/** The bound: well above what a shell and a few commands need, far below the machine. */
const LIMIT = 160 * MiB;
/** The bound of all agents together: less than two agents' own. */
const ALL = 240 * MiB;
/**
 * How far a peak may pass its bound: the kernel charges past `limit_in_bytes` a page a dying task or an allocation
 * that may not fail needs (`try_charge_memcg`'s `force`: "the allocation either can't fail or will lead to more memory
 * being freed very soon"). A CI run saw one page (4 KiB) past it while the watch killed a hog. The attacks ask for
 * tens of MiB past the bound; a few pages the kernel lets a killed task take on its way out are not that.
 */
const FORCED = 1 * MiB;

const suite = limitSuite('memory-limit', 'memory', 'maxMemoryPerAgent', {
  maxMemoryPerAgent: LIMIT,
  maxMemoryAllAgents: ALL,
});
const { where, rt, sockets, runtimeCgroup } = suite;

/** Every agent terminal an attack opened, closed after it (with its hogs) so that none holds memory into the next. */
const opened: Array<{ agentId: string; terminalId: string }> = [];
const agentWithTerminal = async (agentId: string, parentId?: string) => {
  const t = await suite.agentWithTerminal(agentId, parentId);
  opened.push({ agentId, terminalId: t.terminalId });
  return t;
};

/**
 * A perl program (perl-base is on every Debian) that fills `mib` MiB one at a time, touching every page, writes
 * `canaryPath` if it got them all, then holds them `hold` seconds; tagged `tag` on its command line (pgrep).
 */
const hog = (mib: number, canaryPath: string, tag: string, hold = 0) =>
  `perl -e 'my @m; for (1..${mib}) { push @m, "x" x ${MiB} } ` +
  `open(my $f, ">", "${canaryPath}"); close $f; sleep ${hold}' ${tag}`;

const alive = (tag: string): number => {
  try {
    return execFileSync('pgrep', ['-f', tag], { encoding: 'utf8' }).trim().split('\n').length;
  } catch {
    return 0;
  }
};

/**
 * Whether this cgroup's peak met its own bound and stayed within it but for `FORCED` (this kernel keeps no
 * `memory.failcnt`: the peak is the sign).
 */
function expectPeakAtBound(dir: string): void {
  const peak = count(dir, 'memory.max_usage_in_bytes');
  const seen = `peak ${(peak / MiB).toFixed(2)} MiB of ${LIMIT / MiB}; the watch's kills: ${killLog()}`;
  expect(peak, seen).toBeGreaterThan(LIMIT - 8 * MiB);
  expect(peak, seen).toBeLessThanOrEqual(LIMIT + FORCED);
}

/** What the runtime's OOM watch logged, for a failure's message: each kill's terminal, bound, size and step. */
const killLog = () =>
  JSON.stringify(
    rt()
      .logs.filter((l) => String(l['msg']).includes('killed in the terminal holding'))
      .map((l) => ({ t: l['terminalId'], bound: l['bound'], MiB: Math.round(Number(l['bytes']) / MiB), s: l['step'] })),
  );

const agentDirOf = (terminalId: string) => join(leafOf(runtimeCgroup(), terminalId)!, '..');

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never: ${what}`);
}

describe.skipIf(!where.ok)('hostile: an agent takes memory past its limit', { timeout: 180_000 }, () => {
  // An attack that fails half-way must not leave its hogs holding memory against the next one's bound of all agents
  // (CI once saw one failure become three that way).
  afterEach(async () => {
    if (opened.length === 0) return; // the root's attack, and the last test (the runtime stopped)
    try {
      execFileSync('pkill', ['-KILL', '-f', `hog-${process.pid}-`]);
    } catch {} // none left
    for (const { agentId, terminalId } of opened.splice(0)) {
      await rt().call('terminal.close', { terminalId }, { agentId });
    }
    // Below 64 MiB, what is left cannot meet the bound of all agents (240) before one agent meets its own (160).
    const agents = join(runtimeCgroup(), 'agents');
    const held = () => (existsSync(agents) ? count(agents, 'memory.usage_in_bytes') : 0);
    await until(() => held() < 64 * MiB, 'agents’ memory freed').catch((err: Error) => {
      throw new Error(`${err.message}: ${(held() / MiB).toFixed(1)} MiB still charged to all agents`);
    });
  }, 30_000);

  attack(
    'memory',
    'an allowed program asking for 3× the bound is killed; the host and the terminal go on',
    async () => {
      const c = canary(rt().workspace);
      try {
        const { terminalId, exec } = await agentWithTerminal('glutton');
        const tag = `hog-${process.pid}-1`;
        const r = await exec(hog((3 * LIMIT) / MiB, c.path, tag));
        expect(r['exitCode'], JSON.stringify(r)).toBe(137); // SIGKILL, from the runtime's OOM watch
        expect(existsSync(c.path)).toBe(false);
        const agentDir = agentDirOf(terminalId);
        expect(count(agentDir, 'memory.limit_in_bytes')).toBe(LIMIT);
        // The agent's peak met its bound; the runtime killed the program mapping the most, not the shell.
        expectPeakAtBound(agentDir);
        expect(runtimeKills(rt(), terminalId)).toEqual([{ processes: 1, step: 'biggest' }]);
        // The agent is told which bound it met, once; the log records it on the command's finish.
        expect(r['limitsHit']).toEqual(['maxMemoryPerAgent']);
        expect(r['hint']).toContain(`at the memory bound of this agent and its sub-agents together`);
        expect(r['hint']).toContain(`(domains.terminal.maxMemoryPerAgent = ${LIMIT / MiB} MiB)`);
        const finished: unknown[] = [];
        await rt().log.scan({}, (f: { type: string; data: unknown }) => {
          const data = f.data as Record<string, unknown>;
          if (f.type !== 'terminal.command.finished' || data['terminalId'] !== r['terminalId']) return;
          if (data['commandId'] === r['commandId']) finished.push(data);
        });
        expect(finished).toMatchObject([{ exitCode: 137, limitsHit: ['maxMemoryPerAgent'] }]);
        const next = await exec('false');
        expect(next['exitCode']).toBe(1);
        expect(next['limitsHit']).toBeUndefined();
        ok(await rt().call('runtime.ping', {}));
        expect(String((await exec('echo still here'))['output'])).toContain('still here');
      } finally {
        c.dispose();
      }
    },
    120_000,
  );

  attack(
    'memory',
    'a sub-agent spends its parent’s bound: parent and child cannot hold more than it together',
    async () => {
      const c = canary(rt().workspace);
      try {
        const share = Math.floor((0.6 * LIMIT) / MiB);
        const parent = await agentWithTerminal('elder');
        const elderTag = `hog-${process.pid}-elder`;
        await parent.exec(`(${hog(share, c.path, elderTag, 600)}) > /dev/null 2>&1 &`);
        await until(() => existsSync(c.path), 'the parent held its share');
        const child = await agentWithTerminal('younger', 'elder');
        const youngerTag = `hog-${process.pid}-younger`;
        await child.exec(`(${hog(share, `${c.path}-2`, youngerTag, 600)}) > /dev/null 2>&1 &`);
        const elderDir = agentDirOf(parent.terminalId);
        // The runtime kills one of the two, in whichever terminal holds more: never both alive and holding.
        const kills = () =>
          [parent.terminalId, child.terminalId].map((t) => runtimeKills(rt(), t).length).reduce((a, b) => a + b, 0);
        await until(() => kills() >= 1, 'an OOM kill below the parent');
        await until(() => alive(elderTag) + alive(youngerTag) <= 1, 'one hog killed');
        expectPeakAtBound(elderDir);
        // The child's cgroup is inside its parent's: the kernel counts it against both.
        expect(leafOf(elderDir, child.terminalId)).toBeDefined();
      } finally {
        c.dispose();
      }
    },
    120_000,
  );

  attack(
    'memory',
    'agents the operator starts side by side cannot add their bounds up past the bound of all agents',
    async () => {
      const c = canary(rt().workspace);
      try {
        const share = Math.floor((0.85 * LIMIT) / MiB); // within each one's own bound; two are past ALL
        const tags = [`hog-${process.pid}-left`, `hog-${process.pid}-right`];
        const agents = [];
        for (const [i, name] of ['left', 'right'].entries()) {
          const a = await agentWithTerminal(name);
          agents.push(a);
          await a.exec(`(${hog(share, `${c.path}-${i}`, tags[i]!, 600)}) > /dev/null 2>&1 &`);
          if (i === 0) await until(() => existsSync(`${c.path}-0`), 'the first held its share');
        }
        await until(() => alive(tags[0]!) + alive(tags[1]!) <= 1, 'one hog killed');
        const group = join(runtimeCgroup(), 'agents');
        expect(count(group, 'memory.limit_in_bytes')).toBe(ALL);
        // Both agents' cgroups are in it, each with its own bound.
        for (const a of agents) expect(count(agentDirOf(a.terminalId), 'memory.limit_in_bytes')).toBe(LIMIT);
        const peak = count(group, 'memory.max_usage_in_bytes');
        const seen = `peak ${(peak / MiB).toFixed(2)} MiB of ${ALL / MiB}; the watch's kills: ${killLog()}`;
        expect(peak, seen).toBeLessThanOrEqual(ALL + FORCED);
        expect(peak, seen).toBeGreaterThan(ALL - 8 * MiB);
      } finally {
        c.dispose();
      }
    },
    120_000,
  );

  attack(
    'memory',
    'at the bound of all agents, the agent holding the most is killed in, not the first agent started',
    async () => {
      const c = canary(rt().workspace);
      try {
        // v1 marks every cgroup below the one at its bound as under OOM: the watch once took the first agent's
        // (the deepest marked, ties in start order) for the bound met, and killed the small holder there.
        const tags = { small: `hog-${process.pid}-small`, big: `hog-${process.pid}-big` };
        const small = await agentWithTerminal('small');
        await small.exec(`(${hog(100, `${c.path}-small`, tags.small, 600)}) > /dev/null 2>&1 &`);
        await until(() => existsSync(`${c.path}-small`), 'the small one held its 100 MiB');
        const big = await agentWithTerminal('big');
        await big.exec(`(${hog(155, `${c.path}-big`, tags.big, 600)}) > /dev/null 2>&1 &`);
        await until(
          () => runtimeKills(rt(), big.terminalId).length + runtimeKills(rt(), small.terminalId).length >= 1,
          'an OOM kill',
        );
        await until(() => alive(tags.big) === 0, 'the big hog killed');
        // The canaries: the small holder killed instead, or the big one got all it asked for.
        expect(alive(tags.small)).toBe(1);
        expect(runtimeKills(rt(), small.terminalId)).toEqual([]);
        expect(existsSync(`${c.path}-big`)).toBe(false);
      } finally {
        c.dispose();
      }
    },
    120_000,
  );

  attack(
    'memory',
    'opening, writing and closing terminals in a loop leaves no memory charged behind (page cache of a closed one)',
    async () => {
      const keeper = await agentWithTerminal('churner');
      const agentDir = agentDirOf(keeper.terminalId);
      const before = count(agentDir, 'memory.usage_in_bytes');
      const bus = await sockets.as('churner');
      for (let i = 0; i < 5; i++) {
        const opened = ok(await call(bus, 'churner', 'terminal.open', {}, { timeoutMs: 30_000 }));
        const terminalId = String(opened['terminalId']);
        const command = `head -c ${16 * MiB} /dev/urandom > churn-${i}.bin && sync churn-${i}.bin`;
        ok(await call(bus, 'churner', 'terminal.exec', { terminalId, command }, { timeoutMs: 30_000 }));
        ok(await call(bus, 'churner', 'terminal.close', { terminalId }, { timeoutMs: 30_000 }));
        await until(() => leafOf(agentDir, terminalId) === undefined, 'the closed terminal’s cgroup removed');
      }
      // Each closed terminal's 16 MiB of page cache would stay charged to the agent (and keep its cgroup alive
      // in the kernel, one of 65,535); reclaimed at the close, the agent is back near where it was.
      expect(count(agentDir, 'memory.usage_in_bytes') - before).toBeLessThan(16 * MiB);
    },
    120_000,
  );

  attack(
    'memory',
    'raising its own bound or moving out of its cgroup: the files are read-only in the sandbox, and the hog dies',
    async () => {
      const c = canary(rt().workspace);
      try {
        const { exec, terminalId } = await agentWithTerminal('escaper');
        const agentDir = agentDirOf(terminalId);
        // A script the gate sees only as `perl <file>`: the kernel's answer is what is tested here.
        const writes: Array<[string, string]> = [
          [`${where.ok ? where.dir : ''}/cgroup.procs`, '$$'],
          [`${runtimeCgroup()}/cgroup.procs`, '$$'],
          [`${agentDir}/memory.limit_in_bytes`, '-1'],
          [`${agentDir}/memory.memsw.limit_in_bytes`, '-1'],
          [`${agentDir}/memory.oom_control`, '1'],
        ];
        const script = writes
          .map(
            ([path, text]) =>
              `if (open(my $f, ">", "${path}")) { print $f "${text}" eq "$$" ? $$ : "${text}"; ` +
              `print(close($f) ? "${path}: done\\n" : "${path}: $!\\n") } else { print "${path}: $!\\n" }`,
          )
          .join('\n');
        writeFileSync(join(rt().workspace, 'escape-memory.pl'), script);
        const out = String((await exec('perl escape-memory.pl'))['output']);
        const lines = out.split(/\r?\n/).filter((l) => l.includes(': '));
        expect(lines, out).toHaveLength(writes.length);
        for (const line of lines) expect(line).toMatch(/: (Read-only file system|Permission denied)$/);
        expect(count(agentDir, 'memory.limit_in_bytes')).toBe(LIMIT);
        const tag = `hog-${process.pid}-escaper`;
        expect((await exec(hog((3 * LIMIT) / MiB, c.path, tag)))['exitCode']).toBe(137);
        expect(existsSync(c.path)).toBe(false);
      } finally {
        c.dispose();
      }
    },
    120_000,
  );

  attack(
    'memory',
    'the operator (root agent) is not bounded: its terminal holds more than the agents’ bound',
    async () => {
      const c = canary(rt().workspace);
      try {
        const terminalId = String(ok(await rt().call('terminal.open', {}, { timeoutMs: 30_000 }))['terminalId']);
        const exec = async (command: string) =>
          ok(await rt().call('terminal.exec', { terminalId, command, timeoutMs: 60_000 }, { timeoutMs: 70_000 }));
        const r = await exec(hog((2 * LIMIT) / MiB, c.path, `hog-${process.pid}-root`));
        expect(r['exitCode'], JSON.stringify(r)).toBe(0);
        expect(existsSync(c.path)).toBe(true);
      } finally {
        c.dispose();
      }
    },
    120_000,
  );

  it('stopping the runtime removes its memory cgroups', async () => {
    const base = runtimeCgroup();
    await suite.stop();
    expect(existsSync(base)).toBe(false);
  });
});
