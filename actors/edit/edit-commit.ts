/**
 * @module
 * The commit step of an edit session: re-apply the edits to the file as it is now on disk (it may have moved
 * while the edit streamed), encode with the file's BOM and line endings, write it through the confined walk,
 * and report the diff, the syntax check and the `edit.applied` fact. Called once per session by `EditService`.
 */
import { applyEdits } from '../../machines/edit/edit-apply.ts';
import type { SessionResult } from '../../machines/edit/edit-session-core.ts';
import type { Logger } from 'pino';
import type { ActionLogRecord, EditFact, EditOutcomeInfo, SyntaxReport } from '../../schemas/edit.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import type { EditId } from '../../schemas/ids.ts';
import { changedWhileWriting, type ConfinedFile, readConfined, writeConfined } from '../common/confined-fs.ts';
import { cappedDiff, type DiffReport } from './edit-report.ts';
import { type DiffSide, INSPECT_OFF_THREAD_BYTES, type Stored } from './diff-thread.ts';
import {
  assertWellFormed,
  type ContentFacts,
  decodeFile,
  detectLineEnding,
  encodeText,
  type InspectFile,
  type LineEnding,
  sha256,
  type TextFile,
} from './file-io.ts';
import type { SeenVersions } from './file-read.ts';
import { checkSyntax, SYNTAX_CHECK_MAX_CHARS } from './syntax.ts';

export type Emit = (fact: EditFact) => Promise<void>;
/** Who is calling and how its facts are appended (the handler's `ctx`). */
export type EditCallContext = {
  agentId: string;
  emit: Emit;
  log?: Logger | undefined;
  /**
   * The action log, when the caller records this call's change there: the commit asks it for the change's
   * records and carries them in `edit.applied` (one append: the log never holds the outcome without them),
   * then tells it they are stored. Without it, `edit.applied` carries none.
   */
  actionLog?: ActionLogRecorder | undefined;
  /** A person approved this call, seeing its old_text: see `SessionOptions.shownOnly`. */
  shownOnly?: boolean | undefined;
  /**
   * A streamed edit begun with this is written only once its content was judged at edit.finish
   * (`EditService.seal`, `approve`): the edit domain's, whose gate judged edit.begin by its path alone.
   */
  judgedAtFinish?: boolean | undefined;
  /** The path as the gate judged it (`HandlerContext.resolvedPath`): the target must be that file. */
  expectedPath?: string | undefined;
};

/** A change an edit wrote: the bytes before (null: created) and after. */
export type WrittenChange = {
  path: string;
  before: Buffer | null;
  /** sha256 of `before` (null when it is). */
  beforeHash: string | null;
  after: Buffer;
  /** sha256 of `after`. */
  afterHash: string;
  mode: 'edit' | 'write';
  editId: EditId;
};
export type ActionLogRecorder = {
  /**
   * Called right after the commit read the file it writes (before it writes): what running commands changed there
   * since the changes were first taken (under the path lock, before the edit began) is taken again, as theirs.
   */
  read?(path: string): Promise<void>;
  /** The records of `change` (blobs stored), or none when the log records nothing for it. */
  plan(change: WrittenChange): Promise<ActionLogRecord[]>;
  /** Called once the `edit.applied` carrying `records` is stored. */
  stored(records: ActionLogRecord[]): void;
};

/** The file an edit session is about: its absolute path, how it is shown, and its content when it began. */
export type EditTarget = { path: string; display: string; file: TextFile | undefined; given: string };

export type AppliedReply = {
  editId: EditId;
  path: string;
  mode: 'edit' | 'write';
  created: boolean;
  diff: string;
  linesAdded: number;
  linesRemoved: number;
  edits: EditOutcomeInfo[];
  syntaxErrors?: SyntaxReport;
  message: string;
};

/** What the commit needs of the service: the agent's roots, limits, the base store and the seen versions. */
export type CommitDeps = {
  roots: readonly string[];
  maxFileBytes: number;
  /** Keeps bytes by their `hash` (review's blob store): a file's before and after, before it is written. */
  storeBlob?: ((hash: string, bytes: Buffer) => void | Promise<void>) | undefined;
  /** Where `storeBlob` keeps the bytes of `hash` (the diff thread reads them there). */
  storedBase?: ((hash: string) => string) | undefined;
  syntaxCheck: boolean;
  seen: SeenVersions;
  /** The diff of a commit (`cappedDiff` on this thread unless given: the edit wiring moves big ones off it). */
  diff?: ((display: string, before: DiffSide, after: DiffSide) => Promise<DiffReport>) | undefined;
  /** Finds a big file's facts off the event loop (the edit wiring's diff thread); see `decodeFile`. */
  inspect?: InspectFile | undefined;
};

