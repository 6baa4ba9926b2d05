/**
 * The hint after "not JSON" (README walk-through): `skein call x '{bad'` suggested `{"data":{}}`, the wire
 * body, but `call` takes the data itself; a replayed log line suggested it too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeLogLine } from '../../../infra/transport/codec.ts';
import { runCli } from '../../support/cli.ts';

describe('hints for text that is not JSON', () => {
  it('skein call: the data itself, with an example, and never the wire envelope', async () => {
    const data = mkdtempSync(join(tmpdir(), 'skein-hint-'));
    try {
      const out = await runCli(['call', 'runtime.ping', '{bad', '--data', data]);
      expect(out.code).toBe(2);
      expect(out.stderr).toMatch(/^skein: Invalid message on 'the data of runtime\.ping': payload is not JSON \(/);
      expect(out.stderr).toContain(`give the command's data itself as JSON, e.g. skein call file.read`);
      expect(out.stderr).not.toContain('{"data":{}}');
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });

  it('a log line: the {seq, subject, fact} line of an export', () => {
    expect(() => decodeLogLine('x.jsonl', 'root:x:0:0')).toThrow(
      /payload is not JSON \(.*\); each line of a skein event log or export is one \{"seq","subject","fact"\} object$/,
    );
  });
});
