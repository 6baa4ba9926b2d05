/**
 * An edit a person approves replaces only what the ask showed them, live: a real runtime, a policy that asks
 * about every edit_file, the person at the root answering "allow once" after reading the ask's detail. The
 * agent's old_text leaves out a function's two guard lines and changes one log string: the matcher tolerates a
 * fifth of the lines differing, so on the code before `shownOnly` the fuzzy match covered the guards and the
 * approved edit deleted them (an audit of 5 December). The canary is the file without its guards.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Reply } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { GUARD, GUARDED_FILE as FILE, SHOWN } from '../support/guarded-function.ts';

describe('hostile: an approved fuzzy edit cannot replace lines the ask did not show', () => {
  let rt: TestRuntime;
  const path = () => join(rt.workspace, 'remove.ts');

  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      policy: { default: 'allow', tools: { edit_file: { default: 'confirm' } } },
    });
  }, 60_000);
  afterAll(async () => {
    await rt?.dispose();
  });

  /** Sends file.edit and answers its ask as the person would, after reading what it shows. */
  async function editApproved(edits: Array<{ oldText: string; newText: string }>) {
    let done = false;
    const shown: string[] = [];
    const reply = rt.call('file.edit', { path: 'remove.ts', edits }).finally(() => (done = true));
    while (!done) {
      const pending = await rt.call('permission.pending');
      for (const r of pending.ok ? (pending['requests'] as Array<{ requestId: string; detail?: string }>) : []) {
        shown.push(r.detail ?? '');
        await rt.call('permission.decide', { requestId: r.requestId, decision: 'allow_once' });
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return { reply: (await reply) satisfies Reply, shown };
  }

  it('the guards the ask never showed survive a person approving the edit', async () => {
    writeFileSync(path(), FILE);
    const { reply, shown } = await editApproved([{ oldText: SHOWN, newText: SHOWN.replace('remove done', 'removed') }]);
    // The person was asked, and what they read held no guard line.
    expect(shown).toHaveLength(1);
    expect(shown[0]).toContain('remove done');
    expect(shown[0]).not.toContain('admin');
    expect(reply).toMatchObject({ ok: false });
    if (!reply.ok) {
      expect(reply.error.message).toContain('only approximately');
      expect(reply.error.message).toContain('line 4 there');
    }
    // Canary: the function without its guards.
    expect(readFileSync(path(), 'utf8')).toBe(FILE);
  });

  it('an approved edit whose lines were all shown (spaces aside) still applies fuzzily', async () => {
    writeFileSync(path(), FILE);
    const oldText = ['  log("remove start");', '    const db = open();  ', GUARD].join('\n');
    const { reply, shown } = await editApproved([{ oldText, newText: oldText.replace('remove start', 'begin') }]);
    expect(shown).toHaveLength(1);
    expect(reply).toMatchObject({ ok: true, edits: [{ matchKind: 'fuzzy' }] });
    const after = readFileSync(path(), 'utf8');
    expect(after).toContain('log("begin")');
    expect(after.split(GUARD)).toHaveLength(3);
  });

  it('an edit the rules allow (nobody asked) keeps the matcher’s tolerance', async () => {
    ok(await rt.call('policy.set', { layer: 'project', policy: { default: 'allow' } }));
    writeFileSync(path(), FILE);
    const reply = await rt.call('file.edit', {
      path: 'remove.ts',
      edits: [{ oldText: SHOWN, newText: SHOWN.replace('remove done', 'removed') }],
    });
    expect(reply).toMatchObject({ ok: true, edits: [{ matchKind: 'fuzzy', startLine: 1, endLine: 11 }] });
  });
});
