/**
 * An agent cannot grow its terminal's screen without bound. xterm appends every zero-width code point to the cell
 * before it: a letter followed by a flood of combining marks was one cell holding all of them, ~56 bytes of the
 * runtime's heap per mark that stayed for as long as the cell was on the screen or in its scrollback (21 MB of
 * output, ~590 MB of heap), so an agent could print the runtime out of memory. Live: a real shell prints the
 * marks; the screen the runtime serves must hold at most 1 + MAX_JOINED code points per cell, and still parse.
 */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { MAX_JOINED } from '../../machines/terminal/combining-cap.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { attack, reportAttacks } from './support.ts';

const COLS = 80;
let rt: TestRuntime;
let agentId: string;

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded' });
  ({ agentId } = ok(await rt.call('agent.spawn', { label: 'marks' })) as { agentId: string });
}, 60_000);
afterAll(async () => rt?.dispose());
reportAttacks('screen-marks');

/** Runs `command` in a new terminal of the agent; returns the screen's lines after it. */
async function screenAfter(command: string): Promise<string[]> {
  const { terminalId } = ok(await rt.call('terminal.open', { cols: COLS, rows: 24 }, { agentId }));
  ok(await rt.call('terminal.exec', { terminalId, command, timeoutMs: 30_000 }, { agentId, timeoutMs: 35_000 }));
  const read = ok(await rt.call('terminal.read', { terminalId, screen: true }, { agentId }));
  return (read['screen'] as { lines: string[] }).lines;
}

describe('zero-width code points on a screen', () => {
  attack('memory', "a letter and 300,000 combining marks: no cell holds more than the cap's worth", async () => {
    const lines = await screenAfter(`perl -CO -e 'print "a", "\\x{301}" x 300000, "\\n"'; echo MARKS-DONE`);
    // Each line is 80 cells of at most 1 + MAX_JOINED code points (BMP marks: one UTF-16 unit each).
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(COLS * (1 + MAX_JOINED));
    expect(lines.join('\n')).toContain('MARKS-DONE');
  });

  attack(
    'memory',
    'marks split across many reads after one letter, and letters between control sequences',
    async () => {
      // One letter, then 400 writes of 50 marks 2 ms apart (separate PTY reads and output chunks: the join state
      // goes on from one to the next); then letters with 40 marks each, an SGR between them.
      const split = `print "a"; for (1..400) { print "\\x{301}" x 50; select(undef, undef, undef, 0.002) }`;
      const sgr = `for (1..500) { print "b", "\\x{302}" x 40, "\\e[1m" }`;
      const lines = await screenAfter(`perl -CO -e '$|=1; ${split}; ${sgr}'; echo; echo SPLIT-DONE`);
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(COLS * (1 + MAX_JOINED));
      expect(lines.join('\n')).toContain('SPLIT-DONE');
    },
  );
});
