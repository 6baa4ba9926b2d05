/**
 * Input to an interpreter, judged by what it runs, live against a real python3 REPL in a real terminal. The
 * policy allows only `print(` lines to the interpreter. Two ways around it: a second line in the same write
 * (the rule was matched against the whole write, so a first line `print(1)` passed it), and an unfinished line
 * after an allowed one, completed by a later allowed write (only completed lines were judged, each write
 * alone: python ran `__import__("os").system(…)#print(3)`). Both wrote the canary on the old code.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const POLICY = {
  default: 'allow',
  tools: { terminal_input: { default: 'deny', always_allow: [{ pattern: '^print\\(' }] } },
};

describe('hostile: input to an interpreter is judged line by line, unfinished lines included', () => {
  let rt: TestRuntime;
  let terminalId: string;
  const write = (data: string) => rt.call('terminal.write', { terminalId, data });
  const canary = (n: number) => join(rt.workspace, `CANARY-${n}`);

  beforeAll(async () => {
    rt = await startTestRuntime({ mode: 'embedded', policy: POLICY });
    terminalId = String(ok(await rt.call('terminal.open', {}))['terminalId']);
    ok(await rt.call('terminal.exec', { terminalId, command: 'python3 -q', yieldMs: 500, timeoutMs: 120_000 }));
    // The REPL is in the foreground once an allowed line runs in it.
    for (const started = Date.now(); ; await new Promise((r) => setTimeout(r, 200))) {
      if ((await write('print(40 + 2)\n')).ok) {
        const r = await rt.call('terminal.read', { terminalId, cursor: 0 });
        if (r.ok && /^42\r?$/m.test(String(r['output']))) break;
      }
      if (Date.now() - started > 20_000) throw new Error('python3 never answered at its prompt');
    }
  }, 60_000);
  afterAll(async () => {
    await rt?.dispose();
  });

  it('a second line in the same write is judged on its own', async () => {
    const r = await write(`print(1)\n__import__("os").system("touch ${canary(1)}")\n`);
    expect(r).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    await new Promise((done) => setTimeout(done, 1_000));
    expect(existsSync(canary(1))).toBe(false);
  });

  it('an unfinished line after an allowed one is judged with the write that holds it', async () => {
    // Old: only `print(2)` was judged; the next allowed write `print(3)` completed the hidden line, and python
    // ran `__import__("os").system(…)#print(3)`.
    const first = await write(`print(2)\n__import__("os").system("touch ${canary(2)}")#`);
    expect(first).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    ok(await write('print(3)\n'));
    await new Promise((done) => setTimeout(done, 1_000));
    expect(existsSync(canary(2))).toBe(false);
    // The REPL still answers allowed lines.
    ok(await write('print(6 * 7)\n'));
  });

  it("keys the interpreter's line editor acts on are refused, not judged as text", async () => {
    // A console review's attack: the line reads `print(1) #…` (allowed, and shown as a comment), then Ctrl-A
    // moves to its start and ten Ctrl-D delete `print(1) #`: python ran the rest.
    const typed = `print(1) #__import__("os").system("touch ${canary(3)}")\x01${'\x04'.repeat(10)}\r`;
    const r = await write(typed);
    expect(r).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    if (!r.ok) expect(r.error.message).toMatch(/Ctrl-A\) at position \d+ \(0-based\), a key python3's line editor/);
    await new Promise((done) => setTimeout(done, 1_000));
    expect(existsSync(canary(3))).toBe(false);
    ok(await write('print(7 * 6)\n'));
  });
});
