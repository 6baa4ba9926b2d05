/**
 * `readExportFile`: an export holds the facts, then the output stream's lines numbered by their own stream.
 * Each stream reads back alone, ranges apply per stream, and an output line numbered "earlier" than the
 * last fact neither ends nor joins a read of the facts (issue 14, `replay --export` with terminal output).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoredFact } from '../../../schemas/index.ts';
import { encodeLogLine } from '../../../infra/transport/codec.ts';
import { readExportFile } from '../../../infra/transport/export-file.ts';
import { tempDir } from '../../support/temp-dir.ts';

const dir = tempDir('skein-export-file-');
afterAll(() => dir.dispose());

const fact = (seq: number): StoredFact =>
  ({
    id: `c-${seq}:0`,
    type: 'agent.completed',
    at: '2026-01-01T00:00:00.000Z',
    agentId: 'main',
    causationId: `c-${seq}`,
    data: { agentId: 'a1', result: { n: seq } },
    seq,
    subject: 'skein.evt.main.agent.a1',
  }) as unknown as StoredFact;

const chunk = (seq: number, terminalId: string, text: string): StoredFact =>
  ({
    id: `o-${seq}`,
    type: 'terminal.output.received',
    at: '2026-01-01T00:00:01.000Z',
    agentId: 'main',
    data: {
      terminalId,
      offset: seq,
      bytes: text.length,
      data: text,
      sequences: [],
      sequenceCount: 0,
      isInteractive: false,
    },
    seq,
    subject: `skein.out.main.${terminalId}`,
  }) as unknown as StoredFact;

async function all(it: AsyncIterable<StoredFact>): Promise<Array<[number, string]>> {
  const out: Array<[number, string]> = [];
  for await (const f of it) out.push([f.seq, f.subject]);
  return out;
}

describe('readExportFile', () => {
  const file = join(dir.path, 'export.jsonl');
  writeFileSync(
    file,
    [fact(1), fact(2), fact(3), fact(4), chunk(1, 't-a', 'hi\n'), chunk(2, 't-b', 'x'), chunk(3, 't-a', 'there\n')]
      .map((f) => `${encodeLogLine(f)}\n`)
      .join(''),
  );
  const evt = 'skein.evt.main.agent.a1';

  it('reads the facts without the output lines, with and without a range', async () => {
    expect(await all(readExportFile(file))).toEqual([1, 2, 3, 4].map((s) => [s, evt]));
    expect(await all(readExportFile(file, { untilSeq: 4 }))).toEqual([1, 2, 3, 4].map((s) => [s, evt]));
    expect(await all(readExportFile(file, { fromSeq: 2, untilSeq: 3 }))).toEqual([
      [2, evt],
      [3, evt],
    ]);
  });

  it('reads the output stream alone, by subject and by its own sequence numbers', async () => {
    expect(await all(readExportFile(file, { stream: 'output' }))).toEqual([
      [1, 'skein.out.main.t-a'],
      [2, 'skein.out.main.t-b'],
      [3, 'skein.out.main.t-a'],
    ]);
    expect(await all(readExportFile(file, { stream: 'output', subject: 'skein.out.*.t-a' }))).toEqual([
      [1, 'skein.out.main.t-a'],
      [3, 'skein.out.main.t-a'],
    ]);
    // untilSeq 2 of the output stream is not cut short by the facts numbered 3 and 4 before it.
    expect(await all(readExportFile(file, { stream: 'output', untilSeq: 2 }))).toEqual([
      [1, 'skein.out.main.t-a'],
      [2, 'skein.out.main.t-b'],
    ]);
  });

  it('reads no output from a bare event log', async () => {
    const bare = join(dir.path, 'events.jsonl');
    writeFileSync(bare, `${encodeLogLine(fact(1))}\n`);
    expect(await all(readExportFile(bare, { stream: 'output' }))).toEqual([]);
    expect(await all(readExportFile(bare))).toEqual([[1, evt]]);
  });
});
