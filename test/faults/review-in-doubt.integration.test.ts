/**
 * A review whose append failed in doubt (it timed out, and the log stored it after all) is finished while the
 * runtime serves, once the fact writer's re-read finds the fact: the files the log says were rejected are
 * restored, and review.list stops showing the change. Before, the log said "rejected" while the disk and
 * review.list kept the agent's change until the next start (a gap the durability review left open). A real runtime
 * and its real JSONL log; only the first answer of one append is lost, as a stalled broker loses it.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppendRequest, EventLog } from '../../infra/transport/event-log.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

/** Stores the first append of `type`, then answers it with a timeout. */
function losesFirstAnswer(type: string) {
  const lost = { done: false };
  const wrap = (log: EventLog): EventLog => ({
    kind: log.kind,
    async append(request: AppendRequest) {
      const result = await log.append(request);
      if (request.fact.type === type && !lost.done) {
        lost.done = true;
        throw new Error('TimeoutError: timeout');
      }
      return result;
    },
    read: (o) => log.read(o),
    scan: (o, visit) => log.scan(o, visit),
    lastSeq: (s) => log.lastSeq(s),
    close: () => log.close(),
  });
  return { wrap, lost };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The writer's own retry would find the stored fact (a duplicate) and succeed: the doubt must reach the review. */
const NO_RETRY = { log: { appendRetries: 0 } } as never;

let rt: TestRuntime | undefined;
afterEach(async () => {
  await rt?.dispose();
  rt = undefined;
});

const files = (reply: { ok: boolean } & Record<string, unknown>) =>
  (reply['files'] as Array<{ path: string }> | undefined)?.map((f) => f.path.split('/').pop()) ?? [];

describe('a review in doubt', () => {
  it('a reject stored after its append timed out restores the files while serving', async () => {
    const doubt = losesFirstAnswer('review.rejected');
    rt = await startTestRuntime({ mode: 'embedded', wrapLog: doubt.wrap, logLevel: 'info', flags: NO_RETRY });
    const file = join(rt.workspace, 'a.txt');
    const created = join(rt.workspace, 'new.txt');
    writeFileSync(file, 'base\n');
    expect((await rt.call('file.write', { path: 'a.txt', content: 'AGENT\n' })).ok).toBe(true);
    expect((await rt.call('file.write', { path: 'new.txt', content: 'made by the agent\n' })).ok).toBe(true);
    expect(files(await rt.call('review.list', {})).sort()).toEqual(['a.txt', 'new.txt']);

    const rejected = await rt.call('review.reject', {});
    // The caller is told the reject failed (it cannot know yet whether it happened)...
    expect(doubt.lost.done).toBe(true);
    expect(rejected.ok).toBe(false);
    // ...and once the writer's re-read finds the fact in the log, the disk and the listing agree with it.
    await until('the file restored', () => readFileSync(file, 'utf8') === 'base\n');
    await until('the created file deleted', () => !existsSync(created));
    await until('review.list empty', async () => files(await rt!.call('review.list', {})).length === 0);
    expect(rt.logs.some((l) => String(l['msg']).includes('is finished'))).toBe(true);
    const journal = join(rt.dir, 'data', 'review-journal');
    expect(existsSync(journal) ? readdirSync(journal) : []).toEqual([]);

    // The undo works on it as on any reject (a created file is not re-created): live state and log agree.
    const undo = await rt.call('review.undo-reject', {});
    expect(undo).toMatchObject({ ok: true, notRestorable: [{ path: created }] });
    expect(readFileSync(file, 'utf8')).toBe('AGENT\n');
  }, 30_000);

  it('an accept stored after its append timed out leaves review.list while serving', async () => {
    const doubt = losesFirstAnswer('review.accepted');
    rt = await startTestRuntime({ mode: 'embedded', wrapLog: doubt.wrap, flags: NO_RETRY });
    writeFileSync(join(rt.workspace, 'b.txt'), 'base\n');
    expect((await rt.call('file.write', { path: 'b.txt', content: 'AGENT\n' })).ok).toBe(true);
    const accepted = await rt.call('review.accept', {});
    expect(doubt.lost.done).toBe(true);
    expect(accepted.ok).toBe(false);
    await until('review.list empty', async () => files(await rt!.call('review.list', {})).length === 0);
    expect(readFileSync(join(rt.workspace, 'b.txt'), 'utf8')).toBe('AGENT\n');
  }, 30_000);
});
