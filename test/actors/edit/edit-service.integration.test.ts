/** EditService: file.edit, bad input, the host contract and file.write (fixture: `edit-service-fixture.ts`). */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

import {
  bases,
  ctx,
  dir,
  facts,
  failure,
  file,
  service,
  sha,
  useEditService,
  validated,
  ws,
} from './edit-service-fixture.ts';

useEditService();

describe('file.edit', () => {
  it('applies, writes atomically, and emits started → resolved → applied with hashes', async () => {
    const before = 'export function f() {\n  return 1;\n}\n';
    writeFileSync(file('a.ts'), before);
    const reply = await service.edit(ctx(), { path: 'a.ts', edits: [{ oldText: 'return 1;', newText: 'return 2;' }] });
    const after = before.replace('return 1;', 'return 2;');
    expect(readFileSync(file('a.ts'), 'utf8')).toBe(after);
    expect(reply).toMatchObject({
      path: 'a.ts',
      mode: 'edit',
      created: false,
      linesAdded: 1,
      linesRemoved: 1,
      edits: [{ index: 0, matchKind: 'exact', similarity: 1, startLine: 2, endLine: 2 }],
      syntaxErrors: { before: 0, after: 0, introduced: [], language: 'typescript' },
      message: 'Edited a.ts successfully',
    });
    expect(reply.diff).toBe(
      '--- a/a.ts\n+++ b/a.ts\n@@ -1,3 +1,3 @@\n export function f() {\n-  return 1;\n+  return 2;\n }\n',
    );
    // The intent (path, base and result hashes) is in the log before the disk is touched.
    expect(validated().map((f) => f.type)).toEqual([
      'edit.started',
      'edit.range.resolved',
      'edit.writing',
      'edit.applied',
    ]);
    const started = facts[0]!.data as { editId: string; path: string };
    expect(facts[2]!.data).toEqual({
      editId: started.editId,
      path: started.path,
      baseHash: sha(before),
      resultHash: sha(after),
    });
    const applied = facts[3]!.data as Record<string, unknown>;
    expect(applied).toMatchObject({
      baseHash: sha(before),
      resultHash: sha(after),
      created: false,
      partial: false,
      lineEnding: 'lf',
      bom: false,
    });
    expect(bases.get(sha(before))?.toString()).toBe(before);
  });

  it('reports a fuzzy match honestly', async () => {
    writeFileSync(file('b.py'), 'def f():\n    x = 1\n    return x\n');
    const reply = await service.edit(ctx(), {
      path: 'b.py',
      edits: [{ oldText: 'x = 1  \nreturn x', newText: 'x = 2\nreturn x' }],
    });
    expect(readFileSync(file('b.py'), 'utf8')).toBe('def f():\n    x = 2\n    return x\n');
    expect(reply.message).toBe(
      'Edited b.py successfully. Matched fuzzily, not byte for byte: edit 0 at ' +
        'lines 2-3 (line similarity 1.00 after normalizing whitespace and quotes).',
    );
  });

  it('keeps CRLF (inserted lines too), BOM and mode bits', async () => {
    const f = file('w.cs');
    writeFileSync(f, Buffer.from('\ufeffclass W {\r\n    int a;\r\n}\r\n', 'utf8'));
    chmodSync(f, 0o640);
    await service.edit(ctx(), {
      path: 'w.cs',
      edits: [{ oldText: '    int a;\n', newText: '    int a;\n    int b;\n' }],
    });
    expect(readFileSync(f).toString('utf8')).toBe('\ufeffclass W {\r\n    int a;\r\n    int b;\r\n}\r\n');
    expect(statSync(f).mode & 0o777).toBe(0o640);
  });

  it('on failure keeps and writes the edits before it, and replies with the error and their diff', async () => {
    writeFileSync(file('c.txt'), 'one\ntwo\n');
    const err = await failure(
      service.edit(ctx(), {
        path: 'c.txt',
        edits: [
          { oldText: 'one', newText: 'ONE' },
          { oldText: 'zzz', newText: 'x' },
        ],
      }),
    );
    expect(readFileSync(file('c.txt'), 'utf8')).toBe('ONE\ntwo\n');
    expect(err.code).toBe('not_found');
    expect(err.message).toBe(
      'Could not find matching text for edit at index 1. The old_text did not match ' +
        'any content in the file. Please read the file again to get the current content.\n' +
        'Edited c.txt:\n\n```diff\n--- a/c.txt\n+++ b/c.txt\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n```',
    );
    expect(validated().map((f) => f.type)).toEqual([
      'edit.started',
      'edit.range.resolved',
      'edit.range.unresolved',
      'edit.writing',
      'edit.applied',
      'edit.failed',
    ]);
    expect(facts[4]!.data).toMatchObject({ partial: true });
    expect(facts[5]!.data).toMatchObject({ editIndex: 1, code: 'not_found', appliedCount: 1 });
  });

  it('says the file changed on disk since the agent read it', async () => {
    writeFileSync(file('d.txt'), 'alpha\n');
    await service.read(ctx(), { path: 'd.txt' });
    writeFileSync(file('d.txt'), 'beta\n');
    const err = await failure(service.edit(ctx(), { path: 'd.txt', edits: [{ oldText: 'alpha', newText: 'gamma' }] }));
    expect(err.message).toBe(
      'Could not find matching text for edit at index 0. The ' +
        'old_text did not match any content in the file. The file has ' +
        'changed on disk since you last read it. Please read the ' +
        'file again to get the current content.\nNo edits were made.',
    );
  });

  it('reports syntax errors the edit introduced (and still applies it)', async () => {
    writeFileSync(file('e.ts'), 'const a = 1;\nconst b = 2;\n');
    const reply = await service.edit(ctx(), {
      path: 'e.ts',
      edits: [{ oldText: 'const b = 2;', newText: 'const b = (2;' }],
    });
    expect(reply.syntaxErrors?.before).toBe(0);
    expect(reply.syntaxErrors?.introduced.length).toBeGreaterThan(0);
    expect(reply.syntaxErrors!.introduced[0]!.line).toBe(2);
    expect(readFileSync(file('e.ts'), 'utf8')).toBe('const a = 1;\nconst b = (2;\n');
  });

  it('refuses every bad path with a clear message', async () => {
    writeFileSync(join(dir, 'outside.txt'), 'x');
    symlinkSync(join(dir, 'outside.txt'), file('out-link'));
    mkdirSync(file('sub'));
    writeFileSync(file('bin.dat'), Buffer.from([0x7f, 0x45, 0, 1]));
    const e = (path: string) =>
      failure(service.edit(ctx(), { path, edits: [{ oldText: 'x', newText: 'y' }] })).then((r) => r.message);
    expect(await e('missing.ts')).toBe(
      `Can't edit file: path not found: "missing.ts". Check the path, or create the file with write_file.`,
    );
    expect(await e('sub')).toBe(`Can't edit file: path is a directory: "sub". Give the path of a file.`);
    expect(await e('../outside.txt')).toMatch(/^Path "..\/outside.txt" is outside the agent's workspace/);
    expect(await e('out-link')).toMatch(
      /^Path "out-link" resolves through a symlink to ".*outside.txt", outside the agent's workspace/,
    );
    expect(await e('bin.dat')).toBe(
      `Can't edit file: "bin.dat" is a binary file (it contains NUL bytes). Only UTF-8 text files can be edited.`,
    );
    expect(facts).toEqual([]);
  });
});

describe('bad edit input', () => {
  it('an empty edits array, a no-op and an empty old_text each get a clear error and write nothing', async () => {
    writeFileSync(file('n.txt'), 'abc\n');
    const msg = (edits: Array<{ oldText: string; newText: string }>) =>
      failure(service.edit(ctx(), { path: 'n.txt', edits })).then((e) => e.message);
    expect(await msg([])).toBe(
      'The edits array is empty. Give at least one { "old_text", "new_text" } edit.\nNo edits were made.',
    );
    expect(await msg([{ oldText: 'abc', newText: 'abc' }])).toBe(
      'Edit 0 makes no change: old_text and new_text are identical. ' +
        'Put the replacement text in new_text.\nNo edits were made.',
    );
    expect(await msg([{ oldText: '', newText: 'x' }])).toMatch(
      /^Could not find matching text for edit at index 0\. The old_text is empty\./,
    );
    expect(readFileSync(file('n.txt'), 'utf8')).toBe('abc\n');
  });
  it('text that is not valid UTF-8 (a lone surrogate) is refused', async () => {
    writeFileSync(file('s.txt'), 'abc\n');
    expect(
      (await failure(service.edit(ctx(), { path: 's.txt', edits: [{ oldText: 'abc', newText: 'x\ud800' }] }))).message,
    ).toBe('The new_text of edit 0 contains a lone UTF-16 surrogate, which is not valid UTF-8. Send well-formed text.');
  });
  it('a parent that is a file is named', async () => {
    writeFileSync(file('f'), '');
    expect((await failure(service.write(ctx(), { path: 'f/x.txt', content: '' }))).message).toBe(
      `Can't create file: parent is not a directory: "${file('f')}". Choose a path whose parent is a directory.`,
    );
  });
});

describe('editHandlers (host contract)', () => {
  it('maps command types to service calls and emits through ctx.emit', async () => {
    const { editHandlers } = await import('../../../actors/edit/edit-handlers.ts');
    const handlers = editHandlers(service);
    expect(Object.keys(handlers)).toEqual([
      'file.read',
      'file.edit',
      'file.write',
      'edit.begin',
      'edit.input',
      'edit.finish',
      'edit.cancel',
    ]);
    const emitted: string[] = [];
    const reply = await handlers['file.write']!({
      command: { id: 'c1', type: 'file.write', agentId: 'a1', data: { path: 'h.txt', content: 'x' } },
      emit: async (f) => void emitted.push(f.type),
    });
    expect(reply).toMatchObject({ created: true, path: 'h.txt' });
    expect(emitted).toEqual(['edit.started', 'edit.writing', 'edit.applied']);
  });
});

describe('file.write', () => {
  it('creates a file (created: true, baseHash null) and overwrites one keeping its CRLF', async () => {
    const r1 = await service.write(ctx(), { path: 'new.txt', content: 'hi\n' });
    expect(r1).toMatchObject({ created: true, message: 'Created new.txt successfully' });
    expect(validated().at(-1)!.data).toMatchObject({ baseHash: null, created: true, resultHash: sha('hi\n') });
    writeFileSync(file('crlf.txt'), 'a\r\nb\r\n');
    await service.write(ctx(), { path: 'crlf.txt', content: 'x\ny\n' });
    expect(readFileSync(file('crlf.txt'), 'utf8')).toBe('x\r\ny\r\n');
  });
  it('creates missing parent directories inside the workspace (an agent may have no mkdir)', async () => {
    const reply = await service.write(ctx(), { path: 'a/b/c.txt', content: 'made\n' });
    expect(reply).toMatchObject({ created: true });
    expect(readFileSync(file('a/b/c.txt'), 'utf8')).toBe('made\n');
    expect(statSync(file('a/b')).isDirectory()).toBe(true);
  });
  it('never creates a directory outside: a symlinked parent, a symlink deeper in, or ../', async () => {
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    symlinkSync(outside, file('out'));
    mkdirSync(file('in'));
    symlinkSync('../../outside', file('in/up'));
    for (const path of ['out/canary/x.txt', 'in/up/canary/x.txt', '../canary/x.txt', `${outside}/canary/x.txt`]) {
      const err = await failure(service.write(ctx(), { path, content: 'CANARY' }));
      expect(err.code, path).toBe('permission_denied');
      expect(err.message, path).toMatch(/outside the agent's workspace/);
    }
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(dir, 'canary'))).toBe(false);
    // A parent that is a file is named, not replaced.
    writeFileSync(file('f'), 'file');
    expect((await failure(service.write(ctx(), { path: 'f/g/h.txt', content: '' }))).message).toMatch(
      /parent is not a directory: ".*\/f"/,
    );
    expect(readFileSync(file('f'), 'utf8')).toBe('file');
  });
  it('still names a missing parent directory for file.edit, refuses a directory and over-size', async () => {
    expect(
      (await failure(service.edit(ctx(), { path: 'p/q/r.txt', edits: [{ oldText: 'a', newText: 'b' }] }))).message,
    ).toBe(
      `Can't create file: parent directory doesn't exist: ` +
        `"${join(ws, 'p/q')}". Create the directory first, then write the file.`,
    );
    expect(existsSync(file('p'))).toBe(false);
    mkdirSync(file('d'));
    expect((await failure(service.write(ctx(), { path: 'd', content: '' }))).message).toBe(
      `Can't write to file: path is a directory: "d". Give the path of a file.`,
    );
    // A path ending in / names a directory, existing or not: never a file by the name before it.
    for (const path of ['new-dir/', 'new-dir/.', 'd/']) {
      expect((await failure(service.write(ctx(), { path, content: 'x' }))).message).toBe(
        `Can't write to file: path is a directory: ${JSON.stringify(path)}. Give the path of a file.`,
      );
    }
    expect(existsSync(file('new-dir'))).toBe(false);
    writeFileSync(file('huge.txt'), 'x'.repeat(1_000_001));
    expect((await failure(service.write(ctx(), { path: 'huge.txt', content: '' }))).code).toBe('limit_exceeded');
    expect((await failure(service.write(ctx(), { path: 'big-new.txt', content: 'y'.repeat(1_000_001) }))).message).toBe(
      'The new content of "big-new.txt" would be 1000001 bytes, over ' +
        'the 1000000-byte limit. Write a smaller file, or raise domains.edit.maxFileBytes in the runtime config.',
    );
    expect(facts.slice(-2).map((f) => f.type)).toEqual(['edit.started', 'edit.failed']);
  });
});
