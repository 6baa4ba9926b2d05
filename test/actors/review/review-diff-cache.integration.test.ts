/**
 * Big review diffs are kept between listings (issue 13): every page of a diff sent in parts lists the log again,
 * and the whole diff of a big file was computed once per page. Paged through as the wiring pages it, the diff
 * put together is the one the plain diff gives, computed once; a change to the file is a new diff, not the kept
 * one; the cache keeps a bounded number of entries and no failed computation. Real files, blob store and worker.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiffThread } from '../../../actors/edit/diff-thread.ts';
import { ActionLogService } from '../../../actors/review/action-log.ts';
import { ReviewDiffCache } from '../../../actors/review/review-diff-cache.ts';
import type { ReviewDiffer } from '../../../actors/review/review-listing.ts';
import { reviewDiff } from '../../../machines/review/action-log-hunks.ts';
import { pageOfFiles } from '../../../infra/review/review-pages.ts';
import { type Fixture, makeFixture, recordWrite } from '../../support/action-log-fs.ts';
import { memoryLogger } from '../../support/log-sink.ts';

const lines = (n: number, f: (i: number) => string) => `${Array.from({ length: n }, (_, i) => f(i)).join('\n')}\n`;

describe('review diffs kept between listings', () => {
  let f: Fixture;
  let diffs: DiffThread;
  let service: ActionLogService;
  let computed: string[];
  beforeEach(() => {
    f = makeFixture();
    diffs = new DiffThread(memoryLogger().logger);
    computed = [];
    const counted: ReviewDiffer = (path, load) => {
      computed.push(path);
      return diffs.review(path, load);
    };
    service = new ActionLogService({ blobs: f.blobs, emit: async () => {}, reviewDiff: counted });
  });
  afterEach(async () => {
    await diffs.close();
    f.cleanup();
  });

  const change = (rel: string, before: string | null, after: string) => recordWrite(f, service, rel, before, after);

  /** Every page of the listing of `path`, as review.list pages it, the diff parts put together. */
  async function paged(path: string): Promise<{ diff: string; hunks: unknown; pages: number; linesLeftOut: boolean }> {
    let cursor: string | undefined;
    let diff = '';
    let hunks: unknown;
    let pages = 0;
    let linesLeftOut = false;
    do {
      const list = await service.list('main', { paths: [path], full: true });
      const page = pageOfFiles(list.files, cursor, 64 * 1024);
      for (const file of page.files) {
        diff += file.diff;
        hunks = file.hunks;
        linesLeftOut ||= file.hunkLinesLeftOut === true;
      }
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    return { diff, hunks, pages, linesLeftOut };
  }

  /** The plain diff, its hunks' lines left out as the last page leaves them out when they do not fit. */
  function plain(path: string, base: string, current: string, linesLeftOut: boolean) {
    const d = reviewDiff(path, base, current);
    return linesLeftOut ? { diff: d.diff, hunks: d.hunks.map((h) => ({ ...h, lines: [] })) } : d;
  }

  it('gives every page of a big diff from one computation, put together the same as the plain diff', async () => {
    const base = lines(20_000, (i) => `export const v${i} = ${i};`);
    const current = lines(20_000, (i) => `export let w${i} = '${i}';`);
    await change('many.ts', base, current);
    const path = f.p('many.ts');
    const got = await paged(path);
    expect(got.pages).toBeGreaterThan(5);
    expect({ diff: got.diff, hunks: got.hunks }).toEqual(plain(path, base, current, got.linesLeftOut));
    expect(computed).toEqual([path]);

    // Changed again: a new diff (the kept one is of the old sides), computed once for all its pages.
    const again = lines(20_000, (i) => `export var x${i} = ${i};`);
    await change('many.ts', current, again);
    const next = await paged(path);
    expect({ diff: next.diff, hunks: next.hunks }).toEqual(plain(path, base, again, next.linesLeftOut));
    expect(computed).toEqual([path, path]);
  }, 120_000);
});

describe('ReviewDiffCache', () => {
  const diff = (text: string) => ({ diff: text, hunks: [] });

  it('keeps a diff per path and sides, shares one being computed, and keeps no failure', async () => {
    const cache = new ReviewDiffCache(2, 100);
    let runs = 0;
    const compute = (text: string) => () => {
      runs++;
      return Promise.resolve(diff(text));
    };
    const [a, b] = await Promise.all([
      cache.get('/p', 'h1', 'h2', compute('x')),
      cache.get('/p', 'h1', 'h2', compute('y')),
    ]);
    expect([a, b, runs]).toEqual([diff('x'), diff('x'), 1]);
    expect(await cache.get('/p', 'h1', 'h3', compute('z'))).toEqual(diff('z'));
    expect(await cache.get('/q', 'h1', 'h2', compute('w'))).toEqual(diff('w'));
    expect(runs).toBe(3);
    // Two entries at most: /p h1→h2 was the least recently used, so it is computed again.
    expect(cache.size).toBe(2);
    expect(await cache.get('/p', 'h1', 'h2', compute('x2'))).toEqual(diff('x2'));
    await expect(cache.get('/f', null, 'h', () => Promise.reject(new Error('worker died')))).rejects.toThrow(
      'worker died',
    );
    expect(await cache.get('/f', null, 'h', compute('ok'))).toEqual(diff('ok'));
  });

  it('keeps no more characters than its bound', async () => {
    const cache = new ReviewDiffCache(10, 100);
    await cache.get('/a', null, 'h', () => Promise.resolve(diff('a'.repeat(60))));
    await cache.get('/b', null, 'h', () => Promise.resolve(diff('b'.repeat(60))));
    expect(cache.size).toBe(1);
    await cache.get('/c', null, 'h', () => Promise.resolve(diff('c'.repeat(500))));
    expect(cache.size).toBe(0);
  });
});
