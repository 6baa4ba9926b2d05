/**
 * A big `file.write` (a payload parsed off the event loop) is written from the UTF-8 bytes the JSON thread made
 * of its content, not encoded again (issue 13). The file on disk must be exactly what the text path writes:
 * the content's UTF-8 for a new file, BOM and CRLF characters included; an existing file's BOM and line endings
 * kept; the hash the action log records that of the bytes on disk; a lone surrogate refused, naming the field.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../../infra/transport/client.ts';
import { OFF_THREAD_BYTES } from '../../../infra/transport/json-thread.ts';
import type { FileReview } from '../../../schemas/review.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

let rt: TestRuntime;
beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded', flags: { limits: { maxPayloadBytes: 8 * 1024 * 1024 } } });
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
});

/** `line` repeated past the JSON thread's threshold, so the payload is parsed (and encoded) there. */
const big = (line: string) => line.repeat(Math.ceil((OFF_THREAD_BYTES * 1.2) / Buffer.byteLength(line)));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** A call with time for a loaded machine (megabytes per command). */
const slow = (type: string, data: unknown) => call(rt.bus, 'main', type, data, { timeoutMs: 60_000 });

async function write(path: string, content: string): Promise<Buffer> {
  const reply = await slow('file.write', { path, content });
  expect(reply.ok, JSON.stringify(reply).slice(0, 400)).toBe(true);
  const bytes = readFileSync(join(rt.workspace, path));
  // The hash recorded for review is that of the bytes on disk.
  const list = await slow('review.list', { paths: [join(rt.workspace, path)] });
  const file = (list as unknown as { files: FileReview[] }).files[0];
  expect(file?.currentHash).toBe(sha(bytes));
  return bytes;
}

describe('a big file.write from the JSON thread bytes (real runtime, embedded)', () => {
  it('writes a new file as the content UTF-8, ASCII or not, CRLF, NUL and a leading BOM character kept', async () => {
    const contents = {
      'ascii.txt': big('plain line 1234567890\n'),
      'crlf.txt': big('windows line\r\n'),
      'unicode.txt': big('ünïcödé ✓ 😀 line\n'),
      'bom.txt': `\uFEFF${big('after a BOM character\n')}`,
      'nul.txt': big('a\u0000b\n'),
    };
    for (const [path, content] of Object.entries(contents)) {
      expect({ path, equal: (await write(path, content)).equals(Buffer.from(content, 'utf8')) }).toEqual({
        path,
        equal: true,
      });
    }
  }, 300_000);

  it("keeps an existing file's BOM and CRLF line endings, and an LF file's LF", async () => {
    writeFileSync(join(rt.workspace, 'was-crlf.txt'), 'one\r\ntwo\r\n');
    writeFileSync(join(rt.workspace, 'was-bom.txt'), Buffer.concat([BOM, Buffer.from('one\ntwo\n')]));
    writeFileSync(join(rt.workspace, 'was-lf.txt'), 'one\ntwo\n');
    const lf = big('now ünï line\n');
    const mixed = big('crlf here\r\nlf here\n');
    expect((await write('was-crlf.txt', lf)).equals(Buffer.from(lf.replace(/\n/g, '\r\n'), 'utf8'))).toBe(true);
    expect((await write('was-bom.txt', lf)).equals(Buffer.concat([BOM, Buffer.from(lf, 'utf8')]))).toBe(true);
    expect((await write('was-lf.txt', mixed)).equals(Buffer.from(mixed.replace(/\r\n/g, '\n'), 'utf8'))).toBe(true);
  }, 300_000);

  it('refuses content with a lone surrogate, naming the field, and writes nothing', async () => {
    const reply = await slow('file.write', { path: 'lone.txt', content: `${big('text\n')}\ud800` });
    expect(reply.ok).toBe(false);
    expect(JSON.stringify(reply)).toMatch(/The content contains a lone UTF-16 surrogate/);
    expect(() => readFileSync(join(rt.workspace, 'lone.txt'))).toThrow(/ENOENT/);
  }, 120_000);
});
