/**
 * The gate judges a line typed at the prompt over several writes as a whole, and forgets it only when a command
 * line is really typed over it (Ctrl-E Ctrl-U). A review's attack, live: type `touch CANARY` without Enter
 * (allowed: no line ran), send an exec the policy refuses, then Enter. The gate had forgotten the line as the exec
 * came in, judged Enter as an empty line, and bash ran the line it still held. Also under a program that reads
 * nothing (`sleep`): text typed without Enter, then Enter, ran as one line judged empty.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { ALL_BUT_TOUCH_POLICY } from './support.ts';

describe('hostile: a line the gate judged stays judged until a command line replaces it', () => {
  let rt: TestRuntime;
  const write = (terminalId: string, data: string) => rt.call('terminal.write', { terminalId, data });

  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      policy: ALL_BUT_TOUCH_POLICY,
    });
  }, 60_000);
  afterAll(async () => {
    await rt?.dispose();
  });

  async function terminal(): Promise<string> {
    const terminalId = String(ok(await rt.call('terminal.open', {}))['terminalId']);
    ok(await rt.call('terminal.exec', { terminalId, command: 'true' }));
    return terminalId;
  }

  it('a refused exec leaves the unfinished line judged: Enter after it is refused', async () => {
    const terminalId = await terminal();
    const canary = join(rt.workspace, 'CANARY-refused-exec');
    expect(await write(terminalId, `touch ${canary}\r`)).toMatchObject({ ok: false });
    ok(await write(terminalId, `touch ${canary}`));
    const refused = await rt.call('terminal.exec', { terminalId, command: 'touch denied' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    const enter = await write(terminalId, '\r');
    expect(enter).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    await new Promise((done) => setTimeout(done, 1_000));
    expect(existsSync(canary)).toBe(false);
    // A command line typed over it clears the shell's line and the gate's together: the terminal goes on.
    expect(await rt.call('terminal.exec', { terminalId, command: 'echo clean' })).toMatchObject({
      ok: true,
      output: 'clean\n',
    });
    ok(await write(terminalId, 'echo typed\r'));
  });

  it('text typed without Enter under a program that reads nothing is judged with the Enter that ends it', async () => {
    const terminalId = await terminal();
    const canary = join(rt.workspace, 'CANARY-under-sleep');
    const sleeper = { terminalId, command: 'sleep 2; cat', yieldMs: 0, timeoutMs: 20_000 };
    expect(await rt.call('terminal.exec', sleeper)).toMatchObject({ ok: true, status: 'running' });
    await new Promise((done) => setTimeout(done, 300));
    ok(await write(terminalId, `touch ${canary}`));
    // Judged alone, ` #` and Enter is a comment; what the terminal's line holds is `touch … #`.
    expect(await write(terminalId, ' #\n')).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    await new Promise((done) => setTimeout(done, 2_500));
    expect(existsSync(canary)).toBe(false);
    ok(await rt.call('terminal.signal', { terminalId, signal: 'SIGINT' }));
  });
});
