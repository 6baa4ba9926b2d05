/**
 * @module
 * Action logs and review. Every file an agent (or one of its descendants)
 * created, modified or deleted since the last review is an entry of the
 * agent's action log: a base (what reject restores, by content hash) and the
 * current content the agents produced. All facts belong to the aggregate
 * `action-log` whose id is the OWNING agent (the log), so one change of a
 * grandchild is recorded three times (grandchild, child, root) with the same
 * `changeId` and the originating `agentId`: a parent subscribed to its own
 * subjects sees its whole subtree's changes.
 *
 * Entries travel whole in every fact (`entry`, null = no longer tracked), so
 * folding is a plain "set": the pure planning in `machines/review/action-log-plan.ts`
 * decides, the fold only stores.
 */
import * as z from 'zod';
import { AgentId, TerminalId } from './ids.ts';
import { defineCommand, defineEvent } from './message.ts';
import {
  AbsPath,
  ChangeSource,
  Conflict,
  ContentHash,
  FileReview,
  FileStatus,
  FileUpdate,
  Kept,
  LogEntry,
  RejectUndo,
  Selection,
} from './review-values.ts';

export {
  ChangeSource,
  ContentHash,
  FileReview,
  FileStatus,
  type FileUpdate,
  Hunk,
  hunkHash,
  LogEntry,
  RejectUndo,
  type ReviewConflict,
} from './review-values.ts';

export const ReviewList = defineCommand('review.list', {
  summary: "List the files in an agent's action log (its own and its descendants' changes) with diffs and hunk ids.",
  reads: true,
  data: z
    .object({
      agentId: AgentId.optional().describe('Whose log; the agent in the subject when missing.'),
      includeDescendants: z
        .boolean()
        .optional()
        .describe(
          'Default true. false: only files the agent itself changed (the diff still shows every change since base).',
        ),
      cursor: z.string().max(4096).optional().describe('nextCursor of the previous page; omit for the first page.'),
      paths: z
        .array(AbsPath)
        .min(1)
        .optional()
        .describe('Only these files (absolute, as review.list shows them); all when missing.'),
      full: z
        .boolean()
        .optional()
        .describe(
          'Default false: a file whose base and current content are over 1 MiB together is listed without ' +
            'its diff and hunks (diffLeftOut). true: every diff in full; best with paths.',
        ),
    })
    .strict(),
  reply: z.object({
    agentId: AgentId,
    files: z
      .array(FileReview)
      .describe('One page of files, ordered by path; the page fits one message (a bigger diff comes in parts).'),
    undoAvailable: z.boolean(),
    nextCursor: z
      .string()
      .optional()
      .describe('Present when more files follow: send it back as cursor to get the next page.'),
    waiting: z
      .array(z.object({ path: AbsPath, agentId: AgentId, changes: z.number().int().positive() }))
      .optional()
      .describe(
        'On the first page, when some are: changes on disk whose records the event log refused (a full disk, ' +
          'the broker down), by file and agent (the first 8 KiB of them). Not in files yet: they are recorded, ' +
          'and listed, once the log can be written; a review or write of such a file is refused until then.',
      ),
  }),
});

export const ReviewAccept = defineCommand('review.accept', {
  summary: 'Accept changes (all when no paths/hunkIds): the base moves forward; descendants follow.',
  data: Selection,
  reply: z.object({
    accepted: z.array(z.object({ path: AbsPath, hunkIds: z.array(z.string()), remaining: z.number().int() })),
  }),
});

const RejectOutcome = z.object({
  restored: z.array(AbsPath),
  deleted: z.array(AbsPath),
  kept: z.array(Kept),
  conflicts: z.array(Conflict),
});

export const ReviewReject = defineCommand('review.reject', {
  summary:
    'Reject changes (all when no paths/hunkIds): reverse the ' +
    "agents' hunks on disk; conflicts are left alone and reported.",
  data: Selection,
  reply: RejectOutcome.extend({ undoAvailable: z.boolean() }),
});

export const ReviewUndoReject = defineCommand('review.undo-reject', {
  summary:
    'Re-apply what the last reject-all removed, created files it deleted included (each created again only ' +
    'where its path is still free).',
  data: z.object({}).strict(),
  reply: z.object({
    reapplied: z.array(AbsPath),
    conflicts: z.array(Conflict),
    notRestorable: z
      .array(Kept)
      .describe(
        'Files the undo could not put back: only a created file deleted by a reject stored before undo ' +
          're-created files.',
      ),
  }),
});

