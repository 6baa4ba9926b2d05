/**
 * A sibling's reject never undoes another agent's work. Agent `a` changes a file, then its sibling `b` rewrites
 * it: `a`'s log followed `b`'s change (its current content became `b`'s) while keeping `a`'s base, so `a`'s
 * reject restored the base over `b`'s work, or deleted the file `a` had created with `b`'s content in it, and
 * `a`'s listing showed `b`'s lines as `a`'s. The canary is `b`'s content, which must survive `a`'s reject. And
 * a child's reject that brings back its parent's line, which the child had undone: listed nowhere until 7 December.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const CANARY = 'B-WORK-CANARY';
let rt: TestRuntime;
const read = (path: string) => readFileSync(join(rt.workspace, path), 'utf8');

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded' });
  ok(await rt.call('agent.spawn', { label: 'a', agentId: 'a' }));
  ok(await rt.call('agent.spawn', { label: 'b', agentId: 'b' }));
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
});

describe("a sibling's reject and another agent's later work on the same file", () => {
  it('keeps a file one agent created and its sibling then rewrote', async () => {
    ok(await rt.call('file.write', { path: 'made-by-a.txt', content: 'a made this\n' }, { agentId: 'a' }));
    ok(await rt.call('file.write', { path: 'made-by-a.txt', content: `${CANARY}\n` }, { agentId: 'b' }));
    const listed = ok(await rt.call('review.list', {}, { agentId: 'a' }));
    expect(JSON.stringify(listed)).not.toContain(CANARY);
    const rejected = ok(await rt.call('review.reject', {}, { agentId: 'a' }));
    expect(rejected['deleted']).toEqual([]);
    expect(read('made-by-a.txt')).toBe(`${CANARY}\n`);
  });

  it("keeps a sibling's rewrite of a file another agent had edited a line of", async () => {
    writeFileSync(join(rt.workspace, 'shared.txt'), 'l1\nl2\nl3\n');
    ok(await rt.call('file.edit', { path: 'shared.txt', edits: [{ oldText: 'l1', newText: 'A1' }] }, { agentId: 'a' }));
    ok(await rt.call('file.write', { path: 'shared.txt', content: `${CANARY}\n` }, { agentId: 'b' }));
    const listed = ok(await rt.call('review.list', { paths: [join(rt.workspace, 'shared.txt')] }, { agentId: 'a' }));
    expect(JSON.stringify(listed)).not.toContain(CANARY);
    const rejected = ok(await rt.call('review.reject', {}, { agentId: 'a' }));
    expect(rejected['restored']).toEqual([]);
    expect((rejected['conflicts'] as unknown[]).length).toBe(1);
    expect(read('shared.txt')).toBe(`${CANARY}\n`);
    // b's own review still has its change, whole.
    const mine = ok(await rt.call('review.list', {}, { agentId: 'b' }));
    expect(JSON.stringify(mine)).toContain(CANARY);
  });
});

describe("a child's reject that brings back its parent's line", () => {
  it("the parent's log lists it again (it was listed nowhere), and the parent can reject it", async () => {
    writeFileSync(join(rt.workspace, 'back.txt'), 'l1\nl2\nl3\n');
    ok(await rt.call('file.edit', { path: 'back.txt', edits: [{ oldText: 'l2', newText: 'MAIN2' }] }));
    ok(
      await rt.call('file.edit', { path: 'back.txt', edits: [{ oldText: 'MAIN2', newText: 'l2' }] }, { agentId: 'a' }),
    );
    ok(await rt.call('review.reject', { paths: [join(rt.workspace, 'back.txt')] }, { agentId: 'a' }));
    expect(read('back.txt')).toBe('l1\nMAIN2\nl3\n');
    expect(JSON.stringify(ok(await rt.call('review.list', {})))).toContain('+MAIN2');
    ok(await rt.call('review.reject', { paths: [join(rt.workspace, 'back.txt')] }));
    expect(read('back.txt')).toBe('l1\nl2\nl3\n');
  });
});
