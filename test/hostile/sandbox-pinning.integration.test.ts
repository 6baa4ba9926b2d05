/**
 * An agent holds kernel resources that no process of its own holds, so that killing its processes frees nothing:
 * - memory: a file in a tmpfs (the sandbox's /tmp, /dev/shm, a hidden home directory, /dev itself) or a System V
 *   shared memory segment left behind by an `perl` that exited. Both stay charged to the agent's memory cgroup;
 *   when all agents together reach `maxMemoryAllAgents`, the OOM killer finds nothing of the pinning agent to kill
 *   and kills a neighbour's process instead;
 * - inotify: the kernel counts instances and watches per user, and a sandboxed shell runs as the runtime's user,
 *   so one agent's watchers could use up what the runtime's shell tracking and the user's own programs need.
 *
 * - disk: what a sandbox writes outside the workspace lands on the data dir's disk, the event log's.
 *
 * The sandbox now writes nowhere in memory (scratch directories on the data disk, every tmpfs read-only), its
 * bwrap sets `shm_rmid_forced` and a per-sandbox inotify share (sandbox-sysctls.ts). The canaries: the neighbour's
 * program killed, the agent holding more inotify than its share, the host unable to make an inotify instance.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect } from 'vitest';
import { which } from '../../actors/terminal/pty-spawn.ts';
import { ok } from '../support/replies.ts';
import { NR } from '../support/syscalls.ts';
import { attack } from './support.ts';
import { type AgentTerminal, limitSuite, runtimeKills } from './cgroup-support.ts';
import { call } from '../../infra/transport/client.ts';

const MiB = 1024 * 1024;
const LIMIT = 160 * MiB;
const ALL = 240 * MiB;
const SHARE = 5;
const DISK = 96 * MiB;

const suite = limitSuite('sandbox-pinning', 'memory', 'maxMemoryPerAgent', {
  maxMemoryPerAgent: LIMIT,
  maxMemoryAllAgents: ALL,
  sandboxInotifyShare: `${SHARE}%`,
  // Over the 80 MiB the first attack writes to the data disk on purpose; under the disk attack's 4 GiB.
  maxScratchPerAgent: DISK,
  scratchCheckMs: 100,
});
const { where, rt, agentWithTerminal, sockets } = suite;
const sandboxed = which('bwrap') !== undefined;

/** The runtime user's inotify maxima, as the runtime read them. */
const userMax = (name: string) =>
  Number(execFileSync('cat', [`/proc/sys/user/max_inotify_${name}`], { encoding: 'utf8' }));

/** SHARE% of the user's inotify maximum `name`, at least `floor`: what the runtime computes from the same file. */
const shareOf = (name: 'instances' | 'watches', floor: number) =>
  Math.max(floor, Math.floor((userMax(name) * SHARE) / 100));

/** The scratch directory of a terminal of the suite's runtime (`<dataDir>/sandbox/<terminalId>`). */
const scratchOf = (terminalId: string) => join(dirname(rt().workspace), 'data', 'sandbox', terminalId);

/** A perl program writing `mib` MiB into a memfd, then leaving a child that keeps it open and sleeps. */
function holdScript(mib: number): string {
  return [
    `my $name = "pin"; my $fd = syscall(${NR.memfd}, $name, 0); die "memfd_create: $!" if $fd < 0;`,
    'open(my $h, ">&=", $fd) or die "fdopen: $!"; binmode $h; my $chunk = "x" x (1 << 20);',
    `for (1..${mib}) { print $h $chunk or die "write: $!" } $h->flush;`,
    `$| = 1; print "held ${mib} MiB\\n";`,
    'if (fork() == 0) { close STDOUT; close STDERR; sleep 600; exit 0 }',
  ].join('\n');
}

/**
 * A neighbour agent's program asks for `mib` MiB in a terminal of its own, and gets it. The canary: that program
 * killed (by the kernel or the runtime) for memory another agent holds.
 */
async function neighbourGets(agentId: string, mib: number): Promise<void> {
  const neighbour = await agentWithTerminal(agentId);
  const grown = await neighbour.exec(
    `perl -e 'my @m; for (1..${mib}) { push @m, "x" x ${MiB} } print "got ${mib} MiB\\n"'`,
  );
  expect(grown['exitCode'], JSON.stringify(grown)).toBe(0);
  expect(runtimeKills(rt(), neighbour.terminalId)).toEqual([]);
  expect(String(grown['output'])).toContain(`got ${mib} MiB`);
}

