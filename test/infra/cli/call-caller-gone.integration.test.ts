/**
 * A request whose caller has gone is not executed later (issue 14, "Friction"): `skein call` sends its
 * timeout as `waitMs`; a confirm-level exec still waiting for an answer when that has passed is withdrawn
 * (`permission.denied`, by cancelled, reason caller_gone). Approving it afterwards grants nothing and the
 * canary file never appears; replay folds the log to the live digest. While it waits, `skein call` says so.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startEmbeddedCli, type EmbeddedRun } from '../../support/cli.ts';

describe('skein call: a caller that has gone', () => {
  let run: EmbeddedRun;
  const cli = (args: string[]) => runCli([...args, '--data', run.data]);
  const json = async (args: string[]) => JSON.parse((await cli(args)).stdout) as Record<string, any>;

  beforeAll(async () => {
    run = await startEmbeddedCli({
      policy: { default: 'allow', tools: { terminal: { always_confirm: [{ pattern: '^touch\\b' }] } } },
    });
  });
  afterAll(async () => run?.dispose());

  it('withdraws the ask before the call times out: the caller is told, a later approval runs nothing', async () => {
    const { terminalId } = await json(['call', 'terminal.open', '{}']);
    const canary = join(run.workspace, 'CANARY-caller-gone');
    const t0 = Date.now();
    const exec = await cli([
      'call',
      'terminal.exec',
      JSON.stringify({ terminalId, command: `touch ${canary}` }),
      '--timeout',
      '6000',
    ]);
    // Withdrawn a tenth before the caller's own timeout (600 ms here): the withdrawal is its reply.
    expect(exec.code, exec.stdout + exec.stderr).toBe(1);
    expect(Date.now() - t0).toBeGreaterThan(5_000);
    expect(JSON.parse(exec.stdout)).toMatchObject({
      ok: false,
      error: {
        code: 'permission_denied',
        message: expect.stringMatching(/^Permission to run "touch \S+CANARY-caller-gone" was cancelled: caller_gone: /),
      },
    });
    const said = exec.stderr.match(
      new RegExp(
        'skein call: waiting for an answer to permission request (p-\\S+) ' +
          '\\(terminal "touch [^"]+CANARY-caller-gone"\\) ' +
          'until (\\S+); after that it is withdrawn and nothing runs\\. Answer with `skein approve \\1`',
      ),
    );
    expect(said, exec.stderr).not.toBeNull();
    const requestId = said![1]!;

    // Approving now is too late: the request was withdrawn.
    expect((await json(['call', 'permission.pending', '{}'])).requests).toEqual([]);
    const approved = await cli(['approve', requestId]);
    expect(approved.stdout).toContain(`${requestId}: denied by cancelled (already decided)`);

    // The terminal's queue is drained (a later command finished), and the canary is not there.
    expect(await json(['call', 'terminal.exec', JSON.stringify({ terminalId, command: 'true' })])).toMatchObject({
      ok: true,
      status: 'exited',
    });
    expect(existsSync(canary)).toBe(false);

    // The log holds the withdrawal, with the caller's deadline as data.
    const timeline = (await cli(['replay', '--json'])).stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { type: string; data: Record<string, any> })
      .filter((f) => f.data?.requestId === requestId);
    expect(timeline.map((f) => f.type)).toEqual(['permission.requested', 'permission.denied']);
    expect(timeline[0]!.data.callerDeadline).toBe(said![2]!.replace(/;$/, ''));
    expect(timeline[1]!.data).toMatchObject({ by: 'cancelled', reason: expect.stringContaining('caller_gone:') });
    expect(timeline.some((f) => f.type === 'permission.granted')).toBe(false);

    // Replay folds to the live state.
    const live = (await cli(['status', '--digest'])).stdout.trim();
    expect((await cli(['replay', '--digest'])).stdout.trim()).toBe(live);
  }, 60_000);

  it('still runs a call approved while its caller waits', async () => {
    const { terminalId } = await json(['call', 'terminal.open', '{}']);
    const file = join(run.workspace, 'approved-in-time');
    const exec = cli(['call', 'terminal.exec', JSON.stringify({ terminalId, command: `touch ${file}` })]);
    let pending: Array<{ requestId: string; callerDeadline?: string }> = [];
    await expect
      .poll(async () => (pending = (await json(['call', 'permission.pending', '{}'])).requests).length, {
        timeout: 15_000,
      })
      .toBe(1);
    // The default --timeout (30 s) is the caller's wait, less 2 s (the margin's cap).
    const left = Date.parse(pending[0]!.callerDeadline!) - Date.now();
    expect(left).toBeGreaterThan(20_000);
    expect(left).toBeLessThan(28_000);
    expect((await cli(['approve', pending[0]!.requestId])).stdout).toMatch(/granted by user/);
    expect(JSON.parse((await exec).stdout)).toMatchObject({ ok: true, status: 'exited', exitCode: 0 });
    expect(existsSync(file)).toBe(true);
  }, 60_000);
});
