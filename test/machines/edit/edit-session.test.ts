import { createActor, initialTransition, transition } from 'xstate';
import { applyCharOperations, type CharOperation } from '../../../machines/edit/edit-diff.ts';
import { editAggregate, fileAggregate } from '../../../machines/edit/edit-aggregate.ts';
import { editSessionMachine, type EditSessionInput } from '../../../machines/edit/edit-session.ts';
import type { EditFact } from '../../../schemas/edit.ts';
import { feeds, seeds } from '../../support/edit-random.ts';
import { propertySeed } from '../../support/seed.ts';

const SEEDS = seeds(15);

function session(input: Partial<EditSessionInput> & { buffer: string }) {
  const actor = createActor(editSessionMachine, {
    input: { editId: 'e-1', mode: 'edit', stale: false, preview: true, ...input },
  });
  const facts: EditFact[] = [];
  actor.on('*', (f) => facts.push(f as EditFact));
  actor.start();
  return { actor, facts };
}

const BUFFER = 'class A {\n    one() {\n        return 1;\n    }\n    two() {\n        return 2;\n    }\n}\n';
const TOOL = JSON.stringify({
  path: 'a.ts',
  edits: [
    { old_text: 'one() {\n    return 1;\n}', new_text: 'one() {\n    return 11;\n}' },
    { old_text: '        return 2;\n', new_text: '        return 22;\n        // two\n' },
  ],
});
const EXPECTED =
  'class A {\n    one() {\n        return 11;\n    }\n    two() {\n        return 22;\n        // two\n    }\n}\n';

describe('edit session statechart', () => {
  it.each(feeds(TOOL, SEEDS).map((f) => [f.name, f.chunks] as const))(
    'streamed %s: same result, facts in order',
    (_n, chunks) => {
      const { actor, facts } = session({ buffer: BUFFER });
      for (const chunk of chunks) actor.send({ type: 'edit.input', data: { chunk } });
      expect(actor.getSnapshot().value).toBe('matching');
      actor.send({ type: 'edit.finish' });
      const snap = actor.getSnapshot();
      expect(snap.value).toBe('applied');
      const result = snap.context.result;
      expect(result.content).toBe(EXPECTED);
      expect(result.outcomes.map((o) => [o.index, o.matchKind, o.startLine, o.endLine])).toEqual([
        [0, 'fuzzy', 2, 4],
        [1, 'exact', 6, 6],
      ]);
      const kinds = facts
        .filter((f) => f.type !== 'edit.diff.progressed' && f.type !== 'edit.range.matched')
        .map((f) => f.type);
      expect(kinds).toEqual(['edit.range.resolved', 'edit.range.resolved']);
      // The preview ops of each edit turn its old range into exactly what was inserted.
      for (const [i, o] of result.outcomes.entries()) {
        const ops = facts.flatMap((f) =>
          f.type === 'edit.diff.progressed' && f.data.editIndex === i ? (f.data.ops as CharOperation[]) : [],
        );
        const bufferBefore =
          i === 0
            ? BUFFER
            : BUFFER.slice(0, result.outcomes[0]!.range.start) +
              result.outcomes[0]!.inserted +
              BUFFER.slice(result.outcomes[0]!.range.end);
        expect(applyCharOperations(bufferBefore.slice(o.range.start, o.range.end), ops)).toBe(o.inserted);
      }
      const last = facts.filter((f) => f.type === 'edit.diff.progressed').at(-1);
      expect(last?.data).toMatchObject({ editIndex: 1, final: true });
    },
  );

  it('emits provisional matches while old_text streams', () => {
    const { actor, facts } = session({ buffer: BUFFER });
    for (const ch of TOOL) actor.send({ type: 'edit.input', data: { chunk: ch } });
    const matched = facts.filter((f) => f.type === 'edit.range.matched').map((f) => f.data);
    // Edit 1's only line ends in a held-back newline, so it resolves without a provisional match.
    expect(matched).toEqual([
      { editId: 'e-1', editIndex: 0, startLine: 2, endLine: 2 },
      { editId: 'e-1', editIndex: 0, startLine: 2, endLine: 3 },
    ]);
  });

  it('fails as soon as an old_text cannot be resolved, keeping earlier edits', () => {
    const { actor, facts } = session({ buffer: BUFFER, stale: true });
    actor.send({
      type: 'edit.input',
      data: {
        chunk: JSON.stringify({
          edits: [
            { old_text: 'return 1;', new_text: 'return 0;' },
            { old_text: 'nope', new_text: 'x' },
          ],
        }),
      },
    });
    expect(actor.getSnapshot().value).toBe('failed');
    const r = actor.getSnapshot().context.result;
    expect(r.content).toBe(BUFFER.replace('return 1;', 'return 0;'));
    expect(r.failure?.message).toBe(
      'Could not find matching text for edit at index 1. The old_text did not match any content in the file. ' +
        'The file has changed on disk since you last read it. Please read the file again to get the current content.',
    );
    expect(facts.filter((f) => f.type.startsWith('edit.range')).map((f) => f.type)).toEqual([
      'edit.range.resolved',
      'edit.range.unresolved',
    ]);
  });

  it('reports truncated input at finish', () => {
    const { actor } = session({ buffer: BUFFER });
    actor.send({ type: 'edit.input', data: { chunk: '{"edits":[{"old_text":"one' } });
    actor.send({ type: 'edit.finish' });
    expect(actor.getSnapshot().value).toBe('failed');
    expect(actor.getSnapshot().context.result.failure).toEqual({
      reason: 'malformed',
      offset: 26,
      message:
        'The tool input is truncated at offset 26: it ends inside an ' +
        'unterminated string. Send the rest of the JSON before finishing.',
    });
  });

  it('an empty edits array fails with a clear message', () => {
    const { actor } = session({ buffer: BUFFER });
    actor.send({ type: 'edit.input', data: { chunk: '{"edits":[]}' } });
    actor.send({ type: 'edit.finish' });
    expect(actor.getSnapshot().context.result.failure?.message).toBe(
      'The edits array is empty. Give at least one { "old_text", "new_text" } edit.',
    );
  });

  it('write mode streams content and previews it against the old file', () => {
    const { actor, facts } = session({ buffer: 'old\n', mode: 'write' });
    for (const ch of '{"content":"new\\ntext\\n"}') actor.send({ type: 'edit.input', data: { chunk: ch } });
    actor.send({ type: 'edit.finish' });
    expect(actor.getSnapshot().value).toBe('applied');
    expect(actor.getSnapshot().context.result.content).toBe('new\ntext\n');
    const ops = facts.flatMap((f) => (f.type === 'edit.diff.progressed' ? (f.data.ops as CharOperation[]) : []));
    expect(applyCharOperations('old\n', ops)).toBe('new\ntext\n');
  });

  it('cancel ends the session without a result', () => {
    const { actor } = session({ buffer: BUFFER });
    actor.send({ type: 'edit.input', data: { chunk: '{"edits":[' } });
    actor.send({ type: 'edit.cancel' });
    expect(actor.getSnapshot().value).toBe('cancelled');
  });
});

