/**
 * A file call a person approved acts on the file the ask named, live: a real runtime, a policy that asks about
 * every write_file and edit_file, the person at the root answering "allow once". While the ask waits, the
 * agent swaps the path for a symlink to another workspace file; on the code before the gate resolved the path
 * again after the answer, the approved write went through the link into that file (the canary).
 */
import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reply } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

type Ask = { requestId: string; input: string };

describe('hostile: an answer applies to the path the ask resolved', () => {
  let rt: TestRuntime;
  const at = (name: string) => join(rt.workspace, name);

  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      policy: { default: 'allow', tools: { write_file: { default: 'confirm' }, edit_file: { default: 'confirm' } } },
    });
  }, 60_000);
  afterAll(async () => {
    await rt?.dispose();
  });

  /** Sends `type`, runs `meanwhile` once its ask is pending, then answers it "allow once". */
  async function approvedAfter(type: string, data: object, meanwhile: () => void): Promise<Reply> {
    const reply = rt.call(type, data);
    let ask: Ask | undefined;
    for (const started = Date.now(); !ask && Date.now() - started < 10_000; ) {
      const r = await rt.call('permission.pending');
      ask = r.ok ? (r['requests'] as Ask[])[0] : undefined;
      if (!ask) await new Promise((done) => setTimeout(done, 25));
    }
    expect(ask).toBeDefined();
    meanwhile();
    ok(await rt.call('permission.decide', { requestId: ask!.requestId, decision: 'allow_once' }));
    return reply;
  }

  it('a write approved for notes.txt does not follow a link made to config.json before the answer', async () => {
    writeFileSync(at('config.json'), '{"safe":true}\n');
    writeFileSync(at('notes.txt'), 'old notes\n');
    const reply = await approvedAfter('file.write', { path: 'notes.txt', content: 'CANARY\n' }, () => {
      rmSync(at('notes.txt'));
      symlinkSync('config.json', at('notes.txt'));
    });
    expect(reply).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    if (!reply.ok) expect(reply.error.message).toContain('the path now leads to');
    expect(readFileSync(at('config.json'), 'utf8')).toBe('{"safe":true}\n');
  });

  it('an edit approved for b.txt does not follow a link made to app.env before the answer', async () => {
    writeFileSync(at('app.env'), 'MODE=safe\n');
    writeFileSync(at('b.txt'), 'MODE=safe\n');
    const reply = await approvedAfter(
      'file.edit',
      { path: 'b.txt', edits: [{ oldText: 'MODE=safe', newText: 'MODE=CANARY' }] },
      () => {
        rmSync(at('b.txt'));
        symlinkSync('app.env', at('b.txt'));
      },
    );
    expect(reply).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(readFileSync(at('app.env'), 'utf8')).toBe('MODE=safe\n');
  });

  it('a path unchanged since the ask is written', async () => {
    writeFileSync(at('plain.txt'), 'before\n');
    const reply = await approvedAfter('file.write', { path: 'plain.txt', content: 'after\n' }, () => {});
    ok(reply);
    expect(readFileSync(at('plain.txt'), 'utf8')).toBe('after\n');
  });
});
