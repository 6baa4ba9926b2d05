/**
 * @module
 * The `edit` aggregate: folds one edit session's facts (never the
 * `edit.diff.progressed` preview, which lives on the output stream) into a
 * plain-JSON summary for replay and the state digest; and the tiny `file`
 * aggregate that records the versions agents have read. Pure; assign only.
 */
import { assertEvent, assign, setup } from 'xstate';
import type { DataOf } from '../../schemas/index.ts';
import type {
  editAbandoned,
  editApplied,
  editFailed,
  editRangeAmbiguous,
  editRangeMatched,
  editRangeResolved,
  editRangeUnresolved,
  editStarted,
  editWriting,
  fileReadRecorded,
} from '../../schemas/edit.ts';

/** A fact as the fold hands it over, its data typed by its EventDef. */
type FactOf<TDef> = TDef extends { type: infer T } ? { type: T; data: DataOf<TDef> } : never;
type EditFact = FactOf<
  | typeof editStarted
  | typeof editRangeMatched
  | typeof editRangeResolved
  | typeof editRangeUnresolved
  | typeof editRangeAmbiguous
  | typeof editApplied
  | typeof editWriting
  | typeof editAbandoned
  | typeof editFailed
>;
type FileFact = FactOf<typeof fileReadRecorded>;
type EditSummary = {
  index: number;
  status: 'matched' | 'resolved' | 'unresolved' | 'ambiguous';
  startLine?: number;
  endLine?: number;
  matchKind?: string;
  similarity?: number;
  lines?: number[];
};

export type EditAggregateContext = {
  editId?: string;
  path?: string;
  mode?: 'edit' | 'write';
  streaming?: boolean;
  baseHash?: string | null;
  resultHash?: string;
  created?: boolean;
  partial?: boolean;
  linesAdded?: number;
  linesRemoved?: number;
  edits: EditSummary[];
  error?: { code: string; message: string; editIndex?: number };
  /** The write intended (edit.writing): set only for edits that got that far, so older logs fold as before. */
  intent?: { baseHash: string | null; resultHash: string };
  /** Closed at start after the previous host died (edit.abandoned): what was on disk. */
  abandoned?: { disk: string; diskHash: string | null; recorded: boolean };
};

/** Replaces (or appends) the summary of edit `index`. */
function withEdit(edits: EditSummary[], summary: EditSummary): EditSummary[] {
  const rest = edits.filter((e) => e.index !== summary.index);
  return [...rest, summary].sort((a, b) => a.index - b.index);
}

const recordFailure = assign<EditAggregateContext, EditFact, undefined, EditFact, never>(({ event }) => {
  assertEvent(event, 'edit.failed');
  return {
    error: {
      code: event.data.code,
      message: event.data.message,
      ...(event.data.editIndex !== undefined ? { editIndex: event.data.editIndex } : {}),
    },
  };
});

export const editAggregate = setup({
  types: { context: {} as EditAggregateContext, events: {} as EditFact },
  actions: { recordFailure },
}).createMachine({
  id: 'editAggregate',
  context: { edits: [] },
  initial: 'idle',
  states: {
    idle: {
      on: {
        'edit.started': {
          target: 'matching',
          actions: assign(({ event }) => ({
            editId: event.data.editId,
            path: event.data.path,
            mode: event.data.mode,
            streaming: event.data.streaming,
            baseHash: event.data.baseHash,
            edits: [],
          })),
        },
      },
    },
    matching: {
      on: {
        'edit.range.matched': {
          actions: assign(({ context, event }) => ({
            edits: withEdit(context.edits, {
              index: event.data.editIndex,
              status: 'matched',
              startLine: event.data.startLine,
              endLine: event.data.endLine,
            }),
          })),
        },
        'edit.range.resolved': {
          actions: assign(({ context, event }) => ({
            edits: withEdit(context.edits, {
              index: event.data.editIndex,
              status: 'resolved',
              startLine: event.data.startLine,
              endLine: event.data.endLine,
              matchKind: event.data.matchKind,
              similarity: event.data.similarity,
            }),
          })),
        },
        'edit.range.unresolved': {
          actions: assign(({ context, event }) => ({
            edits: withEdit(context.edits, { index: event.data.editIndex, status: 'unresolved' }),
          })),
        },
        'edit.range.ambiguous': {
          actions: assign(({ context, event }) => ({
            edits: withEdit(context.edits, {
              index: event.data.editIndex,
              status: 'ambiguous',
              lines: event.data.lines,
            }),
          })),
        },
        'edit.applied': {
          target: 'applied',
          actions: assign(({ event }) => ({
            path: event.data.path,
            resultHash: event.data.resultHash,
            created: event.data.created,
            partial: event.data.partial,
            linesAdded: event.data.linesAdded,
            linesRemoved: event.data.linesRemoved,
          })),
        },
        'edit.failed': { target: 'failed', actions: 'recordFailure' },
        'edit.writing': {
          actions: assign(({ event }) => ({
            intent: { baseHash: event.data.baseHash, resultHash: event.data.resultHash },
          })),
        },
        'edit.abandoned': {
          target: 'abandoned',
          actions: assign(({ event }) => ({
            abandoned: { disk: event.data.disk, diskHash: event.data.diskHash, recorded: event.data.recorded },
          })),
        },
      },
    },
    abandoned: { type: 'final' },
    applied: {
      // A partial apply is followed by the failure of the edit that stopped it.
      on: { 'edit.failed': { target: 'failed', actions: 'recordFailure' } },
    },
    failed: { type: 'final' },
  },
});

export const editAggregateDef = { aggregate: 'edit', machine: editAggregate } as const;

export type FileAggregateContext = {
  fileId?: string;
  path?: string;
  hash?: string;
  mtimeMs?: number;
  totalLines?: number;
  reads: number;
};

/** Folds `file.read.recorded`: the latest version read and how many reads. */
export const fileAggregate = setup({
  types: { context: {} as FileAggregateContext, events: {} as FileFact },
}).createMachine({
  id: 'fileAggregate',
  context: { reads: 0 },
  initial: 'read',
  states: {
    read: {
      on: {
        'file.read.recorded': {
          actions: assign(({ context, event }) => ({
            fileId: event.data.fileId,
            path: event.data.path,
            hash: event.data.hash,
            mtimeMs: event.data.mtimeMs,
            totalLines: event.data.totalLines,
            reads: context.reads + 1,
          })),
        },
      },
    },
  },
});

export const fileAggregateDef = { aggregate: 'file', machine: fileAggregate } as const;