/**
 * A whole-file write's text as the JSON thread encoded it: `bytes` is exactly `Buffer.from(text, 'utf8')`,
 * `sha256` their hash and `facts` what it found in the text (infra/transport/json-thread.ts), so a 10 MB write
 * is not encoded, hashed or scanned again here (the text is a rope its characters are never read from).
 */
export type EncodedContent = { text: string; bytes: Buffer; sha256: string; facts: ContentFacts };

/** The session being committed. */
export type CommitSession = {
  editId: EditId;
  agentId: string;
  mode: 'edit' | 'write';
  target: EditTarget;
  encoded?: EncodedContent | undefined;
  /** See `SessionOptions.shownOnly`: kept when the edits are applied again to a file that moved. */
  shownOnly?: boolean | undefined;
};

/** Writes what the session produced and emits `edit.applied`; throws (having written nothing) on failure. */
export async function commitEdit(
  deps: CommitDeps,
  ctx: EditCallContext,
  s: CommitSession,
  result: SessionResult,
  partial: boolean,
  /** Set once the file is written: a failure after that must not say nothing was. */
  progress?: { written: boolean },
): Promise<Omit<AppliedReply, 'message'>> {
  const { target } = s;
  // Bytes the JSON thread made were checked there (a lone surrogate never becomes bytes).
  if (!(s.encoded && s.encoded.text === result.content)) assertWellFormed(result.content, 'new text');
  // A command writing the file between the re-read and the rename (`replaces`) is a conflict the write finds;
  // read, apply and write again, a few times: a log a command appends to every few ms is still editable.
  for (let attempt = 1; ; attempt++) {
    const p = await prepareWrite(deps, ctx, s, result);
    if (!p.written) return finishCommit(deps, ctx, s, result, partial, p, p.base?.mtimeMs ?? 0);
    const { base, read, bytes, resultHash } = p;
    if (base) await deps.storeBlob?.(base.hash, base.bytes);
    // The new bytes too, before the file changes: review keeps both sides, and a data disk too full to keep them
    // must refuse the edit before the write (it failed after it, and said nothing was written while it was).
    await deps.storeBlob?.(resultHash, bytes);
    // Intent before effect: a host that dies between here and edit.applied leaves this in the log, and the
    // next start compares the disk with both hashes (infra/edit/reconcile.ts).
    await ctx.emit({
      type: 'edit.writing',
      data: { editId: s.editId, path: target.path, baseHash: base?.hash ?? null, resultHash },
    });
    // Confined again at write time: the path is walked from the root without following symlinks out, and must
    // still lead where it did when the target was resolved (and judged).
    // With the mode the file has now (a chmod while the edit streamed is kept), and only over the very file read
    // just now, or where none is: a command's write or new file meanwhile is a conflict, never lost under this.
    const mode = read?.mode ?? base?.mode;
    const replaces = read?.stamp ?? null;
    let mtimeMs: number;
    try {
      ({ mtimeMs } = await writeConfined(deps.roots, target.path, bytes, mode, target.display, target.path, replaces));
    } catch (err) {
      if (attempt < WRITE_ATTEMPTS && replaces !== null && changedWhileWriting(err)) continue;
      throw err;
    }
    if (progress) progress.written = true;
    return finishCommit(deps, ctx, s, result, partial, p, mtimeMs);
  }
}

/** Reads, applies and writes this many times before a file a command keeps changing is a conflict. */
const WRITE_ATTEMPTS = 4;

type Prepared = {
  base: TextFile | undefined;
  read: ConfinedFile | undefined;
  content: string;
  facts: ContentFacts | undefined;
  bytes: Buffer;
  resultHash: string;
  written: boolean;
};

/**
 * The file as it is now and what the commit writes over it: the edits applied again to a file that moved since
 * the session read it (a write's content as it is), encoded in the file's format.
 */
