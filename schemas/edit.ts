/**
 * @module
 * The edit domain's messages: the file tools (`file.read`, `file.edit`,
 * `file.write`), the streaming edit session (`edit.begin/input/finish/cancel`)
 * and the facts an edit leaves in the log. Applied/failed facts carry the
 * base and result content hashes (sha256 hex) the action log needs to restore.
 */
import * as z from 'zod';
import { defineCommand, defineEvent } from './message.ts';
import { EditId, Token } from './ids.ts';
import { FilePath } from './paths.ts';
import { ActionLogRecord, carriedRecords, keptContentBytes } from './review.ts';

export { ActionLogRecord } from './review.ts';

const Path = FilePath.describe("File path, absolute or relative to the agent's first workspace root.");
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'expected a sha256 hex digest');
const Line = z.number().int().min(1);

export const EditSpec = z
  .object({
    oldText: z
      .string()
      .describe('The exact text to replace, copied from the file with enough surrounding lines to be unique.'),
    newText: z.string().describe('The text that replaces old_text.'),
  })
  .strict();
export type EditSpec = z.infer<typeof EditSpec>;

export const MatchKind = z
  .enum(['exact', 'fuzzy'])
  .describe('exact: old_text was found byte for byte; fuzzy: found after tolerating whitespace/quote/line drift.');

export const SyntaxErrorInfo = z.object({ line: Line, column: z.number().int().min(1), kind: z.string() });
export const SyntaxReport = z.object({
  before: z.number().int().min(0).describe('Syntax error nodes before the change.'),
  after: z.number().int().min(0).describe('Syntax error nodes after the change.'),
  introduced: z.array(SyntaxErrorInfo).describe('Errors present after and not before.'),
  language: z.string(),
});
export type SyntaxReport = z.infer<typeof SyntaxReport>;

export const EditOutcomeInfo = z.object({
  index: z.number().int().min(0),
  matchKind: MatchKind,
  similarity: z.number().min(0).max(1),
  startLine: Line.describe('First replaced line (1-based) in the text this edit was applied to.'),
  endLine: Line,
});
export type EditOutcomeInfo = z.infer<typeof EditOutcomeInfo>;

export const OutlineSymbol = z.object({
  kind: z.string(),
  name: z.string(),
  startLine: Line,
  endLine: Line,
  depth: z.number().int().min(0),
});
export type OutlineSymbol = z.infer<typeof OutlineSymbol>;

const AppliedReply = z.object({
  editId: EditId,
  path: z.string(),
  mode: z.enum(['edit', 'write']),
  created: z.boolean(),
  diff: z.string().describe('Unified diff of the change.'),
  linesAdded: z.number().int().min(0),
  linesRemoved: z.number().int().min(0),
  edits: z.array(EditOutcomeInfo),
  syntaxErrors: SyntaxReport.optional(),
  message: z.string().describe('What happened, in the words the model sees.'),
});

// ---- commands ----

export const fileRead = defineCommand('file.read', {
  data: z
    .object({
      path: Path,
      startLine: Line.optional().describe('First line to return (1-based).'),
      endLine: Line.optional().describe('Last line to return (inclusive).'),
    })
    .strict(),
  reply: z.object({
    path: z.string(),
    content: z
      .string()
      .describe(
        'The text of lines startLine..endLine exactly as in the file ' +
          '(no line-number prefixes); empty when an outline is returned.',
      ),
    startLine: z.number().int().min(0),
    endLine: z.number().int().min(0),
    totalLines: z.number().int().min(0),
    hash: Sha256,
    outline: z.array(OutlineSymbol).optional(),
    hint: z.string().optional(),
  }),
  summary: 'Read a file (or a line range of it); large files return an outline of symbols instead.',
  tool: { tools: ['read_file'], call: (d) => ({ tool: 'read_file', input: d.path }) },
});

