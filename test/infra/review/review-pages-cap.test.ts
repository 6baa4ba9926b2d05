/**
 * A review.list page is at most MAX_PAGE_BYTES even under a raised payload limit (issue 13): a 3 MB page (a
 * 50k-line diff and its hunks) held the host's thread over 100 ms to check, encode and send. Paged through,
 * the files and every diff come back whole, small files first packed together as before.
 */
import { describe, expect, it } from 'vitest';
import { MAX_PAGE_BYTES, pageOfFiles } from '../../../infra/review/review-pages.ts';
import { reviewDiff } from '../../../machines/review/action-log-hunks.ts';
import type { FileReview } from '../../../schemas/review.ts';

const lines = (n: number, f: (i: number) => string) => `${Array.from({ length: n }, (_, i) => f(i)).join('\n')}\n`;
const file = (path: string, before: string, after: string): FileReview => ({
  path,
  status: 'modified',
  agents: ['main' as FileReview['agents'][number]],
  baseHash: 'a'.repeat(64) as FileReview['baseHash'],
  currentHash: 'b'.repeat(64) as FileReview['currentHash'],
  ...reviewDiff(path, before, after),
});

describe('review.list pages under a raised payload limit', () => {
  it('cuts pages at MAX_PAGE_BYTES, and the pages give back every file and diff whole', () => {
    const big = file(
      '/ws/many.ts',
      lines(50_000, (i) => `export const v${i} = ${i};`),
      lines(50_000, (i) => `export let w${i} = '${i}';`),
    );
    const small = ['/ws/a.ts', '/ws/b.ts'].map((p) => file(p, 'x\n', 'y\n'));
    const all = [big, ...small];
    const maxPayload = 32 * 1024 * 1024;
    const diffs = new Map<string, string>();
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = pageOfFiles(all, cursor, maxPayload);
      expect(Buffer.byteLength(JSON.stringify(page))).toBeLessThanOrEqual(MAX_PAGE_BYTES);
      for (const f of page.files) diffs.set(f.path, (diffs.get(f.path) ?? '') + f.diff);
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 100);
    expect(pages).toBeGreaterThan(2);
    // Ordered by path, as every listing.
    expect([...diffs]).toEqual([...small, big].map((f) => [f.path, f.diff]));
  });
});

describe('review.list cursors it never handed out', () => {
  const all = ['/ws/a.ts', '/ws/b.ts'].map((p) => file(p, 'x\n', 'y\n'));

  it.each([
    'x',
    '0',
    'AAAA',
    '\ud800',
    '',
    '\u0000',
    'ws/a.ts',
    '/ws/a.ts\u0000',
    '/ws/a.ts\u00000\u0000a\u0000b\u0000c',
  ])('refuses %j instead of answering that nothing is left', (cursor) => {
    expect(() => pageOfFiles(all, cursor, 1024 * 1024)).toThrow(
      'review.list cursor is not one review.list returned; omit it to start over',
    );
  });

  it('takes a path cursor even once that file has left the review (accepted between pages)', () => {
    expect(pageOfFiles(all, '/ws/0-gone.ts', 1024 * 1024).files.map((f) => f.path)).toEqual(['/ws/a.ts', '/ws/b.ts']);
    expect(pageOfFiles(all, '/ws/a.ts', 1024 * 1024).files.map((f) => f.path)).toEqual(['/ws/b.ts']);
  });
});