export const ActionLogChangeRecorded = defineEvent('action-log.change.recorded', {
  summary: "A file change by `agentId` (the originator) was recorded in `logAgentId`'s action log.",
  aggregate: 'action-log',
  aggregateId: (d) => d.logAgentId,
  data: z
    .object({
      logAgentId: AgentId.describe('The log this record belongs to: the originator or one of its ancestors.'),
      agentId: AgentId.describe('The agent that made the change.'),
      lineage: z.array(AgentId).describe("The originator's ancestors, nearest first."),
      changeId: z.string().describe('Same for every log the change is recorded in.'),
      path: AbsPath,
      status: FileStatus.nullable().describe(
        "The file's status in this log after the change; null: no net change, untracked.",
      ),
      beforeHash: ContentHash.nullable().describe('Content the change was applied to (null: file absent).'),
      baseHash: ContentHash.nullable().describe("This log's base after the change."),
      resultHash: ContentHash.nullable().describe('Content after the change (null: deleted).'),
      entry: LogEntry.nullable(),
      source: ChangeSource,
    })
    .strict(),
  describe: (d) => `${d.logAgentId} ${d.status ?? 'unchanged'} ${d.path} by ${d.agentId} (${d.source.kind})`,
});

export const ReviewAccepted = defineEvent('review.accepted', {
  summary: "Changes were accepted in `agentId`'s log (by itself or by an ancestor `by`).",
  aggregate: 'action-log',
  aggregateId: (d) => d.agentId,
  data: z
    .object({
      agentId: AgentId,
      by: AgentId,
      files: z.array(FileUpdate.extend({ hunkIds: z.array(z.string()) })),
    })
    .strict(),
  describe: (d) => `${d.agentId} accepted ${d.files.length} file(s)${d.by === d.agentId ? '' : ` (by ${d.by})`}`,
});

export const ReviewRejected = defineEvent('review.rejected', {
  summary: "Changes of `agentId`'s log were rejected on disk.",
  aggregate: 'action-log',
  aggregateId: (d) => d.agentId,
  data: RejectOutcome.extend({
    agentId: AgentId,
    files: z.array(FileUpdate),
    undo: RejectUndo.nullable().describe('Set by a reject-all: what undo-reject re-applies.'),
    contentBytes: keptContentBytes('the file contents this stored in the review to undo it'),
  }).strict(),
  keeps: (d) => d.contentBytes ?? 0,
  describe: (d) =>
    `${d.agentId} rejected: ${d.restored.length} restored, ${d.deleted.length} ` +
    `deleted, ${d.kept.length} kept, ${d.conflicts.length} conflict(s)`,
});

export const ReviewRejectUndone = defineEvent('review.reject-undone', {
  summary: "The last reject-all of `agentId`'s log was re-applied.",
  aggregate: 'action-log',
  aggregateId: (d) => d.agentId,
  data: z
    .object({
      agentId: AgentId,
      files: z.array(FileUpdate),
      reapplied: z.array(AbsPath),
      conflicts: z.array(Conflict),
      notRestorable: z.array(Kept),
      contentBytes: keptContentBytes('the file contents this stored in the review to undo it'),
    })
    .strict(),
  keeps: (d) => d.contentBytes ?? 0,
  describe: (d) => `${d.agentId} undid reject: ${d.reapplied.length} re-applied, ${d.conflicts.length} conflict(s)`,
});

export const ActionLogFilesUpdated = defineEvent('action-log.files.updated', {
  summary:
    "Files tracked by `agentId`'s log changed because of another agent `by`: its reject or " +
    'undo-reject, or its change (an outside edit for this log, folded into base and current). Also after an ' +
    "undo-reject (`by` may be the log's own agent) that left a file it creates alone, one made at the path " +
    'meanwhile: each log gets back the entry it had.',
  aggregate: 'action-log',
  aggregateId: (d) => d.agentId,
  data: z
    .object({
      agentId: AgentId,
      by: AgentId,
      cause: z.enum(['reject', 'undo-reject', 'change']),
      files: z.array(FileUpdate),
    })
    .strict(),
  chargedTo: (d) => d.by,
  describe: (d) => `${d.agentId}: ${d.files.length} file(s) updated by ${d.cause} in ${d.by}`,
});