export const fileEdit = defineCommand('file.edit', {
  data: z
    .object({
      path: Path,
      edits: z.array(EditSpec).describe('Applied in order, each against the result of the previous.'),
    })
    .strict(),
  reply: AppliedReply,
  summary: 'Replace old_text with new_text in a file, once per edit, tolerating whitespace drift.',
  tool: { tools: ['edit_file'], call: (d) => ({ tool: 'edit_file', input: d.path, detail: editsDetail(d.edits) }) },
});

export const fileWrite = defineCommand('file.write', {
  data: z.object({ path: Path, content: z.string().describe('The whole new content of the file.') }).strict(),
  reply: AppliedReply,
  summary: 'Create or overwrite a file.',
  tool: { tools: ['write_file'], call: (d) => ({ tool: 'write_file', input: d.path, detail: d.content }) },
});

export const editBegin = defineCommand('edit.begin', {
  data: z.object({ path: Path, mode: z.enum(['edit', 'write']).default('edit') }).strict(),
  reply: z.object({ editId: EditId }),
  summary: 'Start a streaming edit; then send the tool-call JSON with edit.input and close with edit.finish.',
  tool: {
    tools: ['edit_file', 'write_file'],
    call: (d) => ({ tool: d.mode === 'write' ? 'write_file' : 'edit_file', input: d.path }),
  },
});

export const editInput = defineCommand('edit.input', {
  data: z.object({ editId: EditId, chunk: z.string().describe('The next raw text of the tool-call JSON.') }).strict(),
  reply: z.object({ editId: EditId, received: z.number().int().min(0), state: z.string() }),
  summary: "Feed the next chunk of a streaming edit's tool-call JSON.",
});

export const editFinish = defineCommand('edit.finish', {
  data: z.object({ editId: EditId }).strict(),
  reply: AppliedReply,
  summary: 'Finish a streaming edit: parse the complete JSON, apply and write.',
});

export const editCancel = defineCommand('edit.cancel', {
  data: z.object({ editId: EditId }).strict(),
  reply: z.object({ editId: EditId, cancelled: z.literal(true) }),
  summary: 'Abandon a streaming edit; nothing is written.',
});

export const editCommands = [fileRead, fileEdit, fileWrite, editBegin, editInput, editFinish, editCancel] as const;

// ---- facts ----

const byEdit = (d: { editId: string }) => d.editId;
const Ops = z.array(
  z.union([
    z.object({ op: z.literal('keep'), length: z.number().int().min(0) }),
    z.object({ op: z.literal('delete'), length: z.number().int().min(0) }),
    z.object({ op: z.literal('insert'), text: z.string() }),
  ]),
);

export const editStarted = defineEvent('edit.started', {
  data: z.object({
    editId: EditId,
    path: z.string(),
    mode: z.enum(['edit', 'write']),
    streaming: z.boolean(),
    baseHash: Sha256.nullable().describe('sha256 of the file bytes before the edit; null when the file did not exist.'),
  }),
  summary: 'An edit session started on a file.',
  aggregate: 'edit',
  aggregateId: byEdit,
  describe: (d) => `${d.mode} ${d.path}${d.streaming ? ' (streaming)' : ''}`,
});

export const editRangeMatched = defineEvent('edit.range.matched', {
  data: z.object({ editId: EditId, editIndex: z.number().int().min(0), startLine: Line, endLine: Line }),
  summary: 'Provisional location of the old text while it streams.',
  aggregate: 'edit',
  aggregateId: byEdit,
  describe: (d) => `#${d.editIndex} lines ${d.startLine}-${d.endLine} (provisional)`,
});

export const editRangeResolved = defineEvent('edit.range.resolved', {
  data: z.object({
    editId: EditId,
    editIndex: z.number().int().min(0),
    startLine: Line,
    endLine: Line,
    matchKind: MatchKind,
    similarity: z.number().min(0).max(1),
  }),
  summary: 'The old text of one edit resolved to a single range.',
  aggregate: 'edit',
  aggregateId: byEdit,
  describe: (d) => `#${d.editIndex} lines ${d.startLine}-${d.endLine} ${d.matchKind} ${d.similarity.toFixed(2)}`,
});

