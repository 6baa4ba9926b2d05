/**
 * @module
 * The edit session statechart: one streamed (or one-shot) edit from
 * `edit.begin` to a result ready to write. `started` → `matching` while
 * tool-call JSON streams in → `applied` (every edit resolved; the effect
 * actor writes the file and emits `edit.applied`) | `failed` | `cancelled`.
 * Facts (`edit.range.*`, `edit.diff.progressed`) are emitted as they occur.
 * Pure: the buffer comes in as input; no file access.
 */
import { enqueueActions, setup } from 'xstate';
import type { EditFact } from '../../schemas/edit.ts';
import { EditSessionCore, type SessionOptions } from './edit-session-core.ts';

export type EditSessionInput = SessionOptions;

export type EditSessionEvent =
  | { type: 'edit.input'; data: { chunk: string } }
  | { type: 'edit.finish' }
  | { type: 'edit.apply'; data: { edits: Array<{ oldText: string; newText: string }> } }
  | { type: 'edit.write'; data: { content: string } }
  | { type: 'edit.cancel' };

export const editSessionMachine = setup({
  types: {
    input: {} as EditSessionInput,
    context: {} as { core: EditSessionCore; editId: string },
    events: {} as EditSessionEvent,
    emitted: {} as EditFact,
  },
  actions: {
    run: enqueueActions(({ context, event, enqueue }) => {
      let facts: EditFact[] = [];
      if (event.type === 'edit.input') facts = context.core.push(event.data.chunk);
      else if (event.type === 'edit.finish') facts = context.core.finish();
      else if (event.type === 'edit.apply') facts = context.core.applyAll(event.data.edits);
      else if (event.type === 'edit.write') facts = context.core.writeAll(event.data.content);
      for (const fact of facts) enqueue.emit(fact);
    }),
  },
  guards: {
    failed: ({ context }) => context.core.failed,
  },
}).createMachine({
  id: 'editSession',
  context: ({ input }) => ({ core: new EditSessionCore(input), editId: input.editId }),
  initial: 'started',
  states: {
    started: {
      on: {
        'edit.input': { target: 'matching', actions: 'run' },
        'edit.finish': { target: 'settling', actions: 'run' },
        'edit.apply': { target: 'settling', actions: 'run' },
        'edit.write': { target: 'settling', actions: 'run' },
        'edit.cancel': 'cancelled',
      },
    },
    matching: {
      always: { guard: 'failed', target: 'failed' },
      on: {
        'edit.input': { actions: 'run' },
        'edit.finish': { target: 'settling', actions: 'run' },
        'edit.cancel': 'cancelled',
      },
    },
    settling: {
      always: [{ guard: 'failed', target: 'failed' }, { target: 'applied' }],
    },
    applied: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final' },
  },
});