describe.skipIf(!where.ok || !sandboxed)('hostile: an agent pins memory no process holds', { timeout: 180_000 }, () => {
  attack(
    'memory',
    'files in /tmp and /dev/shm and a System V segment left behind do not get a neighbour OOM-killed',
    async () => {
      const pinner = await agentWithTerminal('pinner');
      // 110 MiB in three places that used to be held by no process: /tmp and /dev/shm (a tmpfs each), and a System V
      // segment written by a perl that exits without removing it. Under the pinner's own bound (160 MiB).
      const segment =
        `perl -e 'my $id = shmget(0, 30 << 20, 0600 | 01000); defined $id or die "shmget: $!"; ` +
        `shmwrite($id, "x" x (30 << 20), 0, 30 << 20) or die "shmwrite: $!"; print "segment $id\\n"'`;
      const pin = [
        'dd if=/dev/zero of=/tmp/pin bs=1M count=50 status=none',
        'dd if=/dev/zero of=/dev/shm/pin bs=1M count=30 status=none',
        segment,
        'stat -c "%s %n" /tmp/pin /dev/shm/pin',
        'ipcs -m | grep -c "^0x" || true',
      ].join(' && ');
      const pinned = await pinner.exec(pin);
      expect(pinned['exitCode'], JSON.stringify(pinned)).toBe(0);
      const out = String(pinned['output']);
      const scratch = scratchOf(pinner.terminalId);
      expect(out).toContain(`${50 * MiB} /tmp/pin`);
      expect(out).toContain(`${30 * MiB} /dev/shm/pin`);
      expect(out).toMatch(/segment \d+/);
      // The neighbour asks for 135 MiB: with the pinner's 110 MiB held, all agents would pass their 240 MiB.
      await neighbourGets('neighbour', 135);

      // The segment went with the perl that made it (shm_rmid_forced): none is left.
      expect(out.trim().split(/\r?\n/).at(-1)).toBe('0');
      // The files are on the data disk, in the terminal's scratch directory, not in memory.
      expect(statSync(join(scratch, 'tmp', 'pin')).size).toBe(50 * MiB);
      expect(statSync(join(scratch, 'shm', 'pin')).size).toBe(30 * MiB);

      // The pinner's terminal closes: its scratch directory goes with it.
      ok(await rt().call('terminal.close', { terminalId: pinner.terminalId }, { agentId: 'pinner' }));
      for (let i = 0; i < 100 && existsSync(scratch); i++) await new Promise((r) => setTimeout(r, 20));
      expect(existsSync(scratch)).toBe(false);
    },
    120_000,
  );

  attack(
    'memory',
    'memory a small process holds (a memfd a sleeping perl keeps): the runtime kills the holder, not the neighbour',
    async () => {
      const pinner = await agentWithTerminal('holder');
      // 140 MiB written into a memfd; a child keeps the descriptor and sleeps. Charged to the holder's terminal,
      // mapped by no process: the kernel's OOM killer ranks a sleeping perl far below the neighbour's program.
      writeFileSync(join(rt().workspace, 'hold.pl'), holdScript(140));
      const held = await pinner.exec('perl hold.pl');
      expect(String(held['output']), JSON.stringify(held)).toContain('held 140 MiB');
      // The neighbour asks for 110 MiB: with the holder's ~145 MiB, all agents would pass their 240 MiB.
      await neighbourGets('grower', 110);
      // The runtime killed in the holder's terminal, the sleeping perl but not the shell, and says so.
      expect(runtimeKills(rt(), pinner.terminalId)).toEqual([{ processes: 1, step: 'biggest' }]);
      expect(String((await pinner.exec('pgrep -c -f hold.pl || true'))['output']).trim()).toBe('0');
      // The holder's next failing command is told which bound its terminal met.
      const told = await pinner.exec('false');
      expect(told['limitsHit'], JSON.stringify(told)).toEqual(['maxMemoryPerAgent']);
      expect(told['hint']).toContain('1 process of it was killed at the memory bound');
    },
    120_000,
  );

  attack(
    'memory',
    'a sub-agent holding memory through a small process: at its parent’s bound, the holder is killed, not the parent',
    async () => {
      const boss = await agentWithTerminal('boss');
      const kid = await agentWithTerminal('kid', 'boss');
      writeFileSync(join(rt().workspace, 'hold-kid.pl'), holdScript(120));
      expect(String((await kid.exec('perl hold-kid.pl'))['output'])).toContain('held 120 MiB');
      // The parent asks for 60 MiB: with its sub-agent's ~125 MiB, their bound (160 MiB) is passed.
      const grown = await boss.exec(`perl -e 'my @m; for (1..60) { push @m, "x" x ${MiB} } print "got 60 MiB\\n"'`);
      // The canary: the parent's program killed while its sub-agent keeps its memory.
      expect(grown['exitCode'], JSON.stringify(grown)).toBe(0);
      expect(runtimeKills(rt(), boss.terminalId)).toEqual([]);
      expect(runtimeKills(rt(), kid.terminalId)).toEqual([{ processes: 1, step: 'biggest' }]);
    },
    120_000,
  );

  attack('memory', 'no tmpfs is writable: /dev, /run and the hidden homes refuse a file', async () => {
    const { exec } = await agentWithTerminal('squatter');
    const homes = readdirSync('/home').map((n) => join('/home', n));
    const targets = ['/dev', '/run', ...homes].map((d) => `${d}/pinned`);
    const tries = targets.map((p) => `{ : > ${p}; } 2>&1 | grep -q "Read-only file system" && echo "refused ${p}"`);
    const r = await exec(tries.join('; '));
    for (const p of targets) expect(String(r['output']), JSON.stringify(r)).toContain(`refused ${p}`);
  });
});

