/**
 * `review_list` over MCP pages a review too big for one message: each page's result says how to get the next
 * (its nextCursor, also in the text for the model), and passing that cursor back walks every page, so each
 * changed file is listed and no diff is lost (a diff too big for a page comes in parts on consecutive pages).
 * The runtime's payload limit is set low (.skein/config.json) so that a few 25 KB files make several pages.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpWorkspace, stdioClient, type TestClient } from '../../support/mcp.ts';

type Text = { type: string; text: string };
const text = (r: unknown) => ((r as { content: Text[] }).content ?? []).map((c) => c.text).join('\n');
type Page = { files: Array<{ path: string; diff: string }>; nextCursor?: string };

describe('skein mcp review_list in pages', () => {
  let ws: ReturnType<typeof mcpWorkspace>;
  let c: TestClient;

  beforeAll(async () => {
    ws = mcpWorkspace();
    writeFileSync(join(ws.dir, '.skein', 'config.json'), JSON.stringify({ limits: { maxPayloadBytes: 64 * 1024 } }));
    c = await stdioClient(ws.dir);
  }, 60_000);
  afterAll(async () => {
    await c?.close();
    ws?.dispose();
  });

  it('walks every page with the cursor each page gives, each file once, every diff whole', async () => {
    const names = ['a.txt', 'b.txt', 'c.txt', 'd.txt'];
    for (const name of names) {
      const content = Array.from({ length: 1_500 }, (_, i) => `${name} line ${i}`).join('\n');
      const w = await c.client.callTool({ name: 'write_file', arguments: { path: name, content } });
      expect(w.isError, text(w)).toBeFalsy();
    }
    const diffs = new Map<string, string>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const r = await c.client.callTool({ name: 'review_list', arguments: cursor === undefined ? {} : { cursor } });
      expect(r.isError, text(r)).toBeFalsy();
      const page = r.structuredContent as Page;
      for (const f of page.files) diffs.set(f.path, (diffs.get(f.path) ?? '') + f.diff);
      if (page.nextCursor !== undefined) {
        expect(text(r)).toContain(`call review_list with cursor ${JSON.stringify(page.nextCursor)}`);
      } else {
        expect(text(r)).not.toContain('More changes follow');
      }
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 20);
    expect(pages).toBeGreaterThan(1);
    expect([...diffs.keys()]).toEqual(names.map((n) => join(ws.dir, n)));
    // Each diff whole, its parts put together: a new file's every line added, once.
    for (const name of names) {
      const added = diffs
        .get(join(ws.dir, name))!
        .split('\n')
        .filter((l) => l.startsWith(`+${name} line `));
      expect({ name, added: added.length }).toEqual({ name, added: 1_500 });
    }
  }, 120_000);

  it('gives every page in the skein://review/diff resource: each file once, every diff whole', async () => {
    // The files of the test above, over several pages; the resource has no cursor, so it follows them all.
    const r = await c.client.readResource({ uri: 'skein://review/diff' });
    const diff = (r.contents as Array<{ text: string }>).map((x) => x.text).join('');
    expect(diff).not.toContain('More changes follow');
    for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) {
      const added = diff.split('\n').filter((l) => l.startsWith(`+${name} line `));
      expect({ name, added: added.length, unique: new Set(added).size }).toEqual({ name, added: 1_500, unique: 1_500 });
    }
  }, 60_000);

  it('refuses a cursor it never gave, saying to start over', async () => {
    const r = await c.client.callTool({ name: 'review_list', arguments: { cursor: 'x\u0000not-a-number' } });
    expect(r.isError).toBe(true);
    expect(text(r)).toMatch(/omit it to start over/);
  });
});
