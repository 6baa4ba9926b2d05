/**
 * The console's review store joins a diff that came in parts (review-pages.ts) into one entry. It used to keep
 * only the diff, hunks and range of each later part, so the last part's `hunkLinesLeftOut` was lost: the page
 * drew the hunks' headers with no lines and no whole diff, yet its Accept was on (found by a review helper,
 * 5 December). The joined entry now is the last part's, with the whole diff.
 */
import { describe, expect, it } from 'vitest';
import { pageOfFiles } from '../../../infra/review/review-pages.ts';
import type { ConsoleBus } from '../../../infra/ui/web/bus.ts';
import { acceptFiles, diffShown } from '../../../infra/ui/web/review.ts';
import { Store } from '../../../infra/ui/web/store.ts';
import { reviewDiff } from '../../../machines/review/action-log-hunks.ts';
import type { FileReview } from '../../../schemas/review.ts';

/** A bus whose review.list pages `files` as the host does (1 MiB a page). */
function busOf(files: FileReview[]): ConsoleBus {
  return {
    root: 'main',
    async call(_agentId: string, type: string, data?: Record<string, unknown>) {
      if (type === 'review.list') {
        const page = pageOfFiles(files, data?.['cursor'] as string | undefined, 1024 * 1024);
        return { files: page.files, undoAvailable: false, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
      }
      if (type === 'agent.tree') return { agents: [] };
      if (type === 'permission.pending') return { requests: [] };
      return {};
    },
  } as unknown as ConsoleBus;
}

describe('console review store', () => {
  it('joins a diff sent in parts into one entry that keeps the last part’s fields and the whole diff', async () => {
    const content = `${Array.from({ length: 40_000 }, (_, i) => `line ${i} ${'x'.repeat(30)}`).join('\n')}\n`;
    const { diff, hunks } = reviewDiff('/w/big.txt', null, content);
    const file = {
      path: '/w/big.txt',
      status: 'created',
      agents: ['main'],
      baseHash: null,
      currentHash: 'c'.repeat(64),
      diff,
      hunks,
    } as FileReview;
    const store = new Store(busOf([file]));
    await store.refresh();
    expect(store.snapshot.files).toHaveLength(1);
    const joined = store.snapshot.files[0]!;
    expect(joined.diff).toBe(diff);
    expect(joined.diffPart?.end).toBe(joined.diffPart?.total);
    // The hunks' lines did not fit: the page must draw the whole diff, which it does only when told so.
    expect(joined.hunkLinesLeftOut).toBe(true);
    expect(joined.currentHash).toBe('c'.repeat(64));
    expect(diffShown(joined)).toBe(true);
    expect(acceptFiles([joined])).toEqual({ paths: ['/w/big.txt'], seen: { '/w/big.txt': 'c'.repeat(64) } });
  });
});
