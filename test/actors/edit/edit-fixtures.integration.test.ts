import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EditService } from '../../../actors/edit/edit-service.ts';
import { decodeInput } from '../../../machines/edit/edit-parser.ts';

const root = fileURLToPath(new URL('../../fixtures/edits/', import.meta.url));
const cases = readdirSync(root).filter((d) => readdirSync(join(root, d)).includes('edits.json'));

const ENCODINGS = {
  lf: (t: string) => t,
  crlf: (t: string) => t.replace(/\n/g, '\r\n'),
  'bom+crlf': (t: string) => `\ufeff${t.replace(/\n/g, '\r\n')}`,
} as const;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'skein-edit-fx-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe.each(cases)('fixture %s (before → edits → after)', (name) => {
  const files = readdirSync(join(root, name));
  const before = files.find((f) => f.startsWith('before.'))!;
  const after = files.find((f) => f.startsWith('after.'))!;
  const ext = before.slice('before'.length);
  const edits = decodeInput(
    ((v: unknown) => (Array.isArray(v) ? { edits: v } : v))(
      JSON.parse(readFileSync(join(root, name, 'edits.json'), 'utf8')),
    ),
    0,
  ).edits!;
  const beforeText = readFileSync(join(root, name, before), 'utf8');
  const afterText = readFileSync(join(root, name, after), 'utf8');

  it.each(Object.keys(ENCODINGS) as Array<keyof typeof ENCODINGS>)('one-shot, %s file', async (enc) => {
    const service = new EditService({ workspaceRoots: () => [dir] });
    const path = join(dir, `file${ext}`);
    writeFileSync(path, ENCODINGS[enc](beforeText));
    const reply = await service.edit({ agentId: 'a', emit: async () => {} }, { path, edits });
    expect(readFileSync(path, 'utf8')).toBe(ENCODINGS[enc](afterText));
    expect(reply.syntaxErrors?.introduced ?? []).toEqual([]);
  });

  it('streamed char by char gives the same file', async () => {
    const service = new EditService({ workspaceRoots: () => [dir] });
    const path = join(dir, `file${ext}`);
    writeFileSync(path, beforeText);
    const ctx = { agentId: 'a', emit: async () => {} };
    const { editId } = await service.begin(ctx, { path });
    for (const ch of JSON.stringify({ path, edits: edits.map((e) => ({ old_text: e.oldText, new_text: e.newText })) }))
      await service.input(ctx, { editId, chunk: ch });
    await service.finish(ctx, { editId });
    expect(readFileSync(path, 'utf8')).toBe(afterText);
  });
});
