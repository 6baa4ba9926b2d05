/**
 * Issue 13, "make the outcome land in the same append as its action-log record": a host killed at any point
 * leaves a prefix of the log (the embedded log cuts a torn last line on open; JetStream stores whole messages),
 * so the window between `edit.applied` and its records is closed when every prefix that holds an
 * `edit.applied` also holds the records of that change in every log of the lineage. This replays each such
 * prefix, cut right after the outcome (where a SIGKILL between two appends would have left it), in both
 * modes. On the code that appended the records separately, every one of those prefixes lacked them.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { subjectFor, type StoredFact } from '../../schemas/index.ts';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replay } from '../../infra/kernel/replay.ts';
import { carriedFacts } from '../../infra/kernel/fact-writer.ts';
import type { ActionLogContext } from '../../machines/review/action-log.ts';
import { startNetworkedRuntime, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { ok } from '../support/replies.ts';

const runtimes: TestRuntime[] = [];
afterAll(async () => {
  for (const rt of runtimes) await rt.dispose();
});

const logSubject = (agentId: string) =>
  subjectFor({ kind: 'evt', agentId, aggregate: 'action-log', aggregateId: agentId });

async function factsOf(rt: TestRuntime): Promise<StoredFact[]> {
  const facts: StoredFact[] = [];
  await rt.log.scan({}, (f) => void facts.push(f));
  return facts;
}

/** Edits by a grandchild (three logs in its lineage) and a sibling's log tracking the same file. */
async function workload(rt: TestRuntime): Promise<void> {
  writeFileSync(join(rt.workspace, 'base.txt'), 'one\ntwo\nthree\n');
  ok(await rt.call('agent.spawn', { label: 'lead', agentId: 'lead' }));
  ok(await rt.call('agent.spawn', { label: 'worker', agentId: 'worker' }, { agentId: 'lead' }));
  ok(await rt.call('agent.spawn', { label: 'other', agentId: 'other' }));
  // The sibling changes the first line of a file; the worker's change of the last folds into the sibling's log.
  writeFileSync(join(rt.workspace, 'shared.txt'), 'a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n');
  ok(
    await rt.call(
      'file.edit',
      { path: 'shared.txt', edits: [{ oldText: 'a\n', newText: 'A\n' }] },
      { agentId: 'other' },
    ),
  );
  ok(
    await rt.call(
      'file.edit',
      { path: 'base.txt', edits: [{ oldText: 'two', newText: 'TWO' }] },
      { agentId: 'worker' },
    ),
  );
  ok(await rt.call('file.write', { path: 'new.txt', content: 'created\n' }, { agentId: 'worker' }));
  ok(
    await rt.call(
      'file.edit',
      { path: 'shared.txt', edits: [{ oldText: 'j\n', newText: 'J\n' }] },
      { agentId: 'worker' },
    ),
  );
  const begun = ok(await rt.call('edit.begin', { path: 'base.txt' }, { agentId: 'worker' }));
  const editId = String(begun['editId']);
  const body = JSON.stringify({ edits: [{ old_text: 'three', new_text: 'THREE' }] });
  ok(await rt.call('edit.input', { editId, chunk: body }, { agentId: 'worker' }));
  ok(await rt.call('edit.finish', { editId }, { agentId: 'worker' }));
}

const lineage: Record<string, string[]> = { worker: ['worker', 'lead', 'main'], other: ['other', 'main'] };

describe.each([
  ['embedded', () => startTestRuntime({ mode: 'embedded' })],
  ['jetstream', () => startNetworkedRuntime()],
] as const)('an edit outcome and its action-log records (%s)', (_mode, start) => {
  it('are in one append: every log prefix holding edit.applied shows the change in review', async () => {
    const rt = await start();
    runtimes.push(rt);
    await workload(rt);
    const facts = await factsOf(rt);
    const applied = facts.flatMap((f, i) => (f.type === 'edit.applied' ? [i] : []));
    expect(applied).toHaveLength(5);
    for (const i of applied) {
      const outcome = facts[i]!;
      const d = outcome.data as { path: string; resultHash: string; baseHash: string | null };
      // A kill right after this append: the log ends here.
      const { fold } = await replay(
        (async function* () {
          yield* facts.slice(0, i + 1);
        })(),
        AGGREGATES,
      );
      for (const log of lineage[outcome.agentId]!) {
        const ctx = fold.get(logSubject(log))?.context as ActionLogContext | undefined;
        expect(ctx?.files[d.path]?.currentHash, `${log}'s log at seq ${outcome.seq} (${d.path})`).toBe(d.resultHash);
      }
    }
    // The sibling tracking shared.txt saw the worker's edit as an outside change, in that same append.
    const shared = facts.filter(
      (f) => f.type === 'edit.applied' && String((f.data as { path: string }).path).endsWith('shared.txt'),
    );
    const types = (shared[1]!.data as { records?: Array<{ type: string; data: { agentId: string } }> }).records?.map(
      (r) => [r.type, r.data.agentId],
    );
    expect(types).toEqual([
      ['action-log.change.recorded', 'worker'],
      ['action-log.change.recorded', 'worker'],
      ['action-log.change.recorded', 'worker'],
      ['action-log.files.updated', 'other'],
    ]);
    // Nothing of the edits' records is appended on its own any more; the live state equals a replay's.
    expect(facts.filter((f) => f.type === 'action-log.change.recorded')).toEqual([]);
    const status = ok(await rt.call('runtime.status'));
    expect((await replay(rt.log.read(), AGGREGATES)).digest).toBe(status['digest']);
    // The same history with the records appended on their own (as logs written before this were) replays
    // to the same digest: carrying them changes where they are stored, not what they mean.
    let seq = 0;
    const split = facts.flatMap((f) => {
      const { records, ...data } = f.data as { records?: unknown };
      const own = { ...f, data, seq: ++seq };
      return [own, ...carriedFacts(f).map((c) => ({ ...c, seq: ++seq }))];
    });
    expect(split.length).toBeGreaterThan(facts.length);
    const replayedSplit = await replay(
      (async function* () {
        yield* split;
      })(),
      AGGREGATES,
    );
    expect(replayedSplit.digest).toBe(status['digest']);
    // review.list comes from the carried records.
    const listed = ok(await rt.call('review.list', {}, { agentId: 'lead' }));
    expect((listed['files'] as Array<{ path: string }>).map((f) => f.path.replace(rt.workspace, '.'))).toEqual([
      './base.txt',
      './new.txt',
      './shared.txt',
    ]);
  }, 60_000);
});
