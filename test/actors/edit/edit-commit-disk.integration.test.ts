/**
 * What an edit's commit does to the disk around it. A review of 8 December found, with real files:
 * - a command's write between the commit's re-read and its rename was lost under the edit, silently (the edits
 *   are now applied again over it, three tries, then a conflict);
 * - a streamed write to a path no file had at `begin` was renamed over the file a command made there meanwhile,
 *   and recorded as a creation (a reject would then delete the command's file);
 * - a chmod while an edit streamed was undone by the write (the mode read at `begin` was written back);
 * - a CRLF file's untouched `x\r\r\n` line lost a `\r`; a BOM file written with content that starts with a BOM
 *   got two; a key given twice in the streamed JSON was applied as its first value, where the model reads the last.
 * Canaries: the command's content, the file's own bytes.
 */
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EditService } from '../../../actors/edit/edit-service.ts';
import { ctx, facts, failure, file, service, useEditService, ws } from './edit-service-fixture.ts';

useEditService();
const CANARY = 'ADDED BY A COMMAND CANARY\n';

/** Streams `json` one character a chunk, then finishes. */
async function stream(path: string, json: string, mode?: 'write') {
  const { editId } = await service.begin(ctx(), { path, ...(mode ? { mode } : {}) });
  for (const ch of json) await service.input(ctx(), { editId, chunk: ch });
  return service.finish(ctx(), { editId });
}

describe('an edit and a command writing the same file', () => {
  /** An EditService whose blob store write (inside the commit's window) runs `during` (n from 0). */
  const racing = (during: (n: number) => void) => {
    let n = 0;
    return new EditService({
      workspaceRoots: { a1: [ws] },
      maxFileBytes: 1_000_000,
      storeBlob: () => during(n++),
    });
  };

  it("applies the edits again over a write made after the commit's re-read: the command's line stays", async () => {
    writeFileSync(file('r.txt'), 'one\ntwo\n');
    const svc = racing((n) => n === 0 && writeFileSync(file('r.txt'), `one\ntwo\n${CANARY}`));
    await svc.edit(ctx(), { path: 'r.txt', edits: [{ oldText: 'two', newText: 'TWO' }] });
    expect(readFileSync(file('r.txt'), 'utf8')).toBe(`one\nTWO\n${CANARY}`);
  });

  it('fails as a conflict when the file changes under every try; the last write stays', async () => {
    writeFileSync(file('r.txt'), 'one\ntwo\n');
    const svc = racing((n) => writeFileSync(file('r.txt'), `one\ntwo\n${CANARY}${n}\n`));
    const err = await failure(svc.edit(ctx(), { path: 'r.txt', edits: [{ oldText: 'two', newText: 'TWO' }] }));
    expect([err.code, err.message]).toEqual(['conflict', expect.stringContaining('changed on disk while this write')]);
    expect(readFileSync(file('r.txt'), 'utf8')).toMatch(new RegExp(`^one\ntwo\n${CANARY}\\d+\n$`));
    expect(facts.some((f) => f.type === 'edit.applied')).toBe(false);
  });

  it('a streamed write to a new path does not replace the file a command made there meanwhile', async () => {
    const { editId } = await service.begin(ctx(), { path: 'n.txt', mode: 'write' });
    await service.input(ctx(), { editId, chunk: '{"content":"mine\\n"}' });
    writeFileSync(file('n.txt'), CANARY);
    const err = await failure(service.finish(ctx(), { editId }));
    expect([err.code, err.message]).toEqual(['conflict', expect.stringContaining('was created on disk since')]);
    expect(readFileSync(file('n.txt'), 'utf8')).toBe(CANARY);
    expect(facts.some((f) => f.type === 'edit.applied')).toBe(false);
    // Written again, it replaces the file as a change of it (review shows what it replaced).
    const again = await service.write(ctx(), { path: 'n.txt', content: 'mine\n' });
    expect(again.created).toBe(false);
  });

  it('keeps a mode changed while the edit streamed', async () => {
    writeFileSync(file('s.sh'), 'echo one\n', { mode: 0o644 });
    const { editId } = await service.begin(ctx(), { path: 's.sh' });
    await service.input(ctx(), { editId, chunk: '{"edits":[{"old_text":"one","new_text":"two"}]}' });
    chmodSync(file('s.sh'), 0o755);
    await service.finish(ctx(), { editId });
    expect([statSync(file('s.sh')).mode & 0o777, readFileSync(file('s.sh'), 'utf8')]).toEqual([0o755, 'echo two\n']);
  });
});

