/**
 * Input approved for one program never reaches another, live: a real terminal, a policy that asks about every
 * write, a person answering "allow once". The agent writes a shell line while python3 holds the terminal, so
 * the ask shows it as input to python3; python exits before the person answers, and on the code before the
 * gate looked again after the answer, the approved line went to bash, which ran it (the canary file).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

type Ask = { requestId: string; input: string; detail?: string };

describe('hostile: an answer applies to the program the ask named', () => {
  let rt: TestRuntime;
  let terminalId: string;

  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      policy: { default: 'allow', tools: { terminal_input: { default: 'confirm' } } },
    });
    terminalId = String(ok(await rt.call('terminal.open', {}))['terminalId']);
  }, 60_000);
  afterAll(async () => {
    await rt?.dispose();
  });

  const pendingAsk = async () => {
    const r = await rt.call('permission.pending');
    return r.ok ? (r['requests'] as Ask[])[0] : undefined;
  };
  const foregroundIsPrompt = async () => {
    // The probe's ask, if any, says what the terminal runs: withdraw it at once (deny) either way.
    return (await rt.call('terminal.exec', { terminalId, command: 'true', timeoutMs: 10_000 })).ok;
  };

  it('a line approved as input to python3 is not written once bash reads the terminal', async () => {
    const canary = join(rt.workspace, 'CANARY-foreground');
    ok(
      await rt.call('terminal.exec', {
        terminalId,
        command: 'python3 -c "import time; time.sleep(2)"',
        yieldMs: 300,
        timeoutMs: 60_000,
      }),
    );
    const write = rt.call('terminal.write', { terminalId, data: `touch ${canary}\n` });
    let ask: Ask | undefined;
    for (const started = Date.now(); !ask && Date.now() - started < 10_000; ) {
      ask = await pendingAsk();
      if (!ask) await new Promise((r) => setTimeout(r, 25));
    }
    // The person reads: input to python3.
    expect(ask?.detail).toBe('"python3"');
    // python3 exits before they answer; bash is at its prompt again.
    await new Promise((r) => setTimeout(r, 2_500));
    ok(await rt.call('permission.decide', { requestId: ask!.requestId, decision: 'allow_once' }));
    const reply = await write;
    expect(reply).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    if (!reply.ok) expect(reply.error.message).toContain('now runs the shell prompt');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(existsSync(canary)).toBe(false);
    expect(await foregroundIsPrompt()).toBe(true);
  });

  it('an answer for the program still running is written', async () => {
    ok(await rt.call('terminal.exec', { terminalId, command: 'cat > echoed.txt', yieldMs: 300, timeoutMs: 60_000 }));
    const write = rt.call('terminal.write', { terminalId, data: 'kept line\n' });
    let ask: Ask | undefined;
    for (const started = Date.now(); !ask && Date.now() - started < 10_000; ) {
      ask = await pendingAsk();
      if (!ask) await new Promise((r) => setTimeout(r, 25));
    }
    expect(ask?.detail).toBe('"cat"');
    ok(await rt.call('permission.decide', { requestId: ask!.requestId, decision: 'allow_once' }));
    ok(await write);
    await rt.call('terminal.signal', { terminalId, signal: 'SIGINT' });
    const echoed = join(rt.workspace, 'echoed.txt');
    await expect.poll(() => existsSync(echoed) && readFileSync(echoed, 'utf8')).toBe('kept line\n');
  });
});
