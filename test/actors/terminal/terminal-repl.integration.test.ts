/**
 * Real PTYs: a REPL at its prompt (python3, node) reports input_required, while
 * quiet commands that poll or sleep the same way (sleep, a pending node timer,
 * an HTTP server, a busy program in raw mode) keep reporting running.
 * Issue 14: "input_required also for REPLs waiting at their prompt".
 */
import { terminalHarness } from '../../support/terminal-harness.ts';

let h: ReturnType<typeof terminalHarness>;
beforeEach(() => {
  h = terminalHarness({ interruptGraceMs: 300, closeGraceMs: 300, inputQuietMs: 200, pollMs: 50 });
});
afterEach(async () => {
  await h.dispose();
});

const A = 'a1';
const awaited = (terminalId: string) =>
  h
    .factsOf(terminalId)
    .filter((f) => f.type === 'terminal.input.awaited')
    .map((f) => f.data.prompt);

describe('TerminalManager: REPLs at their prompt', () => {
  it('reports input_required for the python3 REPL, again after each answer, and exits on exit()', async () => {
    const { terminalId } = await h.open();
    const r = await h.manager.exec(A, { terminalId, command: 'python3 -q', yieldMs: 10_000 });
    expect(r).toMatchObject({ status: 'input_required', prompt: '>>>', exitCode: null });
    await h.manager.write(A, { terminalId, data: 'print(6 * 7)\n' });
    const again = await h.manager.wait(A, { terminalId, timeoutMs: 10_000 });
    expect(again).toMatchObject({ status: 'input_required', prompt: '>>>' });
    expect(again.output).toContain('42');
    await h.manager.write(A, { terminalId, data: 'exit()\n' });
    expect(await h.manager.wait(A, { terminalId, timeoutMs: 10_000 })).toMatchObject({
      status: 'exited',
      exitCode: 0,
    });
    expect(awaited(terminalId)).toEqual(['>>>', '>>>']);
  });

  it('reports input_required for the node REPL and exits on .exit', async () => {
    const { terminalId } = await h.open();
    const r = await h.manager.exec(A, { terminalId, command: 'node', yieldMs: 10_000 });
    expect(r).toMatchObject({ status: 'input_required', prompt: '>', exitCode: null });
    await h.manager.write(A, { terminalId, data: '.exit\n' });
    expect(await h.manager.wait(A, { terminalId, timeoutMs: 10_000 })).toMatchObject({
      status: 'exited',
      exitCode: 0,
    });
    expect(awaited(terminalId)).toEqual(['>']);
  });
});

describe('TerminalManager: a REPL inside the sandbox', () => {
  it('reports input_required for python3 under bubblewrap too', async () => {
    const { terminalId } = await h.open(A, { sandbox: true });
    const r = await h.manager.exec(A, { terminalId, command: 'python3 -q', yieldMs: 10_000 });
    expect(r).toMatchObject({ status: 'input_required', prompt: '>>>' });
    await h.manager.write(A, { terminalId, data: 'exit()\n' });
    expect(await h.manager.wait(A, { terminalId, timeoutMs: 10_000 })).toMatchObject({ status: 'exited' });
  });
});

describe('TerminalManager: quiet commands that are not waiting for input', () => {
  // Each stays quiet far longer than inputQuietMs (200 ms) and several tty-mode checks (500 ms apart).
  const quiet: Array<[string, string, number | null]> = [
    ['sleep', 'sleep 2.5', 0],
    ['a pending node timer', 'node -e "setTimeout(() => {}, 2500)"', 0],
    ['an HTTP server', 'python3 -m http.server 0 --bind 127.0.0.1', null],
  ];
  it.each(quiet)('keeps %s running, never input_required', async (_name, command, exitCode) => {
    const { terminalId } = await h.open();
    const r = await h.manager.exec(A, { terminalId, command, yieldMs: 2_000 });
    expect(r.status).toBe('running');
    if (exitCode === null) {
      await h.manager.signal(A, { terminalId, signal: 'INT' });
      expect((await h.manager.wait(A, { terminalId, timeoutMs: 10_000 })).status).toBe('exited');
    } else {
      expect(await h.manager.wait(A, { terminalId, timeoutMs: 10_000 })).toMatchObject({ status: 'exited', exitCode });
    }
    expect(awaited(terminalId)).toEqual([]);
  });

  it('keeps a busy program in raw (non-canonical) mode running while its output flows', async () => {
    const { terminalId } = await h.open();
    // It polls the tty in cbreak mode like a REPL, but prints before every 50 ms poll: never quiet.
    const script =
      'import sys, tty, select\nprint("tick", flush=True)\ntty.setcbreak(0)\nfor i in range(50):\n' +
      '    print("tick", i, flush=True)\n    select.select([0], [], [], 0.05)\nprint("ALL-TICKS-DONE")';
    const r = await h.manager.exec(A, { terminalId, command: `python3 -c '${script}'`, yieldMs: 1_500 });
    expect(r.status).toBe('running');
    const done = await h.manager.wait(A, { terminalId, timeoutMs: 10_000 });
    expect(done).toMatchObject({ status: 'exited', exitCode: 0 });
    expect(done.output).toContain('ALL-TICKS-DONE');
    expect(awaited(terminalId)).toEqual([]);
  });
});
