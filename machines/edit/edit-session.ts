/**
 * @module
 * The edit session statechart: one streamed (or one-shot) edit from
 * `edit.begin` to a result ready to write. `started` → `matching` while
 * tool-call JSON streams in → `settling` → `applied` (every edit resolved; the
 * effect actor writes the file and emits `edit.applied`) | `failed` |
 * `cancelled`. Facts (`edit.range.*`, `edit.diff.progressed`) are emitted as
 * they occur. Pure: the buffer comes in as input; no file access.
 *
 * The context is plain data (options, bytes received, the result so far), so
 * a snapshot is JSON and can be persisted. The streaming engine (parser,
 * fuzzy matcher, re-indenter, diff: objects with internal state) is an
 * invoked child, `engine`: each input is forwarded to it and it answers
 * synchronously with `edit.progressed` (the facts, the result so far).
 */
import { enqueueActions, fromCallback, setup } from 'xstate';
import type { EditFact } from '../../schemas/edit.ts';
import { EditSessionCore, type SessionOptions, type SessionResult } from './edit-session-core.ts';

export type EditSessionInput = SessionOptions;

type EngineEvent =
  | { type: 'edit.input'; data: { chunk: string } }
  | { type: 'edit.finish' }
  | { type: 'edit.apply'; data: { edits: Array<{ oldText: string; newText: string }> } }
  | { type: 'edit.write'; data: { content: string } };

export type EditSessionEvent =
  | EngineEvent
  | { type: 'edit.cancel' }
  | { type: 'edit.progressed'; data: { facts: EditFact[]; result: SessionResult; received: number } };

export type EditSessionContext = {
  editId: string;
  options: SessionOptions;
  /** Characters of tool-call JSON received so far. */
  received: number;
  /** The result so far: the buffer with the applied edits, their outcomes, the failure if any. */
  result: SessionResult;
};

/** The streaming engine: keeps the parser/matcher state and answers every input with `edit.progressed`. */
const engine = fromCallback<EngineEvent, SessionOptions>(({ input, receive, sendBack }) => {
  const core = new EditSessionCore(input);
  receive((event) => {
    let facts: EditFact[] = [];
    if (event.type === 'edit.input') facts = core.push(event.data.chunk);
    else if (event.type === 'edit.finish') facts = core.finish();
    else if (event.type === 'edit.apply') facts = core.applyAll(event.data.edits);
    else facts = core.writeAll(event.data.content);
    const r = core.result();
    // Copies: the core keeps appending to its own arrays, and the context must not change under a snapshot.
    const result = { ...r, outcomes: [...r.outcomes], specs: [...r.specs] };
    sendBack({ type: 'edit.progressed', data: { facts, result, received: core.received } });
  });
});

export const editSessionMachine = setup({
  types: {
    input: {} as EditSessionInput,
    context: {} as EditSessionContext,
    events: {} as EditSessionEvent,
    emitted: {} as EditFact,
  },
  actors: { engine },
  actions: {
    forward: enqueueActions(({ event, enqueue }) => {
      if (event.type !== 'edit.cancel' && event.type !== 'edit.progressed') enqueue.sendTo('engine', event);
    }),
    progressed: enqueueActions(({ event, enqueue }) => {
      if (event.type !== 'edit.progressed') return;
      enqueue.assign({ result: event.data.result, received: event.data.received });
      for (const fact of event.data.facts) enqueue.emit(fact);
    }),
  },
  guards: {
    failed: ({ context }) => context.result.failure !== undefined,
  },
}).createMachine({
  id: 'editSession',
  context: ({ input }) => ({
    editId: input.editId,
    options: input,
    received: 0,
    result: { content: input.mode === 'write' ? '' : input.buffer, outcomes: [], specs: [] },
  }),
  invoke: { id: 'engine', src: 'engine', input: ({ context }) => context.options },
  on: { 'edit.progressed': { actions: 'progressed' } },
  initial: 'started',
  states: {
    started: {
      on: {
        'edit.input': { target: 'matching', actions: 'forward' },
        'edit.finish': { target: 'settling', actions: 'forward' },
        'edit.apply': { target: 'settling', actions: 'forward' },
        'edit.write': { target: 'settling', actions: 'forward' },
        'edit.cancel': 'cancelled',
      },
    },
    matching: {
      always: { guard: 'failed', target: 'failed' },
      on: {
        'edit.input': { actions: 'forward' },
        'edit.finish': { target: 'settling', actions: 'forward' },
        'edit.cancel': 'cancelled',
      },
    },
    // Waits for the engine's answer to the last input, then settles on it.
    settling: {
      on: {
        'edit.progressed': [
          { guard: ({ event }) => event.data.result.failure !== undefined, target: 'failed', actions: 'progressed' },
          { target: 'applied', actions: 'progressed' },
        ],
      },
    },
    applied: { type: 'final' },
    failed: { type: 'final' },
    cancelled: { type: 'final' },
  },
});
