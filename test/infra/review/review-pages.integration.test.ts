/**
 * A review bigger than one NATS message (max_payload 1 MiB on a real nats-server) comes back whole
 * through pages: before, the host's reply was dropped by the broker and the client waited for its
 * timeout. A single file too big for any page keeps its place, its diff replaced by a note.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FileReview } from '../../../schemas/review.ts';
import { call, callAllPages } from '../../../infra/transport/client.ts';
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
    // Every diff is complete except the one that cannot fit any message.
    for (const f of files.slice(0, 30)) {
      expect(f.diff.split('\n').filter((l) => l.startsWith('+') && !l.startsWith('+++'))).toHaveLength(1_000);
      expect(f.hunks).toHaveLength(1);
    }
    const last = files.at(-1)!;
    expect(last.hunks).toEqual([]);
    expect(last.diff).toContain('left out');
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
});
