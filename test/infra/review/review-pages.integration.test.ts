/**
 * A review bigger than one NATS message (max_payload 1 MiB on a real nats-server) comes back whole
 * through pages: before, the host's reply was dropped by the broker and the client waited for its
 * timeout. A single file too big for any page comes in parts, one per page, and is joined whole by
 * callAllPages (before, its diff was replaced by a note); asked for by path in full, a diff over 1 MiB
 * (escapes, non-ASCII, surrogate pairs) comes back byte-identical to the diff the host computes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileReview } from '../../../schemas/review.ts';
import { reviewDiff } from '../../../machines/review/action-log-hunks.ts';
import { call, callAllPages } from '../../../infra/transport/client.ts';
import type { Reply } from '../../../infra/transport/codec.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';

let nats: TestNats;
let rt: TestRuntime;
beforeAll(async () => {
  nats = await startTestNats();
  rt = await startTestRuntime({ mode: 'networked', natsUrl: nats.url });
}, 60_000);
afterAll(async () => {
  await rt?.dispose();
  await nats?.dispose();
});

/** The reply of a call that must succeed, typed for its fields. */
function ok(reply: Reply): Record<string, unknown> {
  if (!reply.ok) throw new Error(`call failed: ${JSON.stringify(reply).slice(0, 300)}`);
  return reply;
}

const body = (tag: string, lines: number) =>
  `${Array.from({ length: lines }, (_, i) => `${tag} line ${i} ${'z'.repeat(40)}`).join('\n')}\n`;

