/**
 * A command a person approved runs in the shell directory the ask showed, live: a real runtime, a policy that asks
 * about `touch`, the person at the root answering "allow once". While the ask waits (or before the approved
 * command's turn comes), another command of the same terminal moves the shell elsewhere; on the code before,
 * the approved command ran there (a console review's attack: the canary appeared in the other directory, and
 * `rm -rf ./*` would have deleted what the person never saw named).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstPending, ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

describe('hostile: an approved command runs in the directory its ask showed', () => {
  let rt: TestRuntime;
  const at = (...names: string[]) => join(rt.workspace, ...names);

  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      policy: { default: 'allow', tools: { terminal: { always_confirm: [{ pattern: '^touch' }] } } },
    });
    mkdirSync(at('build', 'scratch'), { recursive: true });
    mkdirSync(at('src'), { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await rt?.dispose();
  });

  async function terminalIn(dir: string): Promise<string> {
    const terminalId = String(ok(await rt.call('terminal.open', {}))['terminalId']);
    ok(await rt.call('terminal.exec', { terminalId, command: `cd ${dir}` }));
    return terminalId;
  }

  it('a cd run while the ask waits: the approved command is refused, and runs nowhere', async () => {
    const terminalId = await terminalIn(at('build', 'scratch'));
    const touch = rt.call('terminal.exec', { terminalId, command: 'touch CANARY-1' }, { timeoutMs: 30_000 });
    const requestId = await firstPending(rt);
    const asked = ok(await rt.call('permission.pending'))['requests'] as Array<{ detail?: string }>;
    expect(asked[0]?.detail).toContain(`shell directory: ${at('build', 'scratch')}`);
    ok(await rt.call('terminal.exec', { terminalId, command: `cd ${at('src')}` }));
    ok(await rt.call('permission.decide', { requestId, decision: 'allow_once' }));
    const reply = await touch;
    expect(reply).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    if (!reply.ok) expect(reply.error.message).toContain(`but the shell is now in ${JSON.stringify(at('src'))}`);
    await new Promise((done) => setTimeout(done, 500));
    expect(existsSync(at('src', 'CANARY-1'))).toBe(false);
    expect(existsSync(at('build', 'scratch', 'CANARY-1'))).toBe(false);
    // The terminal goes on: a command approved where the shell is runs.
    const again = rt.call('terminal.exec', { terminalId, command: 'touch kept-1' }, { timeoutMs: 30_000 });
    ok(await rt.call('permission.decide', { requestId: await firstPending(rt), decision: 'allow_once' }));
    expect(await again).toMatchObject({ ok: true, exitCode: 0 });
    expect(existsSync(at('src', 'kept-1'))).toBe(true);
  });

  it("another agent's command on a terminal is refused before anyone is asked about it", async () => {
    const terminalId = await terminalIn(at('build', 'scratch'));
    ok(await rt.call('agent.spawn', { label: 'other', agentId: 'other' }));
    const asOther = { agentId: 'other', timeoutMs: 10_000 };
    for (const [type, data] of [
      ['terminal.exec', { terminalId, command: 'touch CANARY-3' }],
      ['terminal.write', { terminalId, data: 'touch CANARY-3\n' }],
    ] as const) {
      const reply = await rt.call(type, data, asOther);
      expect(reply).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
      if (!reply.ok) expect(reply.error.message).toContain('belongs to another agent');
    }
    // Canary: an ask (showing the terminal's directory) waited for a person about a call refused anyway.
    expect(ok(await rt.call('permission.pending'))['requests']).toEqual([]);
    expect(existsSync(at('build', 'scratch', 'CANARY-3'))).toBe(false);
  });

  it('a cd by the command ahead of it in the queue: refused when its turn comes', async () => {
    const terminalId = await terminalIn(at('build', 'scratch'));
    // Still running when the answer comes; it moves the shell once it is done sleeping.
    const ahead = { terminalId, command: `sleep 1.5; cd ${at('src')}`, yieldMs: 0 };
    expect(await rt.call('terminal.exec', ahead)).toMatchObject({ ok: true, status: 'running' });
    const touch = rt.call('terminal.exec', { terminalId, command: 'touch CANARY-2' }, { timeoutMs: 30_000 });
    ok(await rt.call('permission.decide', { requestId: await firstPending(rt), decision: 'allow_once' }));
    const reply = await touch;
    expect(reply).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    await new Promise((done) => setTimeout(done, 500));
    expect(existsSync(at('src', 'CANARY-2'))).toBe(false);
    expect(existsSync(at('build', 'scratch', 'CANARY-2'))).toBe(false);
  });
});
