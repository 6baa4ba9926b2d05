/**
 * @module
 * Value schemas of the review messages (`review.ts`): content hashes, file statuses, the sources of a change, an
 * action-log entry, hunks, and a file's review as `review.list` shows it. Re-exported from `review.ts`, so import
 * from there.
 */
import { createHash } from 'node:crypto';
import * as z from 'zod';
import { AgentId, EditId, TerminalId } from './ids.ts';

export const ContentHash = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'expected a sha256 hex digest')
  .describe('sha256 of the UTF-8 content, hex; the key in the content-addressed blob store.');

export const FileStatus = z
  .enum(['created', 'modified', 'deleted'])
  .describe('What the agents did to the file since its base.');
export type FileStatus = z.infer<typeof FileStatus>;

export const ChangeSource = z
  .object({
    kind: z.enum(['edit', 'write', 'shell']),
    editId: EditId.optional(),
    command: z.string().max(4096).optional().describe('The shell command whose side effect this was.'),
    terminalId: TerminalId.optional(),
  })
  .strict();
export type ChangeSource = z.infer<typeof ChangeSource>;

/** One tracked file of one log. `baseHash` null: the file did not exist at base; `currentHash` null: deleted. */
export const LogEntry = z
  .object({
    status: FileStatus,
    baseHash: ContentHash.nullable(),
    currentHash: ContentHash.nullable(),
    agents: z.array(AgentId).describe('Agents (this one or descendants) whose changes make up the entry, first first.'),
    mode: z
      .number()
      .int()
      .min(0)
      .max(0o777)
      .optional()
      .describe(
        "A deleted file's permission bits (0777's only) when it was deleted: a reject restores it with them. " +
          "Absent in other entries and in logs written before 8 December (restored with the process's default).",
      ),
  })
  .strict();
export type LogEntry = z.infer<typeof LogEntry>;

export const AbsPath = z.string().min(1).max(4096).describe('Absolute path of the file.');
export const FileUpdate = z.object({ path: AbsPath, entry: LogEntry.nullable() }).strict();
export type FileUpdate = z.infer<typeof FileUpdate>;

/**
 * A hunk id's hash: the first 128 bits of sha256, 32 hex characters. The agent writes both versions of a file,
 * so it could search for two hunks with one id (a birthday search: 2^32 tries against the 64-bit FNV-1a this
 * was) and swap the one the operator accepts by id; 2^64 tries are out of reach.
 */
export function hunkHash(s: string): string {
  return createHash('sha256').update(s).digest('hex').slice(0, 32);
}

export const Hunk = z
  .object({
    id: z.string().describe('Stable id: 128 bits of sha256 of the path and the hunk lines (suffix -N for repeats).'),
    oldStart: z.number().int(),
    oldLines: z.number().int(),
    newStart: z.number().int(),
    newLines: z.number().int(),
    lines: z.array(z.string()),
  })
  .strict();
export type Hunk = z.infer<typeof Hunk>;

export const Conflict = z.object({ path: AbsPath, hunkIds: z.array(z.string()), reason: z.string() }).strict();
export type ReviewConflict = z.infer<typeof Conflict>;
export const Kept = z.object({ path: AbsPath, reason: z.string() }).strict();

/** What the last reject-all of a log did, so `review.undo-reject` can re-apply it. */
export const RejectUndo = z
  .object({
    files: z.array(
      z
        .object({
          path: AbsPath,
          beforeHash: ContentHash.nullable().describe('Disk content before the reject.'),
          afterHash: ContentHash.nullable().describe('Disk content the reject left.'),
          createdDeleted: z
            .boolean()
            .describe(
              'A created file the reject deleted: undo creates it again with beforeHash (null: it was gone before ' +
                'the reject) where the path is still free.',
            ),
          mode: z
            .number()
            .int()
            .min(0)
            .max(0o7777)
            .optional()
            .describe(
              'A created file the reject deleted: its permission bits, which the undo creates it again with. ' +
                'Facts written before undo re-created files lack it: such a file is reported notRestorable.',
            ),
          left: ContentHash.nullable()
            .optional()
            .describe(
              "The rejecting log's current for the file after the reject (null: no entry). An undo that finds " +
                'another there (a change recorded since) re-applies onto that entry instead of restoring the old one.',
            ),
        })
        .strict(),
    ),
    entries: z
      .record(z.string(), z.record(z.string(), LogEntry.nullable()))
      .describe('Per log id, per path: the entry before the reject (null = untracked).'),
    lefts: z
      .record(z.string(), z.record(z.string(), ContentHash.nullable()))
      .optional()
      .describe(
        "Per log id, per path of `entries`: that log's current after the reject (null: no entry). An undo that " +
          'finds another in any log (a change recorded since) re-applies onto the entries as they are now.',
      ),
  })
  .strict();
export type RejectUndo = z.infer<typeof RejectUndo>;

export const Selection = z
  .object({
    paths: z
      .array(AbsPath)
      .min(1)
      .optional()
      .describe('Files to act on (absolute, as review.list shows them); all when missing.'),
    hunkIds: z.array(z.string().min(1)).min(1).optional().describe('Hunks to act on, from review.list.'),
    seen: z
      .record(AbsPath, ContentHash.nullable())
      .optional()
      .describe(
        'Path → currentHash as review.list showed it (null: deleted). When given, the command acts only if ' +
          'every file it would act on is here and every file here is still in the log with that content; ' +
          'otherwise it fails with `conflict` and does nothing. Send it to accept only what was looked at: an ' +
          'agent may change a file between the listing and the accept. Across named hosts every host is ' +
          "checked before any acts, but a file changed in between can still refuse one host's part after " +
          "another's is done (the error says so).",
      ),
  })
  .strict();

export const FileReview = z
  .object({
    path: AbsPath,
    status: FileStatus,
    agents: z.array(AgentId),
    baseHash: ContentHash.nullable(),
    currentHash: ContentHash.nullable(),
    diff: z.string().describe('Unified diff (jsdiff, 3 lines of context) from base to current.'),
    hunks: z.array(Hunk),
    diffLeftOut: z
      .literal(true)
      .optional()
      .describe(
        'Present when the file is too big to diff in a plain listing: `diff` then says why and how to get it ' +
          '(review.list with paths and full), and `hunks` is empty.',
      ),
    diffPart: z
      .object({
        start: z.number().int().nonnegative(),
        end: z.number().int().nonnegative(),
        total: z.number().int().nonnegative(),
      })
      .strict()
      .optional()
      .describe(
        'Present when the diff is too big for one message: this entry carries diff characters [start, end) of ' +
          'total (UTF-16 code units, as JSON strings count them), and the next pages (nextCursor) continue the ' +
          'same path, each part starting where the one before ended. Concatenate the parts; the last one ' +
          'carries `hunks` (it may hold no diff characters).',
      ),
    hunkLinesLeftOut: z
      .literal(true)
      .optional()
      .describe(
        "Present when the hunks' lines do not fit one message: each hunk keeps its id and ranges, and its lines " +
          'are those of its @@ section in `diff`.',
      ),
  })
  .strict();
export type FileReview = z.infer<typeof FileReview>;
