/**
 * `domains.terminal.maxProcessesPerAgent`: how many processes and threads an agent and its sub-agents run at once
 * in their terminals. Before it, one allowed program (`perl`, `python3`, a script: no name the gate can know)
 * could fork until the machine, the host with it, ran out. Each attack forks as much as it can, from a real
 * sandboxed (or opted-out) terminal of a sub-agent; the canary is a file the attack writes only if it got far
 * past the bound. The bound is a pids cgroup per agent (agent-cgroups.ts), so it needs a cgroup v1 pids
 * hierarchy the test process may write; where the machine has none, the attacks are reported skipped and the
 * one test that runs checks that the runtime says the bound is not enforced.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import { ok } from '../support/replies.ts';
import { attack, canary } from './support.ts';
import { count, leafOf, limitSuite } from './cgroup-support.ts';

/** The bound: well above what a shell and a few commands need, well below what a bomb would reach. */
const LIMIT = 48;
/** What the bombs try for; reaching it writes the canary. */
const WANTED = 400;

const suite = limitSuite('process-limit', 'pids', 'maxProcessesPerAgent', {
  maxProcessesPerAgent: LIMIT,
  sandboxOffFor: ['loose', 'nester'],
});
const { where, rt, sockets, runtimeCgroup, agentWithTerminal } = suite;

/**
 * A perl program (perl-base is on every Debian) in the background that forks children that sleep, until fork
 * fails or it has `wanted`; writes how many it got to `countPath`, writes `canaryPath` if it got them all, and
 * keeps them until killed.
 */
const bomb = (countPath: string, canaryPath: string, wanted = WANTED) =>
  `perl -e 'my $n = 0; while ($n < ${wanted}) { my $p = fork(); last unless defined $p; ` +
  `if ($p == 0) { sleep 600; exit 0 } $n++ } ` +
  `if ($n >= ${wanted}) { open(my $f, ">", "${canaryPath}"); close $f } ` +
  `open(my $o, ">", "${countPath}.part"); print $o $n; close $o; rename("${countPath}.part", "${countPath}"); ` +
  `sleep 600' > /dev/null 2>&1 &`;

