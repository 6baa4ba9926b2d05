/**
 * `skein replay --export` (README walk-through): an export onto its own source log is refused instead of
 * truncating it first, the export lands whole or not at all, and an output directory that does not exist is a
 * clear error, not an unhandled 'error' event.
 */
import { copyFileSync, linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.ts';
import { tempDir } from '../../support/temp-dir.ts';

const GOLDEN = fileURLToPath(new URL('../../fixtures/golden/demo-events.jsonl', import.meta.url));

describe('skein replay --export (real CLI)', () => {
  let dir: ReturnType<typeof tempDir>;
  afterEach(() => dir?.dispose());

  it('refuses to export onto the --from-file source, and leaves it whole', async () => {
    dir = tempDir();
    const log = join(dir.path, 'x.jsonl');
    copyFileSync(GOLDEN, log);
    const out = await runCli(['replay', '--from-file', log, '--export', log]);
    expect(out.code).toBe(2);
    expect(out.stderr).toContain(`--export '${log}' is the log being replayed ('${log}')`);
    expect(out.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(log, 'utf8')).toBe(readFileSync(GOLDEN, 'utf8'));
  });

  it('refuses a symlink or a hard link to the source too', async () => {
    dir = tempDir();
    const log = join(dir.path, 'x.jsonl');
    copyFileSync(GOLDEN, log);
    symlinkSync(log, join(dir.path, 'sym.jsonl'));
    linkSync(log, join(dir.path, 'hard.jsonl'));
    for (const name of ['sym.jsonl', 'hard.jsonl']) {
      const out = await runCli(['replay', '--from-file', log, '--export', join(dir.path, name)]);
      expect(out.code, name).toBe(2);
      expect(out.stderr).toContain('is the log being replayed');
    }
    expect(readFileSync(log, 'utf8')).toBe(readFileSync(GOLDEN, 'utf8'));
  });

  it("refuses to export onto any file of the data dir's log", async () => {
    dir = tempDir();
    const data = join(dir.path, 'data');
    mkdirSync(data);
    copyFileSync(GOLDEN, join(data, 'events.jsonl'));
    for (const name of ['events.jsonl', 'output.jsonl']) {
      const out = await runCli(['replay', '--export', join(data, name), '--data', data]);
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toContain(`--export '${join(data, name)}' is a file of the event log in '${data}'`);
    }
    expect(readFileSync(join(data, 'events.jsonl'), 'utf8')).toBe(readFileSync(GOLDEN, 'utf8'));
  });

  it('writes the export elsewhere whole, with no temporary file left beside it', async () => {
    dir = tempDir();
    const out = await runCli(['replay', '--from-file', GOLDEN, '--export', join(dir.path, 'e.jsonl')]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/exported 47 facts/);
    expect(readdirSync(dir.path)).toEqual(['e.jsonl']);
    const again = await runCli(['replay', '--digest', '--from-file', join(dir.path, 'e.jsonl')]);
    const golden = await runCli(['replay', '--digest', '--from-file', GOLDEN]);
    expect(again.stdout).toBe(golden.stdout);
  });

  it('names the path when the output directory does not exist, without a stack trace', async () => {
    dir = tempDir();
    const target = join(dir.path, 'nodir', 'e.jsonl');
    const out = await runCli(['replay', '--from-file', GOLDEN, '--export', target]);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      `skein: cannot write the export to '${target}': the directory '${join(dir.path, 'nodir')}' ` +
        'does not exist; create it first or choose another path\n',
    );
  });
});
