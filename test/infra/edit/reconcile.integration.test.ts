/**
 * Intent before effect, reconciled at start (real embedded runtime, real files, two starts on one data dir).
 * The log is left as a host killed mid-write leaves it: `edit.started` and `edit.writing` with no outcome,
 * the disk holding the new bytes (the rename happened), the old ones (it did not), or something else, and a
 * temp file of the atomic write beside the target. The next start closes each with `edit.abandoned` saying
 * what it found, puts every file that differs from its base in review (reject restores the base), removes the
 * temp files, and a retry of the crashed command id is `in_doubt`.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentId, StoredFact } from '../../../schemas/index.ts';
import { ok } from '../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';
import { tempDir } from '../../support/temp-dir.ts';

async function countOf(runtime: TestRuntime, type: string): Promise<number> {
  let n = 0;
  await runtime.log.scan({}, (f) => void (f.type === type && n++));
  return n;
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const temp = tempDir('skein-reconcile-');
let rt: TestRuntime | undefined;

afterAll(async () => {
  await rt?.dispose();
  temp.dispose();
});

describe('edits in flight when the host died', () => {
  it('closes each with what the disk holds, puts changed files in review, removes temp files', async () => {
    rt = await startTestRuntime({ mode: 'embedded', dir: temp.path });
    const ws = rt.workspace;
    ok(await rt.call('file.write', { path: 'renamed.txt', content: 'old\n' }));
    ok(await rt.call('file.write', { path: 'kept.txt', content: 'keep\n' }));
    ok(await rt.call('file.write', { path: 'other.txt', content: 'base\n' }));
    ok(await rt.call('file.write', { path: 'applied.txt', content: 'before\n' }));
    ok(await rt.call('review.accept', {}));
    // What a host killed between edit.writing and edit.applied leaves, for four writes.
    const crash = async (editId: string, name: string, base: string | null, result: string, commandId: string) => {
      const o = { agentId: 'main' as AgentId, causationId: commandId };
      const path = join(ws, name);
      await rt!.host.emit(
        { type: 'edit.started', data: { editId, path, mode: 'write', streaming: false, baseHash: base && sha(base) } },
        { ...o, id: `main/${commandId}:0` },
      );
      await rt!.host.emit(
        { type: 'edit.writing', data: { editId, path, baseHash: base && sha(base), resultHash: sha(result) } },
        { ...o, id: `main/${commandId}:1` },
      );
    };
    await crash('e-renamed', 'renamed.txt', 'old\n', 'new\n', 'crash-1');
    await crash('e-kept', 'kept.txt', 'keep\n', 'never\n', 'crash-2');
    await crash('e-other', 'other.txt', 'base\n', 'intended\n', 'crash-3');
    await crash('e-created', 'created.txt', null, 'fresh\n', 'crash-4');
    // Killed after edit.applied, before its action-log record: the change must still reach review.
    await crash('e-applied', 'applied.txt', 'before\n', 'after\n', 'crash-5');
    await rt.host.emit(
      {
        type: 'edit.applied',
        data: {
          editId: 'e-applied',
          path: join(ws, 'applied.txt'),
          mode: 'write',
          baseHash: sha('before\n'),
          resultHash: sha('after\n'),
          created: false,
          diff: '',
          linesAdded: 1,
          linesRemoved: 1,
          edits: [],
          partial: false,
          lineEnding: 'lf',
          bom: false,
        },
      },
      { agentId: 'main' as AgentId, causationId: 'crash-5', id: 'main/crash-5:2' },
    );
    writeFileSync(join(ws, 'applied.txt'), 'after\n');
    writeFileSync(join(ws, 'renamed.txt'), 'new\n');
    writeFileSync(join(ws, '.renamed.txt.skein-4242-0badc0de.tmp'), 'new\n');
    writeFileSync(join(ws, '.kept.txt.skein-4242-deadbeef.tmp'), 'nev');
    writeFileSync(join(ws, 'other.txt'), 'someone else\n');
    writeFileSync(join(ws, 'created.txt'), 'fresh\n');
    // A file that merely looks like a temp file of another name stays.
    writeFileSync(join(ws, '.unrelated.txt.skein-1-00000000.tmp'), 'mine');
    await rt.dispose();

    rt = await startTestRuntime({ mode: 'embedded', dir: temp.path });
    const facts: StoredFact[] = [];
    await rt.log.scan({}, (f) => void facts.push(f));
    const abandoned = facts
      .filter((f) => f.type === 'edit.abandoned')
      .map((f) => {
        const d = f.data as Record<string, unknown>;
        return [d['editId'], d['disk'], d['recorded'], d['tempFilesRemoved'], d['diskHash']];
      });
    expect(abandoned).toEqual([
      ['e-renamed', 'written', true, 1, sha('new\n')],
      ['e-kept', 'unchanged', false, 1, sha('keep\n')],
      ['e-other', 'changed', true, 0, sha('someone else\n')],
      ['e-created', 'written', true, 0, sha('fresh\n')],
    ]);
    expect(readdirSync(ws).filter((n) => n.endsWith('.tmp'))).toEqual(['.unrelated.txt.skein-1-00000000.tmp']);

    // Every file that differs from its base is in review; rejecting restores the bases.
    const files = ok(await rt.call('review.list', {}))['files'] as Array<{ path: string }>;
    expect(files.map((f) => f.path).sort()).toEqual(
      [join(ws, 'applied.txt'), join(ws, 'created.txt'), join(ws, 'other.txt'), join(ws, 'renamed.txt')].sort(),
    );
    const paths = [join(ws, 'renamed.txt'), join(ws, 'created.txt'), join(ws, 'applied.txt')];
    ok(await rt.call('review.reject', { paths }));
    expect(readFileSync(join(ws, 'renamed.txt'), 'utf8')).toBe('old\n');
    expect(readFileSync(join(ws, 'applied.txt'), 'utf8')).toBe('before\n');
    expect(existsSync(join(ws, 'created.txt'))).toBe(false);

    // The crashed command's retry: its outcome is not in the log, so in_doubt, and nothing runs again.
    const retry = await rt.call('file.write', { path: 'kept.txt', content: 'never\n' }, { id: 'crash-2' });
    expect(retry).toMatchObject({ ok: false, error: { code: 'in_doubt', retryable: false } });
    expect(readFileSync(join(ws, 'kept.txt'), 'utf8')).toBe('keep\n');

    // The applied one's retry gets its reply, rebuilt from edit.applied.
    const rebuilt = ok(await rt.call('file.write', { path: 'applied.txt', content: 'after\n' }, { id: 'crash-5' }));
    expect(rebuilt).toMatchObject({ editId: 'e-applied', path: 'applied.txt', created: false });

    // A third start finds nothing left to reconcile.
    const recordedBefore = (await countOf(rt, 'action-log.change.recorded')) as number;
    await rt.dispose();
    rt = await startTestRuntime({ mode: 'embedded', dir: temp.path });
    expect(await countOf(rt, 'edit.abandoned')).toBe(4);
    expect(await countOf(rt, 'action-log.change.recorded')).toBe(recordedBefore);
  }, 60_000);
});