/** Runs `bomb` in the background and waits for the count it writes (next to the canary); returns it. */
async function detonate(
  exec: (command: string) => Promise<Record<string, unknown>>,
  canaryPath: string,
  wanted = WANTED,
): Promise<number> {
  const countPath = `${canaryPath}.count`;
  await exec(bomb(countPath, canaryPath, wanted));
  for (let i = 0; i < 1200; i++) {
    if (existsSync(countPath)) return Number(readFileSync(countPath, 'utf8'));
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the bomb never wrote its count');
}

/** The pid of the `sleep <tag>` daemon an attack left, or '' when none runs. */
function daemonPid(tag: string): string {
  try {
    return execFileSync('pgrep', ['-f', `sleep ${tag}`], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
}

/**
 * Waits for the `sleep <tag>` daemon to run as itself (one process, named sleep: not a `setsid` on its way to
 * becoming it) and gives its pid.
 */
async function daemonStarted(tag: string): Promise<string> {
  const settled = () => {
    const pid = daemonPid(tag);
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/comm`, 'utf8') === 'sleep\n' ? pid : '';
    } catch {
      return ''; // gone meanwhile
    }
  };
  await expect.poll(settled, { timeout: 10_000 }).not.toBe('');
  return settled();
}

/** Closes `agentId`'s terminal; its `sleep <tag>` daemon must die with it, and its cgroup leaf must go. */
async function closedWithItsDaemon(agentId: string, terminalId: string, tag: string): Promise<void> {
  ok(await rt().call('terminal.close', { terminalId }, { agentId }));
  for (let i = 0; i < 500 && daemonPid(tag); i++) await new Promise((r) => setTimeout(r, 20));
  expect(daemonPid(tag)).toBe('');
  for (let i = 0; i < 500 && leafOf(runtimeCgroup(), terminalId); i++) await new Promise((r) => setTimeout(r, 20));
  expect(leafOf(runtimeCgroup(), terminalId)).toBeUndefined();
}

describe.skipIf(!where.ok)('hostile: an agent forks past its process limit', { timeout: 180_000 }, () => {
  attack(
    'processes',
    'a fork bomb by an allowed program stops at the bound; the host still answers',
    async () => {
      const c = canary(rt().workspace);
      try {
        const { terminalId, exec } = await agentWithTerminal('bomber');
        const forked = await detonate(exec, c.path);
        expect(forked).toBeLessThan(LIMIT);
        expect(existsSync(c.path)).toBe(false);
        const agentDir = join(leafOf(runtimeCgroup(), terminalId)!, '..');
        expect(count(agentDir, 'pids.max')).toBe(LIMIT);
        expect(count(agentDir, 'pids.current')).toBeLessThanOrEqual(LIMIT);
        // The host and the bomber's own terminal still work while the bomb holds every slot it could get.
        ok(await rt().call('runtime.ping', {}));
        expect(String((await exec('echo still here'))['output'])).toContain('still here');
        ok(await rt().call('terminal.close', { terminalId }, { agentId: 'bomber' }));
      } finally {
        c.dispose();
      }
    },
    120_000,
  );

  attack(
    'processes',
    'a command whose forks the bound refused is told so, once, and the log records it',
    async () => {
      const { exec } = await agentWithTerminal('counted');
      // In the foreground: forks until one fails, then kills its children and exits 1.
      const r = await exec(
        `perl -e 'my @k; while (@k < ${WANTED}) { my $p = fork(); if (!defined $p) { kill 9, @k; exit 1 } ` +
          `if ($p == 0) { sleep 600; exit 0 } push @k, $p } kill 9, @k; exit 0'`,
      );
      expect(r['exitCode'], JSON.stringify(r)).toBe(1);
      expect(r['limitsHit']).toEqual(['maxProcessesPerAgent']);
      expect(r['hint']).toContain(`(domains.terminal.maxProcessesPerAgent = ${LIMIT})`);
      const finished: unknown[] = [];
      await rt().log.scan({}, (f: { type: string; data: unknown }) => {
        const data = f.data as Record<string, unknown>;
        if (f.type !== 'terminal.command.finished' || data['terminalId'] !== r['terminalId']) return;
        if (data['commandId'] === r['commandId']) finished.push(data);
      });
      expect(finished).toMatchObject([{ exitCode: 1, limitsHit: ['maxProcessesPerAgent'] }]);
      const next = await exec('false');
      expect(next['limitsHit']).toBeUndefined();
      expect(next['hint']).toBeUndefined();
    },
    120_000,
  );

  attack(
    'processes',
    'a sub-agent spends its parent’s bound: parent and child together stay within it, then no shell starts',
    async () => {
      const c = canary(rt().workspace);
      try {
        const parent = await agentWithTerminal('elder');
        expect(await detonate(parent.exec, c.path, 30)).toBe(30);
        const child = await agentWithTerminal('younger', 'elder');
        const second = await detonate(child.exec, `${c.path}-2`);
        expect(30 + second).toBeLessThan(LIMIT);
        expect(existsSync(`${c.path}-2`)).toBe(false);
        const elderDir = join(leafOf(runtimeCgroup(), parent.terminalId)!, '..');
        expect(count(elderDir, 'pids.current')).toBeLessThanOrEqual(LIMIT);
        // The child's cgroup is inside its parent's: the kernel counts it against both.
        expect(leafOf(elderDir, child.terminalId)).toBeDefined();
        // A new sub-agent of the full subtree cannot start a shell, and is told why.
        ok(await call(await sockets.as('elder'), 'elder', 'agent.spawn', { label: 'third', agentId: 'third' }));
        const refused = await call(await sockets.as('third'), 'third', 'terminal.open', {}, { timeoutMs: 30_000 });
        expect(refused).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
        const message = refused.ok ? '' : refused.error.message;
        expect(message).toContain("Its ancestor 'elder' and its sub-agents run");
        expect(message).toContain(`domains.terminal.maxProcessesPerAgent = ${LIMIT}`);
      } finally {
        c.dispose();
      }
    },
    120_000,
  );

  attack(
    'processes',
    'moving itself out of its cgroup: the cgroup files are read-only in the sandbox, and the bomb still stops',
    async () => {
      const c = canary(rt().workspace);
      try {
        const { exec, terminalId } = await agentWithTerminal('escaper');
        const agentDir = join(leafOf(runtimeCgroup(), terminalId)!, '..');
        // A script the gate sees only as `perl <file>` (it asks about commands that name paths under /sys): the
        // kernel's answer is what is tested here. Each line: what was tried, and the error, or "done".
        const writes: Array<[string, string]> = [
          [`${where.ok ? where.dir : ''}/cgroup.procs`, '$$'],
          [`${runtimeCgroup()}/cgroup.procs`, '$$'],
          [`${agentDir}/cgroup.procs`, '$$'],
          [`${agentDir}/pids.max`, '100000'],
          [`${agentDir}/pids.max`, 'max'],
        ];
        const script = [
          ...writes.map(
            ([path, text]) =>
              `if (open(my $f, ">", "${path}")) { print $f "${text}" eq "$$" ? $$ : "${text}"; ` +
              `print(close($f) ? "${path}: done\\n" : "${path}: $!\\n") } else { print "${path}: $!\\n" }`,
          ),
          `print(mkdir("${runtimeCgroup()}/mine") ? "mkdir: done\\n" : "mkdir: $!\\n");`,
        ].join('\n');
        writeFileSync(join(rt().workspace, 'escape.pl'), script);
        const out = String((await exec('perl escape.pl'))['output']);
        const lines = out.split(/\r?\n/).filter((l) => l.includes(': '));
        expect(lines, out).toHaveLength(writes.length + 1);
        for (const line of lines) expect(line).toMatch(/: (Read-only file system|Permission denied)$/);
        expect(count(join(leafOf(runtimeCgroup(), terminalId)!, '..'), 'pids.max')).toBe(LIMIT);
        expect(await detonate(exec, c.path)).toBeLessThan(LIMIT);
        expect(existsSync(c.path)).toBe(false);
      } finally {
        c.dispose();
      }
    },
    120_000,
  );

  attack(
    'processes',
    'a daemon that leaves the shell’s session (setsid) dies when its terminal closes (unsandboxed terminal)',
    async () => {
      const tag = `${900000 + Math.floor(Math.random() * 99999)}`;
      const { terminalId, exec } = await agentWithTerminal('loose', 'main', { sandbox: false });
      await exec(`setsid sleep ${tag} < /dev/null > /dev/null 2>&1 & disown`);
      await daemonStarted(tag);
      await closedWithItsDaemon('loose', terminalId, tag);
    },
    60_000,
  );

  attack(
    'processes',
    'a daemon that moved itself into a sub-cgroup of its leaf dies when its terminal closes (unsandboxed terminal)',
    async () => {
      const tag = `${900000 + Math.floor(Math.random() * 99999)}`;
      const { terminalId, exec } = await agentWithTerminal('nester', 'main', { sandbox: false });
      // The runtime's user owns the leaf, so an unsandboxed shell can make a cgroup below it, in every hierarchy,
      // and move itself there: out of the leaf's own cgroup.procs. Its daemon then leaves the session too. A
      // script: the gate asks about a command line that names paths under /sys, and the kernel is tested here.
      writeFileSync(
        join(rt().workspace, 'nest.sh'),
        `for l in $(grep '/t-' /proc/self/cgroup); do c=$(echo "$l" | cut -d: -f2); p=$(echo "$l" | cut -d: -f3)\n` +
          `d="/sys/fs/cgroup/$c$p/hide/deeper"; mkdir -p "$d" && echo $$ > "$d/cgroup.procs" && echo "moved $c"\n` +
          `done\nsetsid sleep ${tag} < /dev/null > /dev/null 2>&1 &\n`,
      );
      const moved = await exec('bash nest.sh');
      expect(String(moved['output'])).toContain('moved pids');
      const pid = await daemonStarted(tag);
      const own = readFileSync(`/proc/${pid}/cgroup`, 'utf8')
        .split('\n')
        .filter((l) => l.includes('/t-'));
      expect(own.length).toBeGreaterThan(0);
      for (const line of own) expect(line).toMatch(/\/hide\/deeper$/);
      await closedWithItsDaemon('nester', terminalId, tag);
    },
    60_000,
  );

  /** The root's bomb: its children hold their slots until the runtime stops. */
  let rootBomb = '';

  attack(
    'processes',
    'the operator (root agent) is not bounded: its terminal forks past the agents’ bound',
    async () => {
      const c = canary(rt().workspace);
      rootBomb = c.path;
      const terminalId = String(ok(await rt().call('terminal.open', {}, { timeoutMs: 30_000 }))['terminalId']);
      const exec = async (command: string) =>
        ok(await rt().call('terminal.exec', { terminalId, command, timeoutMs: 60_000 }, { timeoutMs: 70_000 }));
      expect(await detonate(exec, c.path, 2 * LIMIT)).toBe(2 * LIMIT);
    },
    120_000,
  );

  it('stopping the runtime kills every process its terminals left and removes its cgroups', async () => {
    const base = runtimeCgroup();
    const sleepers = () => {
      try {
        return execFileSync('pgrep', ['-f', rootBomb], { encoding: 'utf8' }).trim().split('\n').length;
      } catch {
        return 0;
      }
    };
    expect(sleepers()).toBeGreaterThan(LIMIT);
    await suite.stop();
    expect(sleepers()).toBe(0);
    expect(existsSync(base)).toBe(false);
  });
});