async function prepareWrite(
  deps: CommitDeps,
  ctx: EditCallContext,
  s: CommitSession,
  result: SessionResult,
): Promise<Prepared> {
  const { target } = s;
  let content = result.content;
  let base = target.file;
  // The file may have moved on disk while the edit streamed: re-apply the edits to what is there now. The
  // same bytes are the base as read (not decoded and hashed again: a 10 MB file's took ~100 ms of this thread).
  // A file that was not there is looked for too: one a command made meanwhile is not written over (below).
  let why: unknown;
  const read = await readConfined(deps.roots, target.path, deps.maxFileBytes, target.display).catch((err) => {
    why = err;
    return undefined;
  });
  if (!base && read) {
    throw new RuntimeError(
      ErrorCode.Conflict,
      `${target.display} was created on disk since this edit found no file there; nothing was written. Read it ` +
        'and edit it, or write it again (the write then replaces it, and review shows what it replaced).',
    );
  }
  await ctx.actionLog?.read?.(target.path);
  // A big file is hashed on the file thread (`deps.inspect`), not compared here: comparing 10 MB held this thread
  // 20-80 ms on a loaded machine. A thread that died with the bytes fails the commit (retryable), as nothing is
  // written yet; a file that cannot be read or decoded now fails it too (below).
  const small = read !== undefined && (!deps.inspect || read.bytes.byteLength < INSPECT_OFF_THREAD_BYTES);
  const unchanged = base && read && small && read.bytes.equals(base.bytes);
  const now =
    base && read && !unchanged
      ? await decodeFile(read, target.display, deps.inspect).catch((err: unknown) => {
          if (err instanceof RuntimeError && err.code === ErrorCode.Unavailable) throw err;
          return undefined;
        })
      : undefined;
  if (base && (!read || (!unchanged && !now))) {
    // Gone, grown past the limit, or no longer text since it was read: writing the edit onto the old base would
    // silently undo whatever changed it (and review would show a change from a base the disk no longer had).
    const reason = why instanceof RuntimeError ? ` (${why.message})` : '';
    throw new RuntimeError(
      ErrorCode.Conflict,
      `${target.display} changed on disk since the edit read it and cannot be read as text now${reason}; ` +
        'nothing was written. Please read the file again to get the current content.',
    );
  }
  if (base && now && now.hash !== base.hash) {
    if (s.mode === 'edit') {
      const again = applyEdits(now.text, result.specs, { shownOnly: s.shownOnly ?? false });
      if (again.failure) {
        throw new RuntimeError(
          ErrorCode.Conflict,
          `${target.display} changed on disk while the edit was streaming and the edits no longer ` +
            `apply (${again.failure.message}) Please read the file again to get the current content.`,
        );
      }
      content = again.content;
    }
    base = now;
  }
  // A new file is written exactly as given; an existing one keeps its BOM and line endings.
  const format = base ?? { bom: false, lineEnding: 'mixed' as const };
  // What the JSON thread found in this very text, else found here.
  const facts = s.encoded && s.encoded.text === content ? s.encoded.facts : undefined;
  const { bytes, hash: resultHash } = encodeFor(content, format, s.encoded);
  if (bytes.length > deps.maxFileBytes) {
    throw new RuntimeError(
      ErrorCode.LimitExceeded,
      `The new content of ${JSON.stringify(target.display)} would be ${bytes.length} bytes, ` +
        `over the ${deps.maxFileBytes}-byte limit. ` +
        'Write a smaller file, or raise domains.edit.maxFileBytes in the runtime config.',
    );
  }
  // By hash (both are the sha256 of the bytes): comparing 10 MB took 20-80 ms of this thread on a loaded machine.
  return { base, read, content, facts, bytes, resultHash, written: !base || resultHash !== base.hash };
}
/** After the write (or none, the bytes unchanged): the diff, the syntax check and `edit.applied`, replied. */
async function finishCommit(
  deps: CommitDeps,
  ctx: EditCallContext,
  s: CommitSession,
  result: SessionResult,
  partial: boolean,
  p: Prepared,
  mtimeMs: number,
): Promise<Omit<AppliedReply, 'message'>> {
  const { target } = s;
  const { base, content, facts, bytes, resultHash, written } = p;
  const created = base === undefined;
  const format = base ?? { bom: false, lineEnding: 'mixed' as const };
  deps.seen.set(s.agentId, target.path, { hash: resultHash, mtimeMs });
  // The diff thread reads its own copies where it can, checked by hash: the base as the blob store keeps it
  // (stored above, when the bytes changed) and the bytes just written.
  const baseCopy = base && deps.storedBase ? { file: deps.storedBase(base.hash), hash: base.hash } : undefined;
  // The file is written: a diff thread that died gives way to the capped diff here, not to a failed edit.
  const report = deps.diff
    ? await deps
        .diff(
          target.display,
          base ? { bytes: base.bytes, text: () => base.text, stored: baseCopy } : '',
          afterSide(content, bytes, { file: target.path, hash: resultHash }, facts),
        )
        .catch((err: unknown) => {
          ctx.log?.warn({ err, editId: s.editId }, 'the diff thread failed; diffing here');
          return cappedDiff(target.display, base?.text ?? '', content);
        })
    : cappedDiff(target.display, base?.text ?? '', content);
  let syntaxErrors: SyntaxReport | undefined;
  // checkSyntax skips big changes too, but only after `base.text`, which a big write never decodes here.
  if (deps.syntaxCheck && content.length + (base?.textLength ?? 0) <= SYNTAX_CHECK_MAX_CHARS) {
    syntaxErrors = await checkSyntax(target.path, base?.text, content).catch((err: unknown) => {
      ctx.log?.warn({ err, editId: s.editId }, 'syntax check failed');
      return undefined;
    });
  }
  const edits: EditOutcomeInfo[] = result.outcomes.map((o) => ({
    index: o.index,
    matchKind: o.matchKind,
    similarity: o.similarity,
    startLine: o.startLine,
    endLine: o.endLine,
  }));
  // The action-log records ride in the outcome's own append (none when nothing was written).
  const records = written
    ? ((await ctx.actionLog?.plan({
        path: target.path,
        before: base?.bytes ?? null,
        beforeHash: base?.hash ?? null,
        after: bytes,
        afterHash: resultHash,
        mode: s.mode,
        editId: s.editId,
      })) ?? [])
    : [];
  await ctx.emit({
    type: 'edit.applied',
    data: {
      editId: s.editId,
      path: target.path,
      mode: s.mode,
      baseHash: base?.hash ?? null,
      resultHash,
      created,
      ...report,
      edits,
      partial,
      lineEnding: base ? base.lineEnding : (facts?.lineEnding ?? detectLineEnding(content)),
      bom: format.bom,
      ...(syntaxErrors ? { syntaxErrors } : {}),
      ...(records.length > 0 ? { records } : {}),
      // What the review keeps of this change (both sides, whole, as blobs): charged with the fact.
      ...(written ? { contentBytes: bytes.length + (base?.bytes.length ?? 0) } : {}),
    },
  });
  if (records.length > 0) ctx.actionLog?.stored(records);
  return {
    editId: s.editId,
    path: target.display,
    mode: s.mode,
    created,
    ...report,
    edits,
    ...(syntaxErrors ? { syntaxErrors } : {}),
  };
}