describe('edit aggregate', () => {
  const facts = [
    {
      type: 'edit.started',
      data: { editId: 'e-1', path: '/w/a.ts', mode: 'edit', streaming: true, baseHash: 'a'.repeat(64) },
    },
    { type: 'edit.range.matched', data: { editId: 'e-1', editIndex: 0, startLine: 2, endLine: 2 } },
    {
      type: 'edit.range.resolved',
      data: { editId: 'e-1', editIndex: 0, startLine: 2, endLine: 4, matchKind: 'fuzzy', similarity: 0.95 },
    },
    { type: 'edit.range.unresolved', data: { editId: 'e-1', editIndex: 1, message: 'x', stale: false } },
    {
      type: 'edit.applied',
      data: {
        editId: 'e-1',
        path: '/w/a.ts',
        mode: 'edit',
        baseHash: 'a'.repeat(64),
        resultHash: 'b'.repeat(64),
        created: false,
        diff: '',
        linesAdded: 1,
        linesRemoved: 1,
        edits: [],
        partial: true,
        lineEnding: 'lf',
        bom: false,
      },
    },
    {
      type: 'edit.failed',
      data: { editId: 'e-1', path: '/w/a.ts', editIndex: 1, code: 'not_found', message: 'x', appliedCount: 1 },
    },
  ];

  it('folds the facts of one edit into plain JSON with the pure transition()', () => {
    let [state] = initialTransition(editAggregate);
    for (const f of facts) [state] = transition(editAggregate, state, f as never);
    expect({ value: state.value, context: JSON.parse(JSON.stringify(state.context)) }).toEqual({
      value: 'failed',
      context: {
        editId: 'e-1',
        path: '/w/a.ts',
        mode: 'edit',
        streaming: true,
        baseHash: 'a'.repeat(64),
        resultHash: 'b'.repeat(64),
        created: false,
        partial: true,
        linesAdded: 1,
        linesRemoved: 1,
        edits: [
          { index: 0, status: 'resolved', startLine: 2, endLine: 4, matchKind: 'fuzzy', similarity: 0.95 },
          { index: 1, status: 'unresolved' },
        ],
        error: { code: 'not_found', message: 'x', editIndex: 1 },
      },
    });
  });

  it('file aggregate counts reads and keeps the last version', () => {
    let [state] = initialTransition(fileAggregate);
    const read = (hash: string) => ({
      type: 'file.read.recorded' as const,
      data: { fileId: 'f-1', path: '/w/a', hash, mtimeMs: 1, totalLines: 3 },
    });
    [state] = transition(fileAggregate, state, read('a'.repeat(64)));
    [state] = transition(fileAggregate, state, read('b'.repeat(64)));
    expect(state.context).toEqual({
      fileId: 'f-1',
      path: '/w/a',
      hash: 'b'.repeat(64),
      mtimeMs: 1,
      totalLines: 3,
      reads: 2,
    });
  });
});

