/**
 * `skein replay --screen <terminalId> [--at <seq>]` renders the screen a
 * terminal showed, from the log alone: equal to the live screen at the end,
 * and to what it showed before a later command at an earlier sequence.
 */
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startEmbeddedCli, type EmbeddedRun } from '../support/cli.ts';

// Each test starts up to nine CLI processes (about 0.3 s each on a quiet machine, several seconds each on a
// loaded CI machine): the 30 s default is too tight for the process count, not for skein.
describe('skein replay --screen', { timeout: 120_000 }, () => {
  let run: EmbeddedRun;
  let data: string;
  const call = async (type: string, body: unknown) => {
    const r = await runCli(['call', type, JSON.stringify(body), '--data', data]);
    expect(r.code, r.stderr + r.stdout).toBe(0);
    return JSON.parse(r.stdout) as Record<string, any>;
  };

  beforeAll(async () => {
    run = await startEmbeddedCli({ policy: { default: 'allow' } });
    data = run.data;
  });
  afterAll(async () => run?.dispose());

  it('matches the live screen at the end and the earlier screen at an earlier sequence', async () => {
    const { terminalId } = await call('terminal.open', { cols: 60, rows: 12 });
    await call('terminal.exec', { terminalId, command: "printf '\\033[1;31mred\\033[0m line one\\n'; echo line two" });
    const early = await call('terminal.read', { terminalId, screen: true });
    const earlyReplay = await runCli(['replay', '--screen', terminalId, '--json', '--data', data]);
    const earlyScreen = JSON.parse(earlyReplay.stdout) as { atSeq: number; lines: string[] };
    expect(earlyScreen.lines).toEqual(early['screen'].lines);

    await call('terminal.resize', { terminalId, cols: 40, rows: 10 });
    await call('terminal.exec', { terminalId, command: 'clear; seq 1 30 | tail -n 4; printf "\\033[5;10Hplaced"' });
    const live = await call('terminal.read', { terminalId, screen: true });
    const r = await runCli(['replay', '--screen', terminalId, '--json', '--data', data]);
    expect(r.code, r.stderr).toBe(0);
    const replayed = JSON.parse(r.stdout) as {
      lines: string[];
      cursor: unknown;
      cols: number;
      rows: number;
      buffer: string;
    };
    expect({ lines: replayed.lines, cols: replayed.cols, rows: replayed.rows, buffer: replayed.buffer }).toEqual({
      lines: live['screen'].lines,
      cols: 40,
      rows: 10,
      buffer: 'normal',
    });
    expect(replayed.lines.join('\n')).toContain('placed');

    const back = await runCli([
      'replay',
      '--screen',
      terminalId,
      '--at',
      String(earlyScreen.atSeq),
      '--json',
      '--data',
      data,
    ]);
    expect((JSON.parse(back.stdout) as { lines: string[] }).lines).toEqual(early['screen'].lines);

    const text = await runCli(['replay', '--screen', terminalId, '--data', data]);
    expect(text.stdout).toMatch(new RegExp(`^${terminalId} at output seq \\d+ .* 40x10, normal buffer`));
  });

  // Issue 14: `replay --export` carries terminal output, so `--screen` works on the export alone.
  it("renders the screen from an export, whose digest is still the log's", async () => {
    const { terminalId } = await call('terminal.open', { cols: 50, rows: 8 });
    await call('terminal.exec', { terminalId, command: 'echo hi' });
    const dir = mkdtempSync(join(tmpdir(), 'skein-export-'));
    try {
      const file = join(dir, 'export.jsonl');
      const exp = await runCli(['replay', '--export', file, '--data', data]);
      expect(exp.code, exp.stderr).toBe(0);
      expect(exp.stdout).toMatch(/^exported \d+ facts \(last seq \d+\) and [1-9]\d* output chunks to /);
      const r = await runCli(['replay', '--screen', terminalId, '--json', '--from-file', file]);
      expect(r.code, r.stderr).toBe(0);
      const screen = JSON.parse(r.stdout) as { lines: string[]; cols: number };
      expect(screen.cols).toBe(50);
      expect(screen.lines[0]).toBe('$ \\. "$__sk"');
      expect(screen.lines.slice(1, 3)).toEqual(['hi', '$ ']);
      const live = await runCli(['replay', '--digest', '--data', data]);
      const fromFile = await runCli(['replay', '--digest', '--from-file', file]);
      expect(fromFile.stdout).toMatch(/^[0-9a-f]{64}\n$/);
      expect(fromFile.stdout).toBe(live.stdout);
      // --until cuts the output at that fact's time: the first fact precedes every terminal's output.
      const early = await runCli(['replay', '--export', join(dir, 'early.jsonl'), '--until', '1', '--data', data]);
      expect(early.stdout).toMatch(/^exported 1 facts \(last seq 1\) and 0 output chunks to /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses --screen on an event log without terminal output, saying how to get it', async () => {
    const { terminalId } = await call('terminal.open', {});
    const dir = mkdtempSync(join(tmpdir(), 'skein-export-'));
    try {
      const bare = join(dir, 'events-only.jsonl');
      copyFileSync(join(data, 'events.jsonl'), bare);
      const r = await runCli(['replay', '--screen', terminalId, '--from-file', bare]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(
        `'${bare}' holds no output of terminal '${terminalId}': it is an event log without terminal output`,
      );
      expect(r.stderr).toContain('export it again with `skein replay --export <file>`');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('says which terminal is unknown', async () => {
    const r = await runCli(['replay', '--screen', 't-nothere', '--data', data]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/terminal 't-nothere' is not in the log/);
  });
});
