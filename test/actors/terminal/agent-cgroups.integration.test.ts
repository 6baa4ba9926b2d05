/**
 * AgentCgroups against the real v1 hierarchies of this machine: an agent's cgroups are removed with its last
 * terminal, and a terminal of that agent joined while that removal is under way gets its leaves in directories
 * that exist. The race this pins: CI failed two `terminal.open` calls when the removal awaited between the
 * hierarchies, and a join in that gap reused the agent's entry and made its leaf in a removed directory.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentCgroups } from '../../../actors/terminal/agent-cgroups.ts';
import { ownCgroup } from '../../hostile/cgroup-support.ts';

const writable = ownCgroup('pids').ok && ownCgroup('memory').ok;
const log = pino({ level: 'silent' });
const limits = { maxProcessesPerAgent: 512, maxMemoryPerAgent: 1 << 30, maxMemoryAllAgents: 2 ** 31 };
let cgroups: AgentCgroups | undefined;
afterAll(() => cgroups?.dispose());

describe.skipIf(!writable)('AgentCgroups: an agent closing its last terminal while it opens the next', () => {
  it('every join lands in directories that exist, whenever it comes during the last release', async () => {
    cgroups = AgentCgroups.open(limits, 'main', log);
    expect(cgroups).toBeDefined();
    const lineage = ['main', 'worker'];
    let procs = cgroups!.join('term0', lineage);
    // Join the next terminal after 1 to 40 turns of the event loop into the release of the last one: one of them
    // falls between the removal of the leaf and that of the agent's own cgroup, in each hierarchy.
    for (let i = 1; i <= 40; i++) {
      const releasing = cgroups!.release(`term${i - 1}`);
      for (let turn = 0; turn < i; turn++) await new Promise((r) => setImmediate(r));
      procs = cgroups!.join(`term${i}`, lineage);
      await releasing;
      const missing = procs.map(dirname).filter((dir) => !existsSync(dir));
      expect(missing, `join ${i}, ${i} turns into the release`).toEqual([]);
    }
    await cgroups!.release('term40');
    // The agent's cgroups went with its last terminal.
    for (const file of procs) expect(existsSync(dirname(dirname(file)))).toBe(false);
  });
});

describe.skipIf(!writable)('AgentCgroups: a process that moved itself into a sub-cgroup of its leaf', () => {
  it('is killed with its terminal, and the leaf with its sub-cgroups is removed', async () => {
    cgroups ??= AgentCgroups.open(limits, 'main', log);
    const procs = cgroups!.join('nested', ['main', 'nester']);
    const sleeper = spawn('sleep', ['1000'], { stdio: 'ignore' });
    const pid = sleeper.pid!;
    const gone = new Promise((r) => sleeper.once('exit', r));
    // What a shell that can write its own leaf does: a sub-cgroup two levels down in every hierarchy, and
    // itself moved there, out of the leaf's own cgroup.procs.
    for (const file of procs) {
      const sub = join(dirname(file), 'hide', 'deeper');
      mkdirSync(sub, { recursive: true });
      writeFileSync(join(sub, 'cgroup.procs'), String(pid));
      expect(readFileSync(file, 'utf8')).not.toContain(String(pid));
    }
    await cgroups!.release('nested');
    await gone;
    expect(sleeper.signalCode).toBe('SIGKILL');
    for (const file of procs) expect(existsSync(dirname(file))).toBe(false);
  });
});

describe.skipIf(!writable)('AgentCgroups: a process hidden below more sub-cgroups than a read takes', () => {
  it('is found by its own cgroup file and killed first, then the leaf and its sub-cgroups are removed', async () => {
    cgroups ??= AgentCgroups.open(limits, 'main', log);
    const procs = cgroups!.join('crowded', ['main', 'crowder']);
    const sleeper = spawn('sleep', ['1000'], { stdio: 'ignore' });
    // 4,200 empty sub-cgroups (a read takes 256; a first fix read 4,096 and then stopped), and the process two
    // levels down, beyond what one read reaches.
    for (const file of procs) {
      const leaf = dirname(file);
      for (let i = 1; i <= 4_200; i++) mkdirSync(join(leaf, `d${i}`));
      mkdirSync(join(leaf, 'd0', 'x'), { recursive: true });
      writeFileSync(join(leaf, 'd0', 'x', 'cgroup.procs'), String(sleeper.pid));
    }
    // How many sub-cgroups were left when it died. An earlier release found it only once it had removed them
    // all, which took longer than its processes had to die (2 s) on a slow day: it lived on.
    const subCgroups = (dir: string) => readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).length;
    const left = new Promise<number>((r) => sleeper.once('exit', () => r(subCgroups(dirname(procs[0]!)))));
    await cgroups!.release('crowded');
    expect(await left).toBeGreaterThan(4_000);
    expect(sleeper.signalCode).toBe('SIGKILL');
    for (const file of procs) expect(existsSync(dirname(file))).toBe(false);
  });
});

/** Makes 20 sub-cgroups of 250 characters, one in another, in each leaf, relative to each (the whole path is past
 * PATH_MAX), moves itself to the bottom of each, says ready and sleeps. */
const DEEP_HIDER = [
  '$| = 1; my $n = "x" x 250;',
  'for my $leaf (@ARGV) { chdir $leaf or die "$leaf: $!";',
  '  for (1 .. 20) { mkdir $n or die "mkdir: $!"; chdir $n or die "chdir: $!" }',
  '  open my $f, ">", "cgroup.procs" or die "procs: $!"; print $f $$; close $f or die "move: $!" }',
  'print "ready\\n"; sleep 1000;',
].join('\n');

describe.skipIf(!writable)('AgentCgroups: a process hidden below a path longer than PATH_MAX', () => {
  it('is found by its own cgroup file and killed, and the leaf with its sub-cgroups is removed', async () => {
    cgroups ??= AgentCgroups.open(limits, 'main', log);
    const leaves = cgroups!.join('deep', ['main', 'deeper']).map(dirname);
    const hider = spawn('perl', ['-e', DEEP_HIDER, ...leaves], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        hider.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
        hider.once('exit', (code) => reject(new Error(`the hider exited (${code}) before it hid`)));
      });
      // It hid: no path from here names its cgroup.
      const own = readFileSync(`/proc/${hider.pid}/cgroup`, 'utf8').split('\n');
      expect(own.filter((line) => /:(pids|memory):/.test(line) && line.length > 4_096)).toHaveLength(2);
      const gone = new Promise((r) => hider.once('exit', r));
      await cgroups!.release('deep');
      // The canary: the hider outlived its terminal's close.
      await Promise.race([gone, new Promise((r) => setTimeout(r, 2_000))]);
      expect(hider.signalCode).toBe('SIGKILL');
      for (const leaf of leaves) expect(existsSync(leaf)).toBe(false);
    } finally {
      hider.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 100));
      for (const leaf of leaves) spawnSync('find', [leaf, '-depth', '-type', 'd', '-delete']);
    }
  }, 60_000);
});
