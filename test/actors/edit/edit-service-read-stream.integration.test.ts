/** EditService: file.read and streaming edits (fixture and helpers: `edit-service-fixture.ts`). */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ctx, facts, failure, file, service, sha, useEditService, validated } from './edit-service-fixture.ts';

useEditService();

describe('file.read', () => {
  it('returns a line range with the total and records the version seen', async () => {
    writeFileSync(file('r.txt'), 'l1\nl2\nl3\nl4\n');
    expect(await service.read(ctx(), { path: 'r.txt', startLine: 2, endLine: 3 })).toEqual({
      path: 'r.txt',
      content: 'l2\nl3\n',
      startLine: 2,
      endLine: 3,
      totalLines: 4,
      hash: sha('l1\nl2\nl3\nl4\n'),
    });
    expect(validated()).toEqual([
      {
        type: 'file.read.recorded',
        data: {
          fileId: expect.stringMatching(/^f-[0-9a-f]{16}$/),
          path: file('r.txt'),
          hash: sha('l1\nl2\nl3\nl4\n'),
          mtimeMs: expect.any(Number),
          totalLines: 4,
        },
      },
    ]);
    expect((await failure(service.read(ctx(), { path: 'r.txt', startLine: 9 }))).message).toBe(
      'startLine 9 is past the end of "r.txt", which has 4 lines. Ask for a line between 1 and 4.',
    );
  });

  it('returns an outline with a hint for a large file read without a range', async () => {
    const src = `${Array.from(
      { length: 800 },
      (_, i) => `export function f${i}(x: number): number {\n  return x + ${i};\n}\n`,
    ).join('')}export class Big {\n  method(): void {}\n}\n`;
    writeFileSync(file('big.ts'), src);
    const reply = await service.read(ctx(), { path: 'big.ts' });
    expect(reply.content).toBe('');
    expect(reply.totalLines).toBe(2403);
    expect(reply.outline?.[0]).toEqual({
      kind: 'function_declaration',
      name: 'f0',
      startLine: 1,
      endLine: 3,
      depth: 0,
    });
    expect(reply.outline?.slice(-2)).toEqual([
      { kind: 'class_declaration', name: 'Big', startLine: 2401, endLine: 2403, depth: 0 },
      { kind: 'method_definition', name: 'method', startLine: 2402, endLine: 2402, depth: 1 },
    ]);
    expect(reply.hint).toMatch(/^big.ts has 2403 lines, so this is an outline/);
  });
});

