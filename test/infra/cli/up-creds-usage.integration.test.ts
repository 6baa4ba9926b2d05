/**
 * Raw errors met in the README walk-through: `skein up --data <a file>` said `EEXIST: file already exists,
 * mkdir`, `skein creds --out <missing dir>/x.creds` named `x.creds.tmp`, and `skein up --embedded --ui` started
 * the runtime before saying the console needs the private broker. Each is now a usage error, up front.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.ts';
import { tempDir } from '../../support/temp-dir.ts';

describe('skein up / creds: usage errors that name the path', { timeout: 60_000 }, () => {
  let dir: ReturnType<typeof tempDir>;
  afterEach(() => dir?.dispose());

  it('up --data <a file>: says the data dir is a file and what to do', async () => {
    dir = tempDir();
    const file = join(dir.path, 'somefile');
    writeFileSync(file, 'x');
    const out = await runCli(['up', '--embedded', '--data', file]);
    expect(out.code).toBe(2);
    expect(out.stderr).toBe(
      `skein: data dir '${file}' is a file, not a directory: pass --data <dir> (created if missing), ` +
        'or move the file away\n',
    );
    const below = await runCli(['up', '--embedded', '--data', join(file, 'data')]);
    expect(below.code).toBe(2);
    expect(below.stderr).toContain(`cannot be created: '${file}' is a file, not a directory`);
  });

  it('up --embedded --ui: refused before the runtime starts', async () => {
    dir = tempDir();
    const out = await runCli(['up', '--embedded', '--ui', '--data', join(dir.path, 'data')]);
    expect(out.code).toBe(2);
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(/^skein: --ui serves the web console through the private broker, not with --embedded/);
  });

  it('creds --out <missing dir>/x.creds: names the path given and the missing directory', async () => {
    dir = tempDir();
    mkdirSync(join(dir.path, 'data'));
    const out = join(dir.path, 'nonexist', 'x.creds');
    const result = await runCli(['creds', 'main', '--out', out, '--data', join(dir.path, 'data')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `skein: --out '${out}': the directory '${join(dir.path, 'nonexist')}' does not exist; ` +
        'create it first or choose another path\n',
    );
  });
});
