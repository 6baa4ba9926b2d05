/**
 * AgentCgroups' joins whose cgroups are made elsewhere (the shell helper's process, `PtyZygote.makeDirs`) against
 * the real v1 hierarchies: joins during releases, batches that fail before, at or after an agent's bound, and the
 * release of a failed join beside the agent's next terminals. A shell must never run in an agent cgroup made
 * without its bound, and an agent must never be locked out of its terminals (two reviews' probes, 6 December).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type DirOp, makeDirsHere } from '../../../actors/terminal/cgroup-bounds.ts';
import { makeDirsSync } from '../../../actors/terminal/cgroup-dirs.mjs';
import { PtyZygote } from '../../../actors/terminal/pty-zygote.ts';
import { sharedAgentCgroups } from '../../hostile/cgroup-support.ts';

const { writable, limits, log, shared } = sharedAgentCgroups();

describe.skipIf(!writable)("AgentCgroups: cgroups made in the shell helper's process", () => {
  it('joins during releases land in directories that exist; a failed one is refused, the next makes them', async () => {
    const cgroups = shared();
    const zygote = new PtyZygote(log);
    try {
      const helper = (ops: readonly DirOp[]) => zygote.makeDirs(ops);
      const lineage = ['main', 'remote'];
      let procs = await cgroups!.join('z0', lineage, helper);
      for (let i = 1; i <= 20; i++) {
        const releasing = cgroups!.release(`z${i - 1}`);
        for (let turn = 0; turn < i; turn++) await new Promise((r) => setImmediate(r));
        procs = await cgroups!.join(`z${i}`, lineage, helper);
        await releasing;
        expect(
          procs.map(dirname).filter((dir) => !existsSync(dir)),
          `join ${i}`,
        ).toEqual([]);
      }
      // The agent's cgroup is made with a bound: its pids.max is the configured one.
      const agentPids = join(dirname(dirname(procs.find((p) => p.includes('/pids/')) ?? procs[0]!)), 'pids.max');
      expect(readFileSync(agentPids, 'utf8').trim()).toBe(String(limits.maxProcessesPerAgent));
      await cgroups!.release('z20');
      // Two joins at once of a new agent, the first one's batch failing: before anything is made, after the agent's
      // cgroup (the kernel refuses its memory bound), or at its leaf. Both are refused (the second would have put
      // its leaf in an agent cgroup without its bound), nothing of the first is left, and the agent's next terminal
      // makes its cgroup again, bounded.
      const failures = {
        first: (ops: readonly DirOp[]) => [{ mkdir: '/proc/no-such-dir/x' }, ...ops],
        bound: (ops: readonly DirOp[]) =>
          ops.map((op) => ('write' in op && op.write.endsWith('/memory.limit_in_bytes') ? { ...op, value: 'x' } : op)),
        leaf: (ops: readonly DirOp[]) => [...ops.slice(0, -1), { mkdir: '/proc/no-such-dir/x' }, ...ops.slice(-1)],
      };
      for (const [mode, spoil] of Object.entries(failures)) {
        const agent = ['main', `flaky-${mode}`];
        let first: readonly DirOp[] | undefined;
        const failing = (ops: readonly DirOp[]) => {
          if (first) return zygote.makeDirs(ops);
          first = ops;
          return zygote.makeDirs(spoil(ops));
        };
        const both = await Promise.allSettled([
          cgroups!.join(`${mode}1`, agent, failing),
          cgroups!.join(`${mode}2`, agent, failing),
        ]);
        expect(
          both.map((r) => r.status),
          mode,
        ).toEqual(['rejected', 'rejected']);
        const reason = (both[1] as PromiseRejectedResult).reason as Error;
        expect(reason.message).toMatch(new RegExp(`^cannot make the cgroups of terminal '${mode}2' under `));
        for (const id of [`${mode}1`, `${mode}2`]) await cgroups!.release(id);
        const made = first!.flatMap((op) => ('mkdir' in op ? [op.mkdir] : []));
        expect(
          made.filter((dir) => existsSync(dir)),
          mode,
        ).toEqual([]);
        const again = (await cgroups!.join(`${mode}3`, agent, helper)).map(dirname);
        const bounds = again.map((leaf) =>
          ['pids.max', 'memory.limit_in_bytes']
            .map((f) => join(dirname(leaf), f))
            .filter((f) => existsSync(f))
            .map((f) => readFileSync(f, 'utf8').trim()),
        );
        expect(bounds.flat().sort(), mode).toEqual([
          String(limits.maxMemoryPerAgent),
          String(limits.maxProcessesPerAgent),
        ]);
        await cgroups!.release(`${mode}3`);
        expect(existsSync(dirname(again[0]!)), mode).toBe(false);
      }
    } finally {
      zygote.close();
    }
  });
});

describe.skipIf(!writable)("AgentCgroups: a failed join's release beside the agent's next terminals", () => {
  // The helper made a batch and died before answering: the batch runs again here and fails (EEXIST), and its
  // release (the open's catch, not awaited) runs beside the agent's next terminals (a second review's probes).
  const diedAfterBatch = (ops: readonly DirOp[]) => {
    makeDirsSync(ops);
    return makeDirsHere(ops);
  };
  const settled = (p: Promise<unknown>) =>
    p.then(
      () => 'ok',
      (e: Error) => `rejected: ${e.message}`,
    );

  it("uncounts the entry it counted, not the agent's next one: no later open is refused or locked out", async () => {
    const cgroups = shared();
    // A release of the failed join took the count of the entry a later open made: the agent's cgroup was removed
    // under a terminal still opening there.
    expect(await settled(cgroups!.join('j1', ['main', 'reopened'], diedAfterBatch))).toMatch(/^rejected: .*EEXIST/);
    const failed = cgroups!.release('j1');
    const j3 = await cgroups!.join('j3', ['main', 'reopened']);
    await failed;
    const slowly = (ops: readonly DirOp[]) => new Promise((r) => setTimeout(r, 100)).then(() => makeDirsHere(ops));
    const j4 = settled(cgroups!.join('j4', ['main', 'reopened'], slowly));
    await cgroups!.release('j3');
    expect(existsSync(dirname(dirname(j3[0]!)))).toBe(true);
    expect(await j4).toBe('ok');
    await cgroups!.release('j4');
    // Released between the removal of a leaf's hierarchies, the count left the entry naming a removed cgroup in
    // one hierarchy: every later open of the agent failed (8 of 12 rounds).
    for (let i = 0; i < 12; i++) {
      const lineage = ['main', `locked-${i}`];
      expect(await settled(cgroups!.join(`x${i}`, lineage, diedAfterBatch))).toMatch(/^rejected: /);
      const first = cgroups!.release(`x${i}`);
      await cgroups!.join(`y${i}`, lineage);
      for (let turn = 0; turn < i % 4; turn++) await new Promise((r) => setImmediate(r));
      await Promise.all([first, cgroups!.release(`y${i}`)]);
      for (const id of [`z${i}`, `w${i}`]) {
        expect(await settled(cgroups!.join(id, lineage)), `round ${i}, ${id}`).toBe('ok');
        await cgroups!.release(id);
      }
    }
  });
});