describe('streaming edit', () => {
  it('begin → input chunks → finish writes the same as a one-shot edit', async () => {
    writeFileSync(file('s.ts'), 'function a() {\n    return 1;\n}\n');
    const { editId } = await service.begin(ctx(), { path: 's.ts', mode: 'edit' });
    const json = JSON.stringify({ path: 's.ts', edits: [{ old_text: 'return 1;', new_text: 'return 2;' }] });
    for (const ch of json) await service.input(ctx(), { editId, chunk: ch });
    const reply = await service.finish(ctx(), { editId });
    expect(reply.message).toBe('Edited s.ts successfully');
    expect(readFileSync(file('s.ts'), 'utf8')).toBe('function a() {\n    return 2;\n}\n');
    const types = validated().map((f) => f.type);
    expect(types[0]).toBe('edit.started');
    expect(types.at(-1)).toBe('edit.applied');
    expect(types).toContain('edit.diff.progressed');
    expect((await failure(service.input(ctx(), { editId, chunk: 'x' }))).message).toBe(
      `Edit "${editId}" is already finished. Begin a new edit with edit.begin.`,
    );
    expect((await failure(service.input(ctx(), { editId: 'e-nope', chunk: 'x' }))).message).toBe(
      'No streaming edit "e-nope" for this agent. Begin one with edit.begin and use the editId it returns.',
    );
  });

  it('an unresolvable old_text fails the input that completes it', async () => {
    writeFileSync(file('u.txt'), 'abc\n');
    const { editId } = await service.begin(ctx(), { path: 'u.txt' });
    const err = await failure(service.input(ctx(), { editId, chunk: '{"edits":[{"old_text":"zzz","new_text":"y"}' }));
    expect(err.message).toMatch(/^Could not find matching text for edit at index 0\./);
    expect(facts.at(-1)).toMatchObject({ type: 'edit.failed', data: { code: 'not_found', appliedCount: 0 } });
  });

  it('a streamed write that outgrows maxFileBytes fails as it streams, not at finish; nothing is written', async () => {
    // Found by a review: 36 MB streamed against an 8 MiB limit was all taken (1.1 GB of heap) and refused only
    // at edit.finish. The fixture's limit is 1,000,000 bytes: the fifth chunk of 200,001 crosses it.
    const { editId } = await service.begin(ctx(), { path: 'big.txt', mode: 'write' });
    await service.input(ctx(), { editId, chunk: '{"path":"big.txt","content":"' });
    for (let i = 0; i < 4; i++) await service.input(ctx(), { editId, chunk: 'a'.repeat(200_001) });
    const err = await failure(service.input(ctx(), { editId, chunk: 'a'.repeat(200_001) }));
    expect(err.message).toMatch(
      'The streamed input is over what a 1000000-byte file can hold (1000005 characters so far); nothing was ',
    );
    expect(existsSync(file('big.txt'))).toBe(false);
    expect(facts.at(-1)?.type).toBe('edit.failed');
  });

  it('malformed JSON at finish names the offset; nothing is written', async () => {
    writeFileSync(file('m.txt'), 'abc\n');
    const { editId } = await service.begin(ctx(), { path: 'm.txt' });
    await service.input(ctx(), { editId, chunk: '{"edits":[{"old_text":"abc",,' });
    const err = await failure(service.finish(ctx(), { editId }));
    expect(err.code).toBe('invalid_json');
    expect(err.message).toBe(
      `The tool input is not valid JSON at offset 28: expected a property name in ` +
        `double quotes, got ",". Send the complete JSON again.\nNo edits were made.`,
    );
    expect(readFileSync(file('m.txt'), 'utf8')).toBe('abc\n');
  });

  it('a different path inside the tool JSON is refused and nothing is written', async () => {
    writeFileSync(file('p.txt'), 'abc\n');
    const { editId } = await service.begin(ctx(), { path: 'p.txt' });
    await service.input(ctx(), { editId, chunk: '{"path":"other.txt","edits":[{"old_text":"abc","new_text":"x"}]}' });
    expect((await failure(service.finish(ctx(), { editId }))).message).toBe(
      'The tool input names path "other.txt" but the edit began on ' +
        '"p.txt". Begin a new edit for that path.\nNo edits were made.',
    );
    expect(readFileSync(file('p.txt'), 'utf8')).toBe('abc\n');
  });

  it('cancel writes nothing and records edit.failed', async () => {
    writeFileSync(file('k.txt'), 'abc\n');
    const { editId } = await service.begin(ctx(), { path: 'k.txt' });
    await service.input(ctx(), { editId, chunk: '{"edits":[{"old_text":"abc","new_text":"x"}]}' });
    expect(await service.cancel(ctx(), { editId })).toEqual({ editId, cancelled: true });
    expect(readFileSync(file('k.txt'), 'utf8')).toBe('abc\n');
    expect(facts.at(-1)).toMatchObject({ type: 'edit.failed', data: { code: 'cancelled' } });
  });

  it('a CRLF file edited with CRLF old/new text streamed char by char: exact match, CRLF kept', async () => {
    writeFileSync(file('c.txt'), 'one\r\ntwo\r\nthree\r\n');
    const { editId } = await service.begin(ctx(), { path: 'c.txt' });
    for (const ch of JSON.stringify({ edits: [{ old_text: 'one\r\ntwo\r\n', new_text: 'one\r\n2\r\nextra\r\n' }] }))
      await service.input(ctx(), { editId, chunk: ch });
    const reply = await service.finish(ctx(), { editId });
    expect(reply.edits).toEqual([{ index: 0, matchKind: 'exact', similarity: 1, startLine: 1, endLine: 2 }]);
    expect(readFileSync(file('c.txt'), 'utf8')).toBe('one\r\n2\r\nextra\r\nthree\r\n');
  });

  it('re-applies the edits when the file changed on disk while streaming', async () => {
    writeFileSync(file('r.txt'), 'one\ntwo\n');
    const { editId } = await service.begin(ctx(), { path: 'r.txt' });
    await service.input(ctx(), { editId, chunk: '{"edits":[{"old_text":"two","new_text":"TWO"}]}' });
    writeFileSync(file('r.txt'), 'zero\none\ntwo\n');
    await service.finish(ctx(), { editId });
    expect(readFileSync(file('r.txt'), 'utf8')).toBe('zero\none\nTWO\n');
  });
});