describe("a file's own bytes", () => {
  it("keeps a CRLF file's lone CR on a line the edit did not touch, streamed or not", async () => {
    writeFileSync(file('c.txt'), 'x\r\r\ny\r\nz\r\n');
    await service.edit(ctx(), { path: 'c.txt', edits: [{ oldText: 'z', newText: 'Z\r\nw' }] });
    expect(readFileSync(file('c.txt'), 'latin1')).toBe('x\r\r\ny\r\nZ\r\nw\r\n');
    writeFileSync(file('s.txt'), 'x\r\r\ny\r\nz\r\n');
    await stream('s.txt', JSON.stringify({ edits: [{ old_text: 'z', new_text: 'Z\r\nw' }] }));
    expect(readFileSync(file('s.txt'), 'latin1')).toBe('x\r\r\ny\r\nZ\r\nw\r\n');
  });

  it("a CRLF file written whole, streamed with CRLF split across chunks, gets the one-shot write's bytes", async () => {
    const content = 'a\r\nb\r\n\r\nc\r\n';
    writeFileSync(file('one.txt'), 'old\r\n');
    writeFileSync(file('two.txt'), 'old\r\n');
    await service.write(ctx(), { path: 'one.txt', content });
    await stream('two.txt', JSON.stringify({ content }), 'write');
    expect(readFileSync(file('two.txt'), 'latin1')).toBe(readFileSync(file('one.txt'), 'latin1'));
    expect(readFileSync(file('one.txt'), 'latin1')).toBe(content);
  });

  it("a streamed new_text ending in CRLF, split, gives the one-shot edit's bytes (a mixed file)", async () => {
    // Seed 687729188 of a review's fuzzer: the streamed edit wrote `aa\naa\r\r\n`.
    writeFileSync(file('m1.txt'), 'aa\naa \r\n');
    writeFileSync(file('m2.txt'), 'aa\naa \r\n');
    await service.edit(ctx(), { path: 'm1.txt', edits: [{ oldText: ' ', newText: '\r\n' }] });
    await stream('m2.txt', JSON.stringify({ edits: [{ old_text: ' ', new_text: '\r\n' }] }));
    expect(readFileSync(file('m2.txt'), 'latin1')).toBe(readFileSync(file('m1.txt'), 'latin1'));
  });

  it('writes one BOM when a BOM file is written with content that starts with one', async () => {
    writeFileSync(file('b.txt'), '\ufeffhello\n');
    await service.write(ctx(), { path: 'b.txt', content: '\ufeffhello world\n' });
    expect(readFileSync(file('b.txt')).toString('hex')).toBe(Buffer.from('\ufeffhello world\n').toString('hex'));
  });

  it('refuses a key given twice, naming it, and writes nothing', async () => {
    writeFileSync(file('d.txt'), 'a\nb\n');
    for (const json of [
      '{"edits":[{"old_text":"a\\n","new_text":"b\\n","new_text":"EVIL\\n"}]}',
      '{"edits":[{"old_text":"a","new_text":"A"}],"edits":[{"old_text":"b","new_text":"EVIL"}]}',
    ]) {
      const err = await failure(stream('d.txt', json));
      expect(err.message).toMatch(/edits\[0\] has "(new|old)_text" twice/);
      expect(readFileSync(file('d.txt'), 'utf8')).toBe('a\nb\n');
    }
  });
});
