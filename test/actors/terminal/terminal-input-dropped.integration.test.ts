/**
 * Input an agent typed that never reached the terminal is recorded (`terminal.input.dropped`), so that what the
 * log says was written, less what it says was dropped, is what went in: at the next command line, at an
 * interrupt, and when the terminal closes or its shell goes away with input still queued.
 */
import { harnessPerTest } from '../../support/terminal-harness.ts';

const harness = harnessPerTest({ interruptGraceMs: 300, closeGraceMs: 300, inputQuietMs: 200, pollMs: 50 });

const A = 'a1';
/** 192 KB the program never reads: the kernel's buffer holds ~68 KB at most, the rest stays queued in the host. */
const CHUNK = `${'w'.repeat(999)}\n`.repeat(32);

/** A program that reads nothing runs in the foreground; the agent types 192 KB at it. Returns what was accepted. */
async function typeAtDeafProgram(terminalId: string, command: string): Promise<number> {
  const started = await harness().manager.exec(A, { terminalId, command, yieldMs: 0, timeoutMs: 60_000 });
  expect(started).toMatchObject({ status: 'running' });
  let typed = 0;
  for (let i = 0; i < 6; i++) typed += (await harness().manager.write(A, { terminalId, data: CHUNK })).bytes;
  return typed;
}

const facts = (terminalId: string, type: string) =>
  harness()
    .factsOf(terminalId)
    .filter((f) => f.type === type);
const writtenBytes = (terminalId: string) =>
  facts(terminalId, 'terminal.input.written').reduce((n, f) => n + (f.data as { bytes: number }).bytes, 0);

describe('TerminalManager: input dropped unwritten', () => {
  it('records input dropped unwritten (terminal.input.dropped): written less dropped is what went in', async () => {
    const { terminalId } = await harness().open();
    // A shell loop that ignores SIGINT and reads nothing: at its timeout the shell itself is in the foreground,
    // so the host drops the input it still holds and types Ctrl-C.
    const command = "trap '' INT; exec 9< <(sleep 600); while :; do read -t 0.1 -u 9 x; done";
    expect(await harness().manager.exec(A, { terminalId, command, yieldMs: 0, timeoutMs: 1_500 })).toMatchObject({
      status: 'running',
    });
    const chunk = `${'w'.repeat(999)}\n`.repeat(32);
    let typed = 0;
    for (let i = 0; i < 6; i++) typed += (await harness().manager.write(A, { terminalId, data: chunk })).bytes;
    const dropped = () =>
      harness()
        .factsOf(terminalId)
        .filter((f) => f.type === 'terminal.input.dropped');
    await vi.waitFor(() => expect(dropped()).toHaveLength(1), { timeout: 10_000, interval: 50 });
    const written = harness()
      .factsOf(terminalId)
      .filter((f) => f.type === 'terminal.input.written');
    expect(written.reduce((n, f) => n + f.data.bytes, 0)).toBe(typed);
    expect(dropped()[0]!.data).toMatchObject({ terminalId, reason: 'interrupt' });
    // The log no longer says 192 KB reached a terminal whose kernel buffer holds ~68 KB at most.
    expect(typed - dropped()[0]!.data.bytes).toBeLessThanOrEqual(80 * 1024);
    expect(dropped()[0]!.data.bytes).toBeLessThanOrEqual(typed);
  });

  it('records what was still queued when the terminal closed, before terminal.closed', async () => {
    const { terminalId } = await harness().open();
    const typed = await typeAtDeafProgram(terminalId, 'sleep 600');
    await harness().manager.close(A, { terminalId, graceMs: 0 });
    const dropped = facts(terminalId, 'terminal.input.dropped');
    expect(dropped.map((f) => f.data)).toEqual([{ terminalId, bytes: expect.any(Number), reason: 'closed' }]);
    const bytes = (dropped[0]!.data as { bytes: number }).bytes;
    expect(writtenBytes(terminalId)).toBe(typed);
    // Not all of the rest: once the close ends `sleep`, the shell reads what the kernel holds before it is killed.
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(typed);
    const types = harness()
      .factsOf(terminalId)
      .map((f) => f.type);
    expect(types.indexOf('terminal.input.dropped')).toBeLessThan(types.indexOf('terminal.closed'));
  });

  it('records it too when the shell is killed from outside with input queued', async () => {
    const { terminalId, pid } = await harness().open();
    const typed = await typeAtDeafProgram(terminalId, 'sleep 600');
    process.kill(pid, 'SIGKILL');
    await vi.waitFor(() => expect(facts(terminalId, 'terminal.closed')).toHaveLength(1), { timeout: 10_000 });
    const dropped = facts(terminalId, 'terminal.input.dropped');
    expect(dropped.map((f) => (f.data as { reason: string }).reason)).toEqual(['closed']);
    expect(typed - (dropped[0]!.data as { bytes: number }).bytes).toBeLessThanOrEqual(80 * 1024);
  });
});
