/**
 * A sandboxed terminal's close finds its session's processes in its cgroup leaf (`leafSessionMembers`), not by a
 * scan of /proc: live, a real sandboxed bash in a pids leaf, with a background job that traps HUP and TERM. The
 * close must still signal it and give it its grace period (the trap writes a file), then leave nothing running.
 * Without the leaf's members the shell, the namespace's init, is killed first and takes the job with it untrapped.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { which } from '../../../actors/terminal/pty-spawn.ts';
import { readStat } from '../../../actors/terminal/terminal-proc.ts';
import { ownCgroup } from '../../hostile/cgroup-support.ts';
import { terminalHarness } from '../../support/terminal-harness.ts';

const A = 'a1';
const ready = ownCgroup('pids').ok && which('bwrap') !== undefined;

describe.skipIf(!ready)('a sandboxed terminal closed by its cgroup leaf', () => {
  let h: ReturnType<typeof terminalHarness>;
  beforeEach(() => {
    h = terminalHarness({ sandbox: true, maxProcessesPerAgent: 256, closeGraceMs: 3_000 });
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('gives a background job its SIGHUP, SIGTERM and grace period, then leaves nothing running', async () => {
    const { terminalId, pid } = await h.open(A, { sandbox: true });
    const session = h.manager.get(terminalId)!;
    expect(session.spec.sandbox).toBe(true);
    expect(session.spec.cgroupProcs?.length).toBeGreaterThan(0);
    await h.manager.exec(A, {
      terminalId,
      command: `(trap 'echo termed > termed.txt; exit 0' HUP TERM; while :; do sleep 0.05; done) & echo started`,
    });
    const members = session.members();
    expect(members.length).toBeGreaterThanOrEqual(3);
    await h.manager.close(A, { terminalId, graceMs: 3_000 });
    expect(existsSync(join(h.workspace, 'termed.txt'))).toBe(true);
    expect(readFileSync(join(h.workspace, 'termed.txt'), 'utf8')).toBe('termed\n');
    // Nothing of it runs once the close returns; the zombies go as they are reaped.
    const running = (p: number) => {
      const s = readStat(p);
      return s !== undefined && s.state !== 'Z';
    };
    expect([pid, ...members].filter(running)).toEqual([]);
    await vi.waitFor(() => expect([pid, ...members].filter((p) => readStat(p) !== undefined)).toEqual([]));
  });
});