export const editRangeUnresolved = defineEvent('edit.range.unresolved', {
  data: z.object({ editId: EditId, editIndex: z.number().int().min(0), message: z.string(), stale: z.boolean() }),
  summary: 'The old text of one edit matched nothing.',
  aggregate: 'edit',
  aggregateId: byEdit,
});

export const editRangeAmbiguous = defineEvent('edit.range.ambiguous', {
  data: z.object({ editId: EditId, editIndex: z.number().int().min(0), lines: z.array(Line), message: z.string() }),
  summary: 'The old text of one edit matched several places.',
  aggregate: 'edit',
  aggregateId: byEdit,
  describe: (d) => `#${d.editIndex} lines ${d.lines.join(', ')}`,
});

export const editDiffProgressed = defineEvent('edit.diff.progressed', {
  data: z.object({
    editId: EditId,
    editIndex: z.number().int().min(0).describe('The edit; -1 is not used, write mode uses 0.'),
    rangeStart: z
      .number()
      .int()
      .min(0)
      .describe('UTF-16 offset of the replaced range in the text this edit applies to.'),
    ops: Ops.describe('keep/delete lengths are UTF-16 units of the old text from the cursor; insert is new text.'),
    final: z.boolean(),
  }),
  summary: 'Live preview: character operations turning the old range into the new text so far.',
  aggregate: 'edit',
  aggregateId: byEdit,
  stream: 'output',
});

export const editApplied = defineEvent('edit.applied', {
  data: z.object({
    editId: EditId,
    path: z.string().describe('Absolute path after resolving symlinks.'),
    mode: z.enum(['edit', 'write']),
    baseHash: Sha256.nullable().describe('sha256 of the bytes before; null when the file was created.'),
    resultHash: Sha256,
    created: z.boolean(),
    diff: z.string(),
    linesAdded: z.number().int().min(0),
    linesRemoved: z.number().int().min(0),
    edits: z.array(EditOutcomeInfo),
    partial: z.boolean().describe('Some edits failed; the ones before the failure were applied.'),
    lineEnding: z.enum(['lf', 'crlf', 'mixed']),
    bom: z.boolean(),
    syntaxErrors: SyntaxReport.optional(),
    records: z
      .array(ActionLogRecord)
      .optional()
      .describe(
        "The change's action-log records (the agent's log and each ancestor's, and logs outside that lineage " +
          'tracking the path), stored in this same append so the log never holds the outcome without them. ' +
          'Absent in logs written before they were carried: those have separate facts.',
      ),
    contentBytes: keptContentBytes(
      'the file before and after, which the review keeps whole to show and undo the change',
    ),
  }),
  summary: 'A change was written to disk.',
  aggregate: 'edit',
  aggregateId: byEdit,
  carries: (d) => carriedRecords(d.records ?? []),
  keeps: (d) => d.contentBytes ?? 0,
  describe: (d) => `${d.path} +${d.linesAdded} -${d.linesRemoved}${d.partial ? ' (partial)' : ''}`,
});

export const editWriting = defineEvent('edit.writing', {
  data: z.object({
    editId: EditId,
    path: z.string().describe('Absolute path about to be written.'),
    baseHash: Sha256.nullable().describe('sha256 of the bytes there now; null when the file does not exist.'),
    resultHash: Sha256.describe('sha256 of the bytes about to be written.'),
  }),
  summary:
    'Intent, appended before the disk is touched: a host that dies before edit.applied leaves this, and the ' +
    'next start compares the disk with both hashes (edit.abandoned says what it found).',
  aggregate: 'edit',
  aggregateId: byEdit,
  describe: (d) => `${d.path} ${d.baseHash?.slice(0, 8) ?? 'new'} → ${d.resultHash.slice(0, 8)}`,
});

