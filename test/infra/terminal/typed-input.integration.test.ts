/**
 * Issue 11 (holes 1, 2, 3 and 5) end to end: over a real NATS server, through
 * the real gate, into real terminals, under the issue's policy (default deny;
 * allow `^ls\b`, `^echo\b`, `^cat\b`, `^git\s+status\b`; deny `^rm\b`, `curl`).
 * Whatever the gate answers (it may refuse control characters outright), no
 * canary file may ever appear: a command judged as `echo` runs nothing else, a
 * worker's arguments stay arguments, and bytes typed into `cat` never run at
 * the next prompt.
 */
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../support/replies.ts';
import { ISSUE_11_POLICY } from '../../support/permission-fixtures.ts';
import { startNetworkedRuntime, type TestRuntime } from '../../support/runtime.ts';

/** Issue 11's policy, with workers allowed so their command lines reach the gate's control check. */
const POLICY = { ...ISSUE_11_POLICY, tools: { ...ISSUE_11_POLICY.tools, spawn_agent: { default: 'allow' } } };

describe('typed input over NATS cannot run what the gate did not judge', () => {
  let rt: TestRuntime;
  let terminalId: string;
  const canaries = () => readdirSync(rt.workspace).filter((f) => f.startsWith('canary'));
  beforeAll(async () => {
    rt = await startNetworkedRuntime({ policy: POLICY });
    ({ terminalId } = ok(await rt.call('terminal.open', {})) as { terminalId: string });
  });
  afterAll(async () => rt?.dispose());

  const bytes = { CR: '\r', 'Ctrl-C': '\u0003', 'Ctrl-\\': '\u001c', 'Ctrl-U': '\u0015', 'Ctrl-W': '\u0017' };
  const more = { 'Ctrl-D': '\u0004', 'Ctrl-Z': '\u001a', 'Ctrl-O': '\u000f' };
  for (const [name, byte] of Object.entries({ ...bytes, ...more })) {
    it(`runs no second command from terminal.exec "echo x${name}touch canary"`, async () => {
      const canary = join(rt.workspace, `canary-exec-${name.replace(/\W/g, '')}`);
      const reply = await rt.call('terminal.exec', {
        terminalId,
        command: `echo x${byte}Xtouch ${canary}`,
        timeoutMs: 5_000,
      });
      // Allowed and run as one echo, or refused by the gate: either way, touch never runs.
      if (reply.ok) expect(reply).toMatchObject({ status: 'exited', exitCode: 0 });
      else expect(reply).toMatchObject({ error: { code: 'permission_denied' } });
      expect(existsSync(canary)).toBe(false);
    });
  }

  it('keeps a worker argument holding Ctrl-C an argument (agent.spawn)', async () => {
    const canary = join(rt.workspace, 'canary-worker');
    const reply = await rt.call('agent.spawn', {
      label: 'w',
      agentId: 'w',
      worker: { command: 'echo', args: [`x\u0003Xtouch ${canary} #`] },
    });
    if (reply.ok) await rt.call('agent.wait', { agentId: 'w', timeoutMs: 10_000 });
    else expect(reply).toMatchObject({ error: { code: 'permission_denied' } });
    expect(existsSync(canary)).toBe(false);
  });

  it('never runs text typed into cat at the next prompt (hole 5)', async () => {
    const canary = join(rt.workspace, 'canary-w');
    const running = ok(await rt.call('terminal.exec', { terminalId, command: 'cat', yieldMs: 300 }));
    expect(running['status']).toBe('running');
    const typed = await rt.call('terminal.write', { terminalId, data: `\u0004touch ${canary}` });
    if (!typed.ok) expect(typed).toMatchObject({ error: { code: 'permission_denied' } });
    ok(await rt.call('terminal.wait', { terminalId, timeoutMs: 20_000 }));
    // At the prompt, "ls -d typed-dir\r" is judged as `ls` and allowed: it must run `ls`, not `touch …ls -d …`.
    // (Not `.skein`: a command naming skein's policy directory always asks, issue 14.)
    mkdirSync(join(rt.workspace, 'typed-dir'), { recursive: true });
    ok(await rt.call('terminal.read', { terminalId }));
    const ls = await rt.call('terminal.write', { terminalId, data: 'ls -d typed-dir\r' });
    expect(ls.ok).toBe(true);
    let seen = '';
    // The typed line is echoed, then ls prints the name: wait for both before the next command.
    await expect
      .poll(
        async () => (seen += ok(await rt.call('terminal.read', { terminalId }))['output']).split('typed-dir').length,
        { timeout: 20_000 },
      )
      .toBeGreaterThanOrEqual(3);
    const after = ok(await rt.call('terminal.exec', { terminalId, command: 'echo done', timeoutMs: 20_000 }));
    expect(after['output']).toBe('done\n');
    expect(existsSync(canary)).toBe(false);
    expect(existsSync(`${canary}ls`)).toBe(false);
    expect(canaries()).toEqual([]);
  });
});
