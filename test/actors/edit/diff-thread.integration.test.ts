/**
 * The diff thread (actors/edit/diff-thread.ts) gives byte for byte the report `cappedDiff` gives on the main
 * thread, for a big rewrite (worker), a big one-line change (worker, fine hunk), non-ASCII text sent as
 * UTF-8 bytes (worker) and a small edit (inline); from a file's bytes, read by the worker from a stored copy
 * when its hash matches and sent when it does not; and for review the diff and hunks `reviewDiff` gives.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sha256, textFile } from '../../../actors/edit/file-io.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { DiffThread, OFF_THREAD_CHARS } from '../../../actors/edit/diff-thread.ts';
import { cappedDiff, MAX_DIFF_CHARS } from '../../../actors/edit/edit-report.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { reviewDiff } from '../../../machines/review/action-log-hunks.ts';

const DYING = new URL('../../support/dying-diff-worker.mjs', import.meta.url);
const lines = (n: number, f: (i: number) => string) => `${Array.from({ length: n }, (_, i) => f(i)).join('\n')}\n`;

describe('DiffThread', () => {
  const thread = new DiffThread(memoryLogger().logger);
  afterAll(() => thread.close());

  it('keeps a small diff on this thread', async () => {
    const report = await thread.diff('a.ts', 'const a = 1;\n', 'const a = 2;\n');
    expect(report).toEqual(cappedDiff('a.ts', 'const a = 1;\n', 'const a = 2;\n'));
    expect(report.linesAdded).toBe(1);
    expect(thread.running).toBe(false);
  });

  it('diffs a rewritten big file on the worker, with the same capped report', async () => {
    const before = lines(20_000, (i) => `line ${i} ${'x'.repeat(30)}`);
    const after = lines(20_000, (i) => `row ${i * 3} ${'y'.repeat(30)}`);
    expect(before.length + after.length).toBeGreaterThan(OFF_THREAD_CHARS);
    const report = await thread.diff('big.txt', before, after);
    expect(thread.running).toBe(true);
    expect(report).toEqual(cappedDiff('big.txt', before, after));
    expect(report.linesRemoved).toBe(20_000);
    expect(report.linesAdded).toBe(20_000);
    expect(report.diff.length).toBeLessThan(MAX_DIFF_CHARS + 200);
    expect(report.diff).toContain('diff truncated');
  });

  it('finds one changed line in a big file on the worker', async () => {
    const before = lines(40_000, (i) => `export const v${i} = ${i};`);
    const after = before.replace('export const v20000 = 20000;', 'export const v20000 = 0;');
    const reports = await Promise.all([thread.diff('m.ts', before, after), thread.diff('m.ts', after, before)]);
    expect(reports[0]).toEqual(cappedDiff('m.ts', before, after));
    expect(reports[1]).toEqual(cappedDiff('m.ts', after, before));
    expect(reports[0]!.diff).toContain('-export const v20000 = 20000;\n+export const v20000 = 0;');
  });

  it('diffs big non-ASCII texts on the worker as cappedDiff does (they travel as UTF-8 bytes)', async () => {
    const before = lines(30_000, (i) => `ligne ${i} « été » ✓ 𝄞 ${i % 7}`);
    const after = before.replace('ligne 15000 « été » ✓ 𝄞 6', 'ligne 15000 « hiver » ✗ 𝄢 6');
    const report = await thread.diff('ü.txt', before, after);
    expect(thread.running).toBe(true);
    expect(report).toEqual(cappedDiff('ü.txt', before, after));
    expect(report.diff).toContain('+ligne 15000 « hiver » ✗ 𝄢 6');
  });

  it('reads a side from its stored copy when the hash matches, and uses the bytes sent when it does not', async () => {
    const dir = tempDir('skein-diff-stored-');
    try {
      const before = lines(30_000, (i) => `const é${i} = '${i}';\r`).replace(/\r\n/g, '\r\n');
      const crlf = Buffer.from(`\ufeff${before}`, 'utf8'); // a BOM and CRLF file, decoded as the kernel does
      const after = before.replace(/\r\n/g, '\n').replace("const é7 = '7';", "const é7 = 'sept';");
      const want = cappedDiff('a.ts', before.replace(/\r\n/g, '\n'), after);
      const file = join(dir.path, 'base');
      writeFileSync(file, crlf);
      const side = (stored: { file: string; hash: string }) => ({ bytes: crlf, text: () => '', stored });
      // The copy on disk has the hash: read there (text() would give '' and a different diff).
      expect(await thread.diff('a.ts', side({ file, hash: sha256(crlf) }), after)).toEqual(want);
      // A copy that is not those bytes (changed since) or is gone: the bytes sent are used.
      writeFileSync(file, 'something else\n');
      expect(await thread.diff('a.ts', side({ file, hash: sha256(crlf) }), after)).toEqual(want);
      expect(await thread.diff('a.ts', side({ file: join(dir.path, 'gone'), hash: sha256(crlf) }), after)).toEqual(
        want,
      );
      expect(thread.running).toBe(true);
    } finally {
      dir.dispose();
    }
  });

  it("gives review's diff and hunks from bytes, as reviewDiff gives them for the texts", async () => {
    const base = lines(30_000, (i) => `const é${i} = '${i}';`);
    const current = base.replace("const é100 = '100';", "const é100 = 'cent';");
    let loads = 0;
    const load = async (): Promise<[Uint8Array | null, Uint8Array | null]> => {
      loads++;
      return [Buffer.from(base), Buffer.from(current)];
    };
    expect(await thread.review('/w/a.ts', load)).toEqual(reviewDiff('/w/a.ts', base, current));
    expect(await thread.review('/w/new.ts', async () => [null, Buffer.from(current)])).toEqual(
      reviewDiff('/w/new.ts', null, current),
    );
    expect(loads).toBe(1);
  });

  it("inspects a big file's bytes moved there and back (a read's own buffer) or copied (a view)", async () => {
    const text = `\uFEFF${lines(80_000, (i) => `ünï ${i}\r`)}`;
    const encoded = Buffer.from(text, 'utf8');
    // As confined-fs.ts reads a file: a buffer one byte longer than the file, viewed to its length.
    const read = Buffer.allocUnsafeSlow(encoded.length + 1).subarray(0, encoded.length);
    encoded.copy(read);
    const expected = textFile({ path: 'f', bytes: Buffer.from(encoded), mode: 0o644, mtimeMs: 0, stamp: '' }, 'f');
    const facts = {
      hash: expected.hash,
      bom: expected.bom,
      lineEnding: expected.lineEnding,
      textLength: expected.textLength,
    };
    const moved = await thread.inspect(read, 'f');
    expect({ facts: moved?.facts, same: moved?.bytes.equals(encoded), left: read.byteLength }).toEqual({
      facts,
      same: true,
      left: 0,
    });
    // A view on a buffer that holds more than the file is copied, never moved.
    const shared = Buffer.concat([encoded, Buffer.from('more')]);
    const view = shared.subarray(0, encoded.length);
    const copied = await thread.inspect(view, 'f');
    expect({ facts: copied?.facts, same: copied?.bytes.equals(encoded), left: view.byteLength }).toEqual({
      facts,
      same: true,
      left: encoded.length,
    });
  });

  it('fails an inspection whose thread died holding the moved bytes as retryable, then decodes here', async () => {
    const dying = new DiffThread(memoryLogger().logger, OFF_THREAD_CHARS, DYING);
    try {
      const encoded = Buffer.from(
        lines(60_000, (i) => `row ${i}`),
        'utf8',
      );
      const read = Buffer.allocUnsafeSlow(encoded.length + 1).subarray(0, encoded.length);
      encoded.copy(read);
      const lost = await dying.inspect(read, 'die-here').catch((err: unknown) => err);
      expect(lost).toMatchObject({ code: 'unavailable', retryable: true });
      expect((lost as Error).message).toBe(
        'the file thread stopped while it read "die-here", whose bytes were lost with it ' +
          '(worker thread exited with code 3); nothing was written: try again',
      );
      // The thread is given up (the diff thread's rule): the caller decodes here from then on, its bytes intact.
      expect(await dying.inspect(Buffer.from(encoded), 'f')).toBeUndefined();
    } finally {
      await dying.close();
    }
  });
});