describe.skipIf(!sandboxed)('hostile: an agent takes the inotify allowance of the runtime user', () => {
  attack(
    'inotify',
    'instances and watches stop at the sandbox’s share, and the host can still make an instance meanwhile',
    async () => {
      const [instances, watches] = [shareOf('instances', 1), shareOf('watches', 1024)];
      const { exec } = await agentWithTerminal('watcher');
      // Up to 300 instances and 3× the share of watches (one per file); a child keeps them while the host checks.
      const script = [
        'my ($n, $w) = (0, 0); my @fd;',
        `while ($n < 300) { my $fd = syscall(${NR.init}, 0); last if $fd < 0; push @fd, $fd; $n++ }`,
        'mkdir "/tmp/w";',
        `for my $i (1..${watches * 3}) { open(my $f, ">", "/tmp/w/f$i"); close $f;`,
        `  last if syscall(${NR.watch}, $fd[0], "/tmp/w/f$i", 2) < 0; $w++ }`,
        '$| = 1; print "$n $w\\n";',
        'if (fork() == 0) { close STDOUT; close STDERR; sleep 20 }',
      ].join('\n');
      writeFileSync(join(rt().workspace, 'grab.pl'), script);
      const r = await exec('perl grab.pl');
      const [held, watched] = String(r['output']).trim().split(/\r?\n/).at(-1)!.split(' ').map(Number);
      // The canary: more than the share. The share is what the runtime computed from the same maxima.
      expect(held, JSON.stringify(r)).toBe(instances);
      expect(watched, JSON.stringify(r)).toBe(watches);
      // While the agent holds its share, a program of the runtime's user on the host still gets an instance.
      const host = execFileSync('perl', ['-e', `syscall(${NR.init}, 0) >= 0 or die "inotify: $!"; print "ok"`], {
        encoding: 'utf8',
      });
      expect(host).toBe('ok');
    },
    120_000,
  );
});

describe.skipIf(!sandboxed)('hostile: an agent spreads its inotify watchers to hold more than its share', () => {
  attack(
    'inotify-spread',
    'two terminals of an agent and one of its sub-agent stop at the agent’s share together; a bystander has its own',
    async () => {
      const instances = shareOf('instances', 1);
      // Grabs up to 300 instances, says how many, and leaves a child holding them while the others grab.
      const grab = [
        `my $n = 0; while ($n < 300) { last if syscall(${NR.init}, 0) < 0; $n++ }`,
        '$| = 1; print "got $n\\n";',
        'if (fork() == 0) { close STDOUT; close STDERR; sleep 20 }',
      ].join('\n');
      writeFileSync(join(rt().workspace, 'spread.pl'), grab);
      const count = async (t: AgentTerminal) => {
        const r = await t.exec('perl spread.pl');
        return Number(/got (\d+)/.exec(String(r['output']))?.[1] ?? Number.NaN);
      };
      const first = await agentWithTerminal('spreader');
      const bus = await sockets.as('spreader');
      const opened = ok(await call(bus, 'spreader', 'terminal.open', {}, { timeoutMs: 30_000 }));
      const second: AgentTerminal = {
        terminalId: String(opened['terminalId']),
        exec: async (command) =>
          ok(await call(bus, 'spreader', 'terminal.exec', { terminalId: opened['terminalId'], command })),
      };
      const sub = await agentWithTerminal('spreader-sub', 'spreader');
      const held = [await count(first), await count(second), await count(sub)];
      // The canary: the agent and its sub-agent together past its share.
      expect(held, JSON.stringify(held)).toEqual([instances, 0, 0]);
      expect(await count(await agentWithTerminal('bystander'))).toBe(instances);
    },
    120_000,
  );
});

