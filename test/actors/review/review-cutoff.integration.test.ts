/**
 * review.list of big changes (issue 13): a file over REVIEW_DIFF_CUTOFF_BYTES is listed without its diff
 * (diffLeftOut, a note naming how to get it) while small files keep theirs; asked for by path in full, the
 * same file comes back complete, diff and hunks equal to what the plain diff gives, computed on the diff
 * thread; an unknown path is an error that names it. Real files, a real blob store and a real worker.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiffThread } from '../../../actors/edit/diff-thread.ts';
import { ActionLogService, REVIEW_DIFF_CUTOFF_BYTES } from '../../../actors/review/action-log.ts';
import { reviewDiff } from '../../../machines/review/action-log-hunks.ts';
import { NotFoundError } from '../../../schemas/errors.ts';
import { type Fixture, makeFixture, recordWrite } from '../../support/action-log-fs.ts';
import { memoryLogger } from '../../support/log-sink.ts';

const lines = (n: number, f: (i: number) => string) => `${Array.from({ length: n }, (_, i) => f(i)).join('\n')}\n`;

describe('review.list of big changes', () => {
  let f: Fixture;
  let diffs: DiffThread;
  let service: ActionLogService;
  beforeEach(() => {
    f = makeFixture();
    diffs = new DiffThread(memoryLogger().logger);
    service = new ActionLogService({ blobs: f.blobs, emit: async () => {}, reviewDiff: diffs.review });
  });
  afterEach(async () => {
    await diffs.close();
    f.cleanup();
  });

  const change = (rel: string, before: string | null, after: string) => recordWrite(f, service, rel, before, after);

  it('leaves out the diff of a file over the cut-off, and gives it complete when asked for in full', async () => {
    const base = lines(40_000, (i) => `export const v${i} = ${i};`);
    const current = base.replace('export const v20000 = 20000;', 'export const v20000 = 0;');
    expect(Buffer.byteLength(base) + Buffer.byteLength(current)).toBeGreaterThan(REVIEW_DIFF_CUTOFF_BYTES);
    await change('big.ts', base, current);
    await change('small.ts', 'a\n', 'b\n');

    const plain = await service.list('main');
    const big = plain.files.find((x) => x.path === f.p('big.ts'))!;
    expect(big).toMatchObject({ status: 'modified', hunks: [], diffLeftOut: true });
    expect(big.diff).toContain(`review.list {"paths":[${JSON.stringify(f.p('big.ts'))}],"full":true}`);
    const small = plain.files.find((x) => x.path === f.p('small.ts'))!;
    expect({ diff: small.diff, hunks: small.hunks }).toEqual(reviewDiff(f.p('small.ts'), 'a\n', 'b\n'));
    expect(small.diffLeftOut).toBeUndefined();
    expect(diffs.running).toBe(false);

    const full = await service.list('main', { paths: [f.p('big.ts')], full: true });
    // The same entry, now with its diff and hunks (toEqual: an undefined diffLeftOut is an absent one).
    expect(full.files).toEqual([{ ...big, ...reviewDiff(f.p('big.ts'), base, current), diffLeftOut: undefined }]);
    expect(full.files[0]!.diff).toContain('-export const v20000 = 20000;\n+export const v20000 = 0;');
    expect(diffs.running).toBe(true);
  });

  it('refuses a path that is not in the log, naming it', async () => {
    await change('small.ts', 'a\n', 'b\n');
    await expect(service.list('main', { paths: [f.p('nope.ts')] })).rejects.toThrow(NotFoundError);
    await expect(service.list('main', { paths: [f.p('nope.ts')] })).rejects.toThrow(/nope\.ts/);
  });
});