describe('review.list pages', () => {
  it('returns a review of several MiB complete, each page within one message', async () => {
    const expected: string[] = [];
    for (let i = 0; i < 30; i++) {
      const path = `f${String(i).padStart(2, '0')}.txt`;
      const reply = await rt.call('file.write', { path, content: body(`file${i}`, 1_000) });
      expect(reply.ok, JSON.stringify(reply).slice(0, 300)).toBe(true);
      expected.push(`${rt.workspace}/${path}`);
    }
    // One file whose diff alone is over the limit (its hunks too): it must not stall paging.
    const huge = await rt.call('file.write', { path: 'zz-huge.txt', content: body('huge', 9_000) });
    expect(huge.ok).toBe(true);
    expected.push(`${rt.workspace}/zz-huge.txt`);

    const first = await call(rt.bus, 'main', 'review.list', {}, { timeoutMs: 10_000 });
    expect(first.ok, JSON.stringify(first).slice(0, 300)).toBe(true);
    if (!first.ok) return;
    expect(typeof first['nextCursor']).toBe('string');

    let pages = 0;
    let biggest = 0;
    const sizes: number[] = [];
    const all = await callAllPages(rt.bus, 'main', 'review.list', {}, { timeoutMs: 10_000 });
    expect(all.ok).toBe(true);
    if (!all.ok) return;
    const files = all['files'] as FileReview[];
    expect(files.map((f) => f.path)).toEqual(expected);
    // Every diff is complete, the one too big for any message too (sent in parts, joined).
    for (const f of files.slice(0, 30)) {
      expect(f.diff.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++'))).toHaveLength(1_000);
      expect(f.hunks).toHaveLength(1);
    }
    const last = files.at(-1)!;
    const want = reviewDiff(`${rt.workspace}/zz-huge.txt`, null, body('huge', 9_000));
    expect(Buffer.byteLength(JSON.stringify(want))).toBeGreaterThan(1024 * 1024);
    expect({ diff: last.diff, hunks: last.hunks }).toEqual(want);
    expect(last.diffPart).toBeUndefined();
    expect(all['nextCursor']).toBeUndefined();
    // Walk the pages by hand to measure them.
    let cursor: string | undefined;
    do {
      const page = await call(rt.bus, 'main', 'review.list', cursor ? { cursor } : {}, { timeoutMs: 10_000 });
      expect(page.ok).toBe(true);
      if (!page.ok) return;
      const size = Buffer.byteLength(JSON.stringify(page));
      sizes.push(size);
      biggest = Math.max(biggest, size);
      pages++;
      cursor = page['nextCursor'] as string | undefined;
    } while (cursor);
    const total = sizes.reduce((a, b) => a + b, 0);
    console.log(`review.list: ${total} bytes in ${pages} pages, biggest ${biggest}`);
    expect(total).toBeGreaterThan(2 * 1024 * 1024);
    expect(pages).toBeGreaterThan(2);
    expect(biggest).toBeLessThanOrEqual(1024 * 1024);
  }, 120_000);

  it('gives a diff over 1 MiB asked for in full, in parts that join byte-identical', async () => {
    // Characters JSON escapes (quotes, backslashes, tabs), non-ASCII and astral ones (surrogate pairs) on every
    // line, so the parts' cuts are measured in escaped bytes and never split a pair.
    const line = (i: number, tag: string) => `${tag} ${i}\t"q" \\ é ✓ 𝄞 ${'w'.repeat(30 + (i % 7))}`;
    const text = (n: number, tag: string) => `${Array.from({ length: n }, (_, i) => line(i, tag)).join('\n')}\n`;
    const base = text(12_000, 'old');
    const current = text(12_000, 'new');
    expect((await rt.call('file.write', { path: 'big.txt', content: base })).ok).toBe(true);
    // Accept the creation, so the review shows the rewrite against this base.
    expect((await rt.call('review.accept', { paths: [`${rt.workspace}/big.txt`] })).ok).toBe(true);
    expect((await rt.call('file.write', { path: 'big.txt', content: current })).ok).toBe(true);
    const path = `${rt.workspace}/big.txt`;
    const want = reviewDiff(path, base, current);
    // Each write fits one message; the diff (every line removed and added) does not.
    expect(Buffer.byteLength(JSON.stringify(want.diff))).toBeGreaterThan(1.5 * 1024 * 1024);

    // A plain listing leaves it out (over the 1 MiB cut-off), saying how to ask.
    const plain = ok(await callAllPages(rt.bus, 'main', 'review.list', {}, { timeoutMs: 30_000 }));
    const listed = (plain['files'] as FileReview[]).find((f) => f.path === path);
    expect(listed).toMatchObject({ diffLeftOut: true, hunks: [] });

    // Page by page: each part fits a message and says which characters it holds.
    const parts: FileReview[] = [];
    let cursor: string | undefined;
    do {
      const data = { paths: [path], full: true, ...(cursor ? { cursor } : {}) };
      const page = ok(await call(rt.bus, 'main', 'review.list', data, { timeoutMs: 30_000 }));
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(1024 * 1024);
      parts.push(...(page['files'] as FileReview[]));
      cursor = page['nextCursor'] as string | undefined;
    } while (cursor);
    expect(parts.length).toBeGreaterThanOrEqual(2);
    expect(parts.every((p) => p.path === path)).toBe(true);
    expect(parts.map((p) => p.diffPart?.start)).toEqual([0, ...parts.slice(0, -1).map((p) => p.diffPart?.end)]);
    expect(parts.at(-1)!.diffPart?.end).toBe(want.diff.length);
    expect(Buffer.from(parts.map((p) => p.diff).join(''))).toEqual(Buffer.from(want.diff));

    const all = ok(
      await callAllPages(rt.bus, 'main', 'review.list', { paths: [path], full: true }, { timeoutMs: 30_000 }),
    );
    const [joined] = all['files'] as FileReview[];
    expect(Buffer.from(joined!.diff)).toEqual(Buffer.from(want.diff));
    expect(joined).toMatchObject({ path, status: 'modified' });
    // The hunks do not fit one message with their lines: ids and ranges, their lines are the diff's.
    expect(joined!.hunkLinesLeftOut).toBe(true);
    expect(joined!.hunks).toEqual(want.hunks.map((h) => ({ ...h, lines: [] })));
    expect(joined!.diffPart).toBeUndefined();
  }, 180_000);
});
