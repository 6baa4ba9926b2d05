/**
 * Answering permission requests from the CLI, and input to running programs:
 * `skein approvals --once` lists a pending request, `skein approve` lets it
 * run, `skein deny --always` refuses and learns a rule; data written to an
 * interpreter is its own rule class, to a pager it is allowed under the
 * grant that started it, and a line typed at the prompt is a command.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startEmbeddedCli, type EmbeddedRun } from '../support/cli.ts';

describe('approvals and terminal input through the CLI', () => {
  let run: EmbeddedRun;
  let data: string;
  let ws: string;
  const call = (type: string, body: unknown, agent = 'main') =>
    runCli(['call', type, JSON.stringify(body), '--agent', agent, '--data', data, '--timeout', '60000']);
  const json = async (p: ReturnType<typeof call>) => {
    const r = await p;
    return JSON.parse(r.stdout) as Record<string, any>;
  };
  const pendingIds = async () =>
    (
      (await json(
        runCli(['approvals', '--once', '--json', '--data', data]).then((r) => ({
          ...r,
          stdout: `{"requests":${r.stdout}}`,
        })),
      )) as { requests: Array<{ requestId: string; input: string }> }
    ).requests;

  beforeAll(async () => {
    run = await startEmbeddedCli({
      policy: {
        default: 'allow',
        tools: {
          terminal: { always_confirm: [{ pattern: '^touch\\b' }], always_deny: [{ pattern: '^rm\\b' }] },
          terminal_input: { default: 'deny' },
        },
      },
    });
    ({ data, workspace: ws } = run);
  });
  afterAll(async () => run?.dispose());

  it('lists a pending request and lets it run when approved', async () => {
    const { terminalId } = await json(call('terminal.open', {}));
    const exec = call('terminal.exec', { terminalId, command: 'touch approved.txt' });
    let pending: Array<{ requestId: string; input: string }> = [];
    await expect.poll(async () => (pending = await pendingIds()).length, { timeout: 15_000 }).toBe(1);
    expect(pending[0]!.input).toBe('touch approved.txt');
    const listed = await runCli(['approvals', '--once', '--data', data]);
    expect(listed.stdout).toContain(`${pending[0]!.requestId}  main  terminal: touch approved.txt`);
    // Nothing runs while the request waits.
    expect(existsSync(join(ws, 'approved.txt'))).toBe(false);
    const approved = await runCli(['approve', pending[0]!.requestId, '--data', data]);
    expect(approved.stdout).toMatch(/granted by user/);
    const r = JSON.parse((await exec).stdout) as { ok: boolean; status: string };
    expect(r).toMatchObject({ ok: true, status: 'exited', exitCode: 0 });
    // The approved command really ran, in the workspace.
    expect(existsSync(join(ws, 'approved.txt'))).toBe(true);
  });

  it('refuses with deny --always and learns a rule into the project policy', async () => {
    const { terminalId } = await json(call('terminal.open', {}));
    const exec = call('terminal.exec', { terminalId, command: 'touch denied.txt' });
    let pending: Array<{ requestId: string }> = [];
    await expect.poll(async () => (pending = await pendingIds()).length, { timeout: 15_000 }).toBe(1);
    const denied = await runCli(['deny', pending[0]!.requestId, '--always', '--data', data]);
    expect(denied.code).toBe(0);
    const r = JSON.parse((await exec).stdout) as { ok: boolean; error: { code: string; message: string } };
    expect(r).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(existsSync(join(ws, 'denied.txt'))).toBe(false);
    const policy = readFileSync(join(ws, '.skein', 'policy.json'), 'utf8');
    // The narrowest rule that covers the request: this exact command line (issue 14).
    expect(JSON.parse(policy).tools.terminal.always_deny).toEqual([
      { pattern: '^rm\\b' },
      { pattern: '(?-i)^touch denied\\.txt$' },
    ]);
    // Learned: the same call is now denied without asking.
    const again = await json(call('terminal.exec', { terminalId, command: 'touch denied.txt' }));
    expect(again).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(existsSync(join(ws, 'denied.txt'))).toBe(false);
  });

  it(
    'checks input by what the terminal runs: interpreter ' + '(own class), pager (allowed), prompt (a command)',
    async () => {
      const { terminalId } = await json(call('terminal.open', {}));
      // At the prompt, a completed line is a command: rm is denied by rule.
      expect(await json(call('terminal.write', { terminalId, data: 'rm -rf somewhere\n' }))).toMatchObject({
        ok: false,
        error: { code: 'permission_denied' },
      });
      // A pager runs under the grant of the command that started it: keys pass.
      const pager = await json(call('terminal.exec', { terminalId, command: 'seq 1 200 | less', yieldMs: 500 }));
      expect(['running', 'input_required']).toContain(pager['status']);
      await expect
        .poll(async () => (await json(call('terminal.write', { terminalId, data: 'q' })))['ok'], { timeout: 10_000 })
        .toBe(true);
      await json(call('terminal.wait', { terminalId, timeoutMs: 10_000 }));
      // An interpreter's input is the terminal_input class (denied by this policy).
      const repl = await json(call('terminal.exec', { terminalId, command: 'python3 -q', yieldMs: 800 }));
      expect(repl['status']).not.toBe('exited');
      await expect
        .poll(
          async () => (await json(call('terminal.write', { terminalId, data: 'print(6*7)\n' })))['error']?.['code'],
          {
            timeout: 10_000,
          },
        )
        .toBe('permission_denied');
    },
  );
});