/**
 * `contentBytes` of a fact whose change made the review keep whole file contents (blobs): `what` they are. Charged
 * with the fact (`EventDef.keeps`) to the agent's `limits.maxRecordedBytesPerAgent`.
 */
export function keptContentBytes(what: string) {
  return z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      `Bytes of ${what} (charged to the agent's limits.maxRecordedBytesPerAgent). Absent in logs written before ` +
        'it was counted.',
    );
}

/**
 * An action-log fact carried inside another (`edit.applied`, `action-log.shell.recorded`); it belongs to the log
 * its data names (`logAgentId` of a record, `agentId` of an update), as it would on its own subject.
 */
export const ActionLogRecord = z.discriminatedUnion('type', [
  z.object({ type: z.literal(ActionLogChangeRecorded.type), data: ActionLogChangeRecorded.data }).strict(),
  z.object({ type: z.literal(ActionLogFilesUpdated.type), data: ActionLogFilesUpdated.data }).strict(),
]);
export type ActionLogRecord = z.infer<typeof ActionLogRecord>;

/** The facts a carrier's records are, each on the log it names (`EventDef.carries`). */
export const carriedRecords = (records: readonly ActionLogRecord[]) =>
  records.map((r) => ({
    type: r.type,
    agentId: r.type === ActionLogChangeRecorded.type ? r.data.logAgentId : r.data.agentId,
    data: r.data,
  }));

export const ActionLogShellRecorded = defineEvent('action-log.shell.recorded', {
  summary:
    "A shell command's side effects, recorded: the action-log records of every file it changed (each the " +
    "agent's log and each ancestor's), stored in one append instead of one per record and log. It is stored on " +
    "the agent's subjects: a watcher of an ancestor's subjects alone does not see it (the SDK's `on` hands out " +
    'the records as if stored alone).',
  aggregate: 'action-log',
  aggregateId: (d) => d.agentId,
  data: z
    .object({
      agentId: AgentId.describe(
        'The agent the records are for: the one whose command changed the files, or, for files changed while ' +
          "several agents' commands ran at once in the workspace, their nearest common ancestor.",
      ),
      terminalId: TerminalId.optional().describe('The terminal the command ran in.'),
      command: z.string().describe('The command line (its first 4,096 characters).'),
      files: z.number().int().min(1).describe('How many files these records are of.'),
      records: z
        .array(ActionLogRecord)
        .min(1)
        .describe(
          'The records, in order; a big change set is split over several of these facts, never one file over two.',
        ),
      by: AgentId.optional().describe(
        'The agent whose command recorded these changes (charged for them, limits.maxRecordedBytesPerAgent, even ' +
          'when the records are for an ancestor such as the root). Absent in logs written before it was kept.',
      ),
      contentBytes: keptContentBytes("these files' new contents, kept by the review to show and undo the change"),
    })
    .strict(),
  carries: (d) => carriedRecords(d.records),
  keeps: (d) => d.contentBytes ?? 0,
  chargedTo: (d) => d.by,
  describe: (d) => `${d.agentId} shell: ${d.files} file(s) recorded`,
});

export const reviewCommands = [ReviewList, ReviewAccept, ReviewReject, ReviewUndoReject];
export const reviewEvents = [
  ActionLogChangeRecorded,
  ReviewAccepted,
  ReviewRejected,
  ReviewRejectUndone,
  ActionLogFilesUpdated,
  ActionLogShellRecorded,
];

/** `domains.review` in the runtime config. */
export const ReviewConfig = z
  .object({
    trackShell: z
      .boolean()
      .default(true)
      .describe("Snapshot the agent's workspace around each terminal.exec and record the files the command changed."),
    maxShellContentBytes: z
      .number()
      .int()
      .min(0)
      .default(1024 * 1024 * 1024)
      .describe(
        'New file content shell tracking stores in the review per run of the host (default 1 GiB; the ' +
          "workspace's first scan aside); past it, changed files are kept by hash only and their changes are " +
          'reported, not restorable. Bounds what a job left running in the background can make the review keep.',
      ),
  })
  .strict();
export type ReviewConfig = z.infer<typeof ReviewConfig>;