/** The UTF-8 byte order mark, put before the bytes of a file that had one. */
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * `content` encoded in `format` (as `encodeText`) and its sha256: the JSON thread's bytes when `encoded` is this
 * very text and the format changes no line ending (a BOM is put before them), else encoded and hashed here.
 */
export function encodeFor(
  content: string,
  format: { bom: boolean; lineEnding: LineEnding },
  encoded: EncodedContent | undefined,
): { bytes: Buffer; hash: string } {
  const same =
    encoded !== undefined &&
    encoded.text === content &&
    (format.lineEnding === 'mixed' || (format.lineEnding === 'lf' && !encoded.facts.crlf));
  if (!same) {
    const bytes = encodeText(content, format);
    return { bytes, hash: sha256(bytes) };
  }
  if (!format.bom || encoded.bytes.subarray(0, BOM.length).equals(BOM)) {
    return { bytes: encoded.bytes, hash: encoded.sha256 };
  }
  const bytes = Buffer.concat([BOM, encoded.bytes]);
  return { bytes, hash: sha256(bytes) };
}

/**
 * The new content as a diff side: the bytes written when they decode back to exactly `content` (no CR, no NUL
 * and no BOM character in it: then `decodeText(bytes).text === content` whatever the file's format), so a big
 * write is not encoded to UTF-8 a second time for the diff thread; else the text. `facts`: the JSON thread's
 * about `content` (its characters are then never read here).
 */
function afterSide(content: string, bytes: Buffer, stored: Stored, facts?: ContentFacts): DiffSide {
  const plain = facts
    ? !facts.cr && !facts.nul && !facts.bom
    : !content.includes('\r') && !content.includes('\0') && content.charCodeAt(0) !== 0xfeff;
  if (!plain) return content;
  return { bytes, text: () => content, stored };
}