const fcSeed = propertySeed();
describe(`streamed and one-shot edits agree (fast-check seed ${fcSeed})`, () => {
  const seed = fcSeed;
  it('same content and outcomes for any chunking of the tool JSON', async () => {
    const fc = (await import('fast-check')).default;
    const { applyEdits } = await import('../../../machines/edit/edit-apply.ts');
    const { randomChunks, seeded } = await import('../../support/edit-random.ts');
    const line = fc.tuple(fc.nat(3), fc.stringMatching(/^[a-z(){};=]{3,16}$/)).map(([n, s]) => '  '.repeat(n) + s);
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 4, maxLength: 25 }),
        fc.nat(),
        fc.nat(),
        fc.integer({ min: -2, max: 4 }),
        (ls, a, s, shift) => {
          const buffer = `${ls.join('\n')}\n`;
          const start = a % (ls.length - 2);
          const span = ls.slice(start, start + 3);
          const move = (l: string) =>
            shift >= 0 ? ' '.repeat(shift) + l : l.replace(new RegExp(`^ {0,${-shift}}`), '');
          const edit = { oldText: span.map(move).join('\n'), newText: [...span, 'added();'].map(move).join('\n') };
          const oneShot = applyEdits(buffer, [edit]);
          const core = createActor(editSessionMachine, {
            input: { editId: 'e-p', mode: 'edit', buffer, stale: false, preview: true },
          }).start();
          const json = JSON.stringify({ edits: [{ old_text: edit.oldText, new_text: edit.newText }] });
          for (const c of randomChunks(json, seeded(s), 7)) core.send({ type: 'edit.input', data: { chunk: c } });
          core.send({ type: 'edit.finish' });
          const streamed = core.getSnapshot().context.result;
          expect(streamed.content).toBe(oneShot.content);
          expect(streamed.failure?.message).toBe(oneShot.failure?.message);
          expect(streamed.outcomes).toEqual(oneShot.outcomes);
        },
      ),
      { seed, numRuns: 150 },
    );
  });
});

describe('edit session snapshot', () => {
  it('is plain JSON at every step and round-trips through JSON.parse into an equal, restorable state', () => {
    const { actor } = session({ buffer: BUFFER });
    const steps = [...Array.from({ length: 4 }, (_, i) => TOOL.slice(i * 40, (i + 1) * 40)), TOOL.slice(160)];
    for (const chunk of steps) {
      actor.send({ type: 'edit.input', data: { chunk } });
      const persisted = actor.getPersistedSnapshot();
      const json = JSON.stringify(persisted);
      // Nothing dropped or turned into {} by JSON: no class instance, Map, function or undefined hides in it.
      expect(JSON.parse(json)).toEqual(persisted);
      expect(JSON.stringify(JSON.parse(json))).toBe(json);
    }
    actor.send({ type: 'edit.finish' });
    const done = actor.getSnapshot();
    expect(done.value).toBe('applied');
    const restored = createActor(editSessionMachine, {
      snapshot: JSON.parse(JSON.stringify(actor.getPersistedSnapshot())),
      input: { editId: 'e-1', mode: 'edit', stale: false, preview: true, buffer: BUFFER },
    }).start();
    const again = restored.getSnapshot();
    expect({ value: again.value, context: again.context }).toEqual({ value: 'applied', context: done.context });
    expect(again.context.result.content).toBe(EXPECTED);
    expect(again.context.received).toBe(TOOL.length);
  });
});