describe.skipIf(!sandboxed)('hostile: an agent reaches for the kernel settings of the host', () => {
  attack('kernel', 'a sysctl written from the sandbox: /proc/sys is read-only, the host’s and its own', async () => {
    const { exec } = await agentWithTerminal('tuner');
    // The same value written back (a no-op if it ever went through): a runtime run as root gives its sandboxes the
    // host's uid 0, which may write the host's global sysctls with no capability at all.
    const tries = ['fs/file-max', 'kernel/shm_rmid_forced', 'user/max_inotify_instances'].map(
      (k) =>
        `v=$(cat /proc/sys/${k}); { echo "$v" > /proc/sys/${k}; } 2>/dev/null && echo "wrote ${k}" || echo "no ${k}"`,
    );
    writeFileSync(join(rt().workspace, 'tune.sh'), tries.join('\n'));
    const out = String((await exec('sh tune.sh'))['output']);
    expect(out).not.toContain('wrote');
    expect(out.match(/^no /gm)).toHaveLength(3);
  });

  attack(
    'kernel',
    'a user namespace of its own, to mount the cgroup hierarchy and move out: none can be made',
    async () => {
      const { exec } = await agentWithTerminal('nester');
      // unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWCGROUP), then mount the memory hierarchy: in a namespace of its
      // own a process has every capability over what it mounts, and as the host's uid 0 it owns the cgroup files.
      const script = [
        `if (syscall(${NR.unshare}, 0x10000000 | 0x00020000 | 0x02000000) != 0) {`,
        '  print "unshare failed: $!\\n"; exit 0 }',
        'mkdir "/tmp/cg"; my ($src, $dir, $type, $opts) = ("none", "/tmp/cg", "cgroup", "memory");',
        `print syscall(${NR.mount}, $src, $dir, $type, 0, $opts) == 0 ? "mounted\\n" : "mount failed: $!\\n";`,
      ].join('\n');
      writeFileSync(join(rt().workspace, 'nest.pl'), script);
      const out = String((await exec('perl nest.pl'))['output']);
      expect(out).toContain('unshare failed');
      expect(out).not.toContain('mounted');
    },
  );
});

describe.skipIf(!sandboxed)('hostile: an agent fills the data disk from its sandbox', () => {
  attack(
    'disk',
    'a dd of 4 GiB into /tmp, and one into a deleted file held open, stop at maxScratchPerAgent; a bystander runs on',
    async () => {
      const bystander = await agentWithTerminal('disk-bystander');
      const kept = await bystander.exec(`head -c ${MiB} /dev/zero > /tmp/mine && echo kept`);
      expect(String(kept['output'])).toContain('kept');
      const fills = {
        '/tmp': 'dd if=/dev/zero of=/tmp/fill bs=1M count=4096 status=none; echo FILL-CANARY',
        'a deleted file':
          'exec 3>/tmp/gone; rm /tmp/gone; dd if=/dev/zero bs=1M count=4096 status=none >&3; echo FILL-CANARY',
      };
      for (const [where, fill] of Object.entries(fills)) {
        const filler = await agentWithTerminal(`disk-filler-${where.length}`);
        const bus = await sockets.as(`disk-filler-${where.length}`);
        const data = { terminalId: filler.terminalId, command: fill, timeoutMs: 120_000 };
        const reply = await call(bus, `disk-filler-${where.length}`, 'terminal.exec', data, { timeoutMs: 130_000 });
        // The canary: the fill went through (4 GiB past a 96 MiB bound).
        expect(JSON.stringify(reply), where).not.toContain('FILL-CANARY');
        expect(reply.ok, where).toBe(false);
        expect(JSON.stringify(reply), where).toContain('maxScratchPerAgent');
        // Its scratch, and with it what it wrote, goes from the disk.
        const scratch = scratchOf(filler.terminalId);
        for (let i = 0; i < 100 && existsSync(scratch); i++) await new Promise((r) => setTimeout(r, 50));
        expect(existsSync(scratch), where).toBe(false);
      }
      const after = await bystander.exec('cat /tmp/mine | wc -c');
      expect(String(after['output']).trim()).toBe(String(MiB));
    },
    240_000,
  );
});
