/**
 * `skein call <type> -` (README walk-through): data past the OS's limit on one argument (~128 KiB) could not
 * be sent at all, though file.write takes up to 1 MiB; `-` reads the data from stdin.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startEmbeddedCli, type EmbeddedRun } from '../../support/cli.ts';

describe('skein call <type> - (data on stdin)', { timeout: 60_000 }, () => {
  let run: EmbeddedRun;

  beforeAll(async () => {
    run = await startEmbeddedCli({ policy: { default: 'allow' } });
  });
  afterAll(async () => run?.dispose());

  it('writes a 600 KiB file whose data would not fit in one argument', async () => {
    const content = `${'x'.repeat(99)}\n`.repeat(6 * 1024);
    const out = await runCli(['call', 'file.write', '-', '--data', run.data], {
      input: JSON.stringify({ path: 'big.txt', content }),
    });
    expect(out.code, out.stderr).toBe(0);
    expect(JSON.parse(out.stdout)).toMatchObject({ ok: true });
    expect(readFileSync(join(run.workspace, 'big.txt'), 'utf8')).toBe(content);
  });

  it('names stdin when what it holds is not JSON', async () => {
    const out = await runCli(['call', 'runtime.ping', '-', '--data', run.data], { input: '{bad' });
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/^skein: Invalid message on 'the data of runtime\.ping on stdin': payload is not JSON/);
  });
});
