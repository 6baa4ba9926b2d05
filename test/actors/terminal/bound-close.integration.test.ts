/**
 * A close by a bound (`stopSession` `now`, as the scratch guard closes a terminal), live on a real unsandboxed
 * terminal: nothing more of the command line runs, and no process of it runs a trap. Killed in the wrong order, a
 * shell woken by its job's death runs the rest of its line, and a shell's death as the session leader sends its jobs
 * SIGHUP (and SIGCONT to a stopped group). The canaries: files the rest of the line and the traps would make.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sessionMembers } from '../../../actors/terminal/terminal-proc.ts';
import { terminalHarness } from '../../support/terminal-harness.ts';

describe("a bound's close", () => {
  let h: ReturnType<typeof terminalHarness> | undefined;
  afterEach(async () => {
    await h?.dispose();
    h = undefined;
  });

  it('runs nothing more of the command line, nor a trap of a job it killed', async () => {
    h = terminalHarness({ sandbox: false });
    const { terminalId } = await h.open('a1');
    const canary = join(h.workspace, 'CANARY');
    // Jobs in groups of their own, with traps on every signal a close could let them see before their SIGKILL (made
    // by the shell itself, no fork: a window of microseconds is enough), started after 300 decoy groups that make
    // each read of the session and each round of kills take longer.
    const trapped = (n: number) =>
      `bash -c 'trap ": > ${canary}-trap${n}" HUP TERM CONT; while :; do sleep 0.05; done'`;
    const decoys = 'for i in $(seq 300); do sleep 100 & done';
    const command = `${decoys}; ${trapped(1)} & ${trapped(2)}; : > ${canary}-after`;
    const running = h.manager.exec('a1', { terminalId, command, timeoutMs: 30_000 }).catch((e: Error) => e);
    const session = h.manager.get(terminalId)!;
    await expect
      .poll(() => sessionMembers(session.pty.pid).filter((m) => m.comm === 'bash').length, { timeout: 5_000 })
      .toBeGreaterThanOrEqual(3);
    await expect.poll(() => sessionMembers(session.pty.pid).length, { timeout: 5_000 }).toBeGreaterThan(300);
    await session.close('disk-limit', 0, 'the test closed it as a bound would');
    expect(await running).toBeInstanceOf(Error);
    await new Promise((r) => setTimeout(r, 300));
    expect(['after', 'trap1', 'trap2'].filter((c) => existsSync(`${canary}-${c}`))).toEqual([]);
    expect(sessionMembers(session.pty.pid)).toEqual([]);
  });
});
