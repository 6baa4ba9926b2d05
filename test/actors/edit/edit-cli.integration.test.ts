import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { type EditCliIo, registerEditCommands } from '../../../infra/cli/edit-command.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skein-edit-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `skein <args>` through commander with captured io. */
async function skein(args: string[], stdin = ''): Promise<{ code: number | undefined; out: string; err: string }> {
  let out = '';
  let err = '';
  let code: number | undefined;
  const io: EditCliIo = {
    stdout: (t) => void (out += t),
    stderr: (t) => void (err += t),
    readStdin: async () => stdin,
    exit: (c) => void (code = c),
  };
  const program = new Command('skein').exitOverride();
  registerEditCommands(program, io);
  await program.parseAsync(args, { from: 'user' });
  return { code, out, err };
}

describe('skein edit (standalone)', () => {
  it('apply: prints the diff, writes, exit 0', async () => {
    const f = join(dir, 'a.py');
    writeFileSync(f, 'def f():\n    return 1\n');
    writeFileSync(join(dir, 'e.json'), JSON.stringify([{ oldText: 'return 1', newText: 'return 2' }]));
    const r = await skein(['edit', 'apply', f, '--edits', join(dir, 'e.json')]);
    expect(r).toEqual({
      code: 0,
      err: '',
      out: `--- a/${f.slice(1)}\n+++ b/${f.slice(1)}\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n`,
    });
    expect(readFileSync(f, 'utf8')).toBe('def f():\n    return 2\n');
  });

  it('apply --dry-run --json from stdin with { edits }: nothing written', async () => {
    const f = join(dir, 'b.txt');
    writeFileSync(f, 'x\n');
    const r = await skein(
      ['edit', 'apply', f, '--edits', '-', '--dry-run', '--json'],
      JSON.stringify({ edits: [{ old_text: 'x', new_text: 'y' }] }),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({
      ok: true,
      dryRun: true,
      linesAdded: 1,
      linesRemoved: 1,
      edits: [{ index: 0, matchKind: 'exact' }],
    });
    expect(readFileSync(f, 'utf8')).toBe('x\n');
  });

  it('apply: a non-matching edit prints the error, exit 1', async () => {
    const f = join(dir, 'c.txt');
    writeFileSync(f, 'x\n');
    const r = await skein(['edit', 'apply', f, '--edits', '-'], '[{"oldText":"nope","newText":"y"}]');
    expect(r).toEqual({
      code: 1,
      out: '',
      err:
        'Could not find matching text for edit at index 0. The old_text did not match any content ' +
        'in the file. Please read the file again to get the current content.\nNo edits were made.\n',
    });
  });

  it('bad usage exits 2', async () => {
    const f = join(dir, 'd.txt');
    writeFileSync(f, 'x\n');
    expect((await skein(['edit', 'apply', f])).code).toBe(2);
    expect(await skein(['edit', 'apply', f, '--edits', '-'], '{not json')).toMatchObject({
      code: 2,
      err: expect.stringMatching(/^The edits in "-" are not valid JSON/),
    });
    expect((await skein(['edit', 'apply', f, '--edits', join(dir, 'missing.json')])).err).toBe(
      `Cannot read --edits file "${join(dir, 'missing.json')}". Give an existing file, or - for stdin.\n`,
    );
  });

  it('write: creates a file from stdin, exit 0', async () => {
    const f = join(dir, 'new.txt');
    const r = await skein(['edit', 'write', f, '--content', '-'], 'hello\n');
    expect(r.code).toBe(0);
    expect(readFileSync(f, 'utf8')).toBe('hello\n');
  });
});
