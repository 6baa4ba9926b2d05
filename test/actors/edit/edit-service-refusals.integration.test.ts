/**
 * An edit whose records cannot be kept: the reply says what the disk holds. A blob store too full for the new
 * bytes refuses before the file is written (it refused after, saying nothing was written while it was); a log
 * that refuses `edit.applied` after the write gets a reply saying the file was written, not to be retried blind.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { EditService } from '../../../actors/edit/edit-service.ts';
import type { EditFact } from '../../../schemas/edit.ts';
import { ErrorCode, RuntimeError } from '../../../schemas/errors.ts';
import { facts, failure, file, sha, useEditService, ws } from './edit-service-fixture.ts';

useEditService();

const full = () =>
  new RuntimeError(ErrorCode.Unavailable, 'the disk is full; nothing was acknowledged', { retryable: true });

describe('an edit whose record cannot be kept', () => {
  it('a blob store that cannot keep the new bytes refuses before the file changes', async () => {
    writeFileSync(file('a.ts'), 'const a = 1;\n');
    const after = 'const a = 2;\n';
    const refusing = new EditService({
      workspaceRoots: { a1: [ws] },
      maxFileBytes: 1_000_000,
      storeBlob: (hash) => {
        if (hash === sha(after)) throw full();
      },
    });
    const err = await failure(
      refusing.edit(
        { agentId: 'a1', emit: async (f: EditFact) => void facts.push(f) },
        {
          path: 'a.ts',
          edits: [{ oldText: 'const a = 1;', newText: 'const a = 2;' }],
        },
      ),
    );
    expect(err.code).toBe('unavailable');
    expect(err.retryable).toBe(true);
    expect(readFileSync(file('a.ts'), 'utf8')).toBe('const a = 1;\n');
    // No intent to write was logged: the disk and the log agree that nothing happened.
    expect(facts.map((f) => f.type)).not.toContain('edit.writing');
    expect(facts.at(-1)).toMatchObject({ type: 'edit.failed', data: { appliedCount: 0 } });
  });

  it('a log refusing edit.applied after the write: the reply and edit.failed say the file was written', async () => {
    writeFileSync(file('b.ts'), 'let b = 1;\n');
    const emit = async (f: EditFact) => {
      if (f.type === 'edit.applied') throw full();
      facts.push(f);
    };
    const service = new EditService({ workspaceRoots: { a1: [ws] }, maxFileBytes: 1_000_000 });
    const err = await failure(
      service.edit(
        { agentId: 'a1', emit },
        { path: 'b.ts', edits: [{ oldText: 'let b = 1;', newText: 'let b = 2;' }] },
      ),
    );
    expect(readFileSync(file('b.ts'), 'utf8')).toBe('let b = 2;\n');
    expect(err.code).toBe('unavailable');
    expect(err.message).toMatch(/^b\.ts was written, but the edit could not be recorded: the disk is full/);
    expect(err.message).toContain('read the file before editing it again');
    // Not retryable: the same id again must get this answer, not run the edit on the changed file.
    expect(err.retryable).toBe(false);
    // The edit's id, under which the change it wrote is recorded (and looked for at the next start).
    expect(err.details?.['editId']).toMatch(/^e-/);
    expect(facts.at(-1)).toMatchObject({ type: 'edit.failed', data: { appliedCount: 1, code: 'unavailable' } });
  });
});
