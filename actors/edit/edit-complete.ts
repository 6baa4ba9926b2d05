/**
 * @module
 * How an edit session ends: what its machine produced is committed (`edit-commit.ts`: the atomic write and
 * `edit.applied`), or the session is closed in the log with `edit.failed`, and the agent gets its reply or the
 * failure as an error that says what was applied and what to do. A tool input naming another path than the
 * one the edit began on writes nothing.
 */
import { resolve } from 'node:path';
import type { ActorRefFrom } from 'xstate';
import type { editSessionMachine } from '../../machines/edit/edit-session.ts';
import type { SessionFailure, SessionResult } from '../../machines/edit/edit-session-core.ts';
import { ErrorCode, RuntimeError, reasonOf, toErrorInfo } from '../../schemas/errors.ts';
import type { EditId } from '../../schemas/ids.ts';
import { editsDetail } from '../../schemas/edit.ts';
import { applyEdits } from '../../machines/edit/edit-apply.ts';
import {
  type AppliedReply,
  type CommitDeps,
  commitEdit,
  type EditCallContext,
  type EditTarget,
  type EncodedContent,
} from './edit-commit.ts';
import { failureMessage, successMessage } from './edit-report.ts';

/** An edit session: its id, owner, mode, target and machine. */
export type EditSession = {
  editId: EditId;
  agentId: string;
  mode: 'edit' | 'write';
  target: EditTarget;
  actor: ActorRefFrom<typeof editSessionMachine>;
  /** A whole-file write's content as the JSON thread encoded it (see `EncodedContent`). */
  encoded?: EncodedContent | undefined;
  /** A person approved the edit at its ask (`SessionOptions.shownOnly`). */
  shownOnly?: boolean | undefined;
};

/**
 * Writes what the (closed, flushed) session produced, emits `edit.applied`/`edit.failed`, and replies, or
 * throws the failure.
 */
export async function completeSession(deps: CommitDeps, ctx: EditCallContext, s: EditSession): Promise<AppliedReply> {
  const result: SessionResult = s.actor.getSnapshot().context.result;
  const { target } = s;
  const mismatch = pathMismatch(deps.roots, s, result);
  const failure = mismatch ?? result.failure;
  const refused = mismatch !== undefined || (failure !== undefined && 'all' in failure && failure.all === true);
  const nothing = refused || (s.mode === 'edit' ? result.outcomes.length === 0 : failure !== undefined);
  let written: Omit<AppliedReply, 'message'> | undefined;
  const progress = { written: false };
  if (!nothing) {
    try {
      written = await commitEdit(
        deps,
        ctx,
        {
          editId: s.editId,
          agentId: s.agentId,
          mode: s.mode,
          target: s.target,
          encoded: s.encoded,
          shownOnly: s.shownOnly,
        },
        result,
        failure !== undefined,
        progress,
      );
    } catch (err) {
      // Close the session in the log, then reply with the cause: nothing written (the write is atomic), or
      // written and not recorded (the log refused edit.applied), which the caller must know before editing again.
      const cause = progress.written ? writtenNotRecorded(err, target.display, s.editId) : err;
      const info = toErrorInfo(cause);
      const appliedCount = progress.written ? Math.max(1, result.outcomes.length) : 0;
      await ctx.emit({
        type: 'edit.failed',
        data: { editId: s.editId, path: target.path, code: info.code, message: info.message, appliedCount },
      });
      throw cause;
    }
  }
  if (failure) {
    await ctx.emit({
      type: 'edit.failed',
      data: {
        editId: s.editId,
        path: target.path,
        ...(failure.index !== undefined ? { editIndex: failure.index } : {}),
        code: failureCode(failure),
        message: failure.message,
        appliedCount: written ? result.outcomes.length : 0,
      },
    });
    throw new RuntimeError(failureCode(failure), failureMessage(failure.message, target.display, written?.diff ?? ''), {
      details: {
        editId: s.editId,
        appliedCount: written ? result.outcomes.length : 0,
        diff: written?.diff ?? '',
        ...('offset' in failure ? { offset: failure.offset } : {}),
      },
    });
  }
  const message =
    s.mode === 'write'
      ? `${written!.created ? 'Created' : 'Wrote'} ${target.display} successfully`
      : successMessage(target.display, result.outcomes);
  return { ...written!, message };
}

/** A tool input that names another path than the one the edit began on: nothing is written. */
function pathMismatch(roots: readonly string[], s: EditSession, result: SessionResult): SessionFailure | undefined {
  if (result.inputPath === undefined || result.inputPath === '') return undefined;
  const given = result.inputPath;
  const base = roots[0] ?? '/';
  if (given === s.target.display || given === s.target.path || resolve(base, given) === resolve(base, s.target.given))
    return undefined;
  return {
    reason: 'malformed',
    offset: 0,
    message:
      `The tool input names path ${JSON.stringify(given)} but the edit began ` +
      `on ${JSON.stringify(s.target.display)}. Begin a new edit for that path.`,
  };
}

/**
 * What a sealed session would write, as a person approving it is shown it: the edits that applied (old and new
 * text as sent) or the whole content; undefined when nothing would be written.
 */
export function toBeWritten(mode: 'edit' | 'write', result: SessionResult): string | undefined {
  if (mode === 'write') return result.failure ? undefined : result.content;
  return result.specs.length > 0 ? editsDetail(result.specs) : undefined;
}

/**
 * A person approved a session's edits: from now on they are `shownOnly` (also when applied again to a file that
 * moved). Its matching ran without it when the rules let edit.begin through and asked only at edit.finish: an
 * edit whose fuzzy match replaces a line its old_text lacks is refused (found by applying the edits again).
 */
export function approvedByPerson(s: EditSession): void {
  if (s.mode === 'edit' && !s.shownOnly && s.target.file) {
    const specs = s.actor.getSnapshot().context.result.specs;
    const failure = applyEdits(s.target.file.text, specs, { shownOnly: true }).failure;
    if (failure) throw new RuntimeError(ErrorCode.NotFound, `${failure.message} Nothing was written.`);
  }
  s.shownOnly = true;
}

/** The error code of a session's failure. */
export function failureCode(f: SessionFailure): string {
  if (f.reason === 'unresolved') return ErrorCode.NotFound;
  if (f.reason === 'ambiguous') return ErrorCode.Conflict;
  if (f.reason === 'malformed') return ErrorCode.InvalidJson;
  return ErrorCode.InvalidMessage;
}

/** A failure after the file was written: said as such, with the cause's code (an unavailable log stays so). */
function writtenNotRecorded(err: unknown, display: string, editId: string): RuntimeError {
  const info = toErrorInfo(err);
  return new RuntimeError(
    info.code as ErrorCode,
    `${display} was written, but the edit could not be recorded: ${reasonOf(err)}. The change stays on disk and ` +
      'reaches review once the log can be written; read the file before editing it again.',
    // The edit's id: the change it wrote is recorded under it (a start looks for it there).
    { retryable: false, details: { written: true, editId } },
  );
}