export const editAbandoned = defineEvent('edit.abandoned', {
  data: z.object({
    editId: EditId,
    path: z.string(),
    reason: z.literal('host_restarted'),
    disk: z
      .enum(['not_written', 'unchanged', 'written', 'changed', 'unreadable'])
      .describe(
        'What the start found: no write was intended (not_written); the base is still there (unchanged); the ' +
          'intended bytes are there (written); something else is (changed); the file could not be read.',
      ),
    diskHash: Sha256.nullable().describe('sha256 of the bytes found; null when absent or not read.'),
    recorded: z.boolean().describe('The change found on disk was recorded in the action log (review shows it).'),
    tempFilesRemoved: z.number().int().min(0).describe('Leftover temp files of the atomic write removed.'),
  }),
  summary: 'An edit session the previous host left open (it died), closed at start with what is on disk.',
  aggregate: 'edit',
  aggregateId: byEdit,
  describe: (d) => `${d.path} abandoned (${d.reason}): disk ${d.disk}${d.recorded ? ', in review' : ''}`,
});

export const editFailed = defineEvent('edit.failed', {
  data: z.object({
    editId: EditId,
    path: z.string(),
    editIndex: z.number().int().min(0).optional(),
    code: z.string(),
    message: z.string(),
    appliedCount: z.number().int().min(0).describe('Edits applied (and written) before the failure.'),
  }),
  summary: 'An edit session ended without applying everything.',
  aggregate: 'edit',
  aggregateId: byEdit,
  describe: (d) => `${d.path}: ${d.message}`,
});

export const fileReadRecorded = defineEvent('file.read.recorded', {
  data: z.object({
    fileId: Token.describe('Stable id of the path: "f-" + 16 hex chars of sha256(path).'),
    path: z.string(),
    hash: Sha256,
    mtimeMs: z.number(),
    totalLines: z.number().int().min(0),
  }),
  summary: 'An agent read a file; this version is what it has seen.',
  aggregate: 'file',
  aggregateId: (d) => d.fileId,
  describe: (d) => `${d.path} (${d.totalLines} lines)`,
});

export const editEvents = [
  editStarted,
  editRangeMatched,
  editRangeResolved,
  editRangeUnresolved,
  editRangeAmbiguous,
  editDiffProgressed,
  editApplied,
  editWriting,
  editAbandoned,
  editFailed,
  fileReadRecorded,
] as const;

export type EditFact =
  | { type: 'edit.started'; data: z.infer<typeof editStarted.data> }
  | { type: 'edit.range.matched'; data: z.infer<typeof editRangeMatched.data> }
  | { type: 'edit.range.resolved'; data: z.infer<typeof editRangeResolved.data> }
  | { type: 'edit.range.unresolved'; data: z.infer<typeof editRangeUnresolved.data> }
  | { type: 'edit.range.ambiguous'; data: z.infer<typeof editRangeAmbiguous.data> }
  | { type: 'edit.diff.progressed'; data: z.infer<typeof editDiffProgressed.data> }
  | { type: 'edit.applied'; data: z.infer<typeof editApplied.data> }
  | { type: 'edit.writing'; data: z.infer<typeof editWriting.data> }
  | { type: 'edit.abandoned'; data: z.infer<typeof editAbandoned.data> }
  | { type: 'edit.failed'; data: z.infer<typeof editFailed.data> }
  | { type: 'file.read.recorded'; data: z.infer<typeof fileReadRecorded.data> };

/** An edit's replacements as a person reads them in an ask: each old text (`-`) and its new text (`+`). */
/** An edit's old and new texts as an ask shows them (`-` old, `+` new lines per edit). */
export function editsDetail(edits: readonly EditSpec[]): string {
  const lines = (prefix: string, text: string) => text.split('\n').map((line) => `${prefix}${line}`);
  return edits
    .map((e, i) =>
      [`@@ edit ${i + 1} of ${edits.length} @@`, ...lines('-', e.oldText), ...lines('+', e.newText)].join('\n'),
    )
    .join('\n');
}
