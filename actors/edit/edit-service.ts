import { createActor } from 'xstate';
import { finishedAgentError } from '../../machines/agent/agent.ts';
import { type EditSessionInput, editSessionMachine } from '../../machines/edit/edit-session.ts';
import { completeSession, failureCode, toBeWritten, approvedByPerson, type EditSession } from './edit-complete.ts';
import type { EditFact } from '../../schemas/edit.ts';
import { DEFAULT_MAX_OPEN_EDITS, DEFAULT_MAX_OPEN_EDITS_PER_HOST } from '../../schemas/edit-config.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import type { EditId } from '../../schemas/ids.ts';
import { newId } from '../../schemas/ids.ts';
import type { PerAgentSlots } from '../../machines/common/per-agent-slots.ts';
import { openEdits } from './open-edits.ts';
import { approvalErrors } from './edit-report.ts';
import { displayOf, resolveTarget } from './edit-target.ts';
import { readConfined } from '../common/confined-fs.ts';
import { assertWellFormed, type ContentFacts, DEFAULT_MAX_FILE_BYTES, resolveInWorkspace } from './file-io.ts';
import {
  DEFAULT_READ_LIMITS,
  fileIdOf,
  fileLines,
  type ReadLimits,
  type ReadReply,
  readRange,
  SeenVersions,
} from './file-read.ts';
import type { AppliedReply, CommitDeps, EditCallContext, EditTarget } from './edit-commit.ts';

export type { EditCallContext, Emit } from './edit-commit.ts';

export type EditServiceConfig = {
  /** Workspace roots per agent: a map, or a function of the agent id. */
  workspaceRoots: Record<string, readonly string[]> | ((agentId: string) => readonly string[]);
  maxFileBytes?: number;
  /** Streaming edits one agent may hold open (default DEFAULT_MAX_OPEN_EDITS). */
  maxOpenPerAgent?: number;
  /** Streaming edits all agents may hold open together (default DEFAULT_MAX_OPEN_EDITS_PER_HOST). */
  maxOpenPerHost?: number;
  readLimits?: ReadLimits;
  /** Keeps bytes by their `hash` (review's blob store): a file's before and after, before it is written. */
  storeBlob?: (hash: string, bytes: Buffer) => void | Promise<void>;
  /** Where `storeBlob` keeps the bytes of a hash (the diff thread reads a big base there). */
  storedBase?: (hash: string) => string;
  /** Run the tree-sitter syntax check after writes (default true). */
  syntaxCheck?: boolean;
  /** How a commit's diff is made (default: on this thread); see DiffThread. */
  diff?: CommitDeps['diff'];
  /**
   * The agent's status if it has finished, else undefined: asked in the turn a streaming edit is stored, so a
   * begin that passed the gate before its agent finished is either cancelled by the finish or refused here.
   */
  finished?: (agentId: string) => string | undefined;
  /** Where a big file's hash and UTF-8 check run for a whole-file write (default: this thread); see DiffThread. */
  inspect?: CommitDeps['inspect'];
};

export type { AppliedReply } from './edit-commit.ts';
type Target = EditTarget;
/** A session, its commands serialized; `approval`: a streamed edit is judged again at edit.finish (`seal`). */
type Session = EditSession & { pending: EditFact[]; lock: Promise<unknown>; approval?: 'open' | 'asking' | 'approved' };
/** Recently finished edit ids, for a better error than "no such edit" (bounded: one is kept per edit). */
const CLOSED_IDS_KEPT = 1000;

export class EditService {
  readonly #config: EditServiceConfig;
  readonly #seen = new SeenVersions();
  readonly #sessions = new Map<string, Session>();
  readonly #closed = new Set<string>();
  readonly #open: PerAgentSlots;

  constructor(config: EditServiceConfig) {
    this.#config = config;
    this.#open = openEdits(
      config.maxOpenPerAgent ?? DEFAULT_MAX_OPEN_EDITS,
      config.maxOpenPerHost ?? DEFAULT_MAX_OPEN_EDITS_PER_HOST,
    );
  }

  get maxFileBytes(): number {
    return this.#config.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  }

  /** The agent's roots. */
  roots(agentId: string): readonly string[] {
    const r = this.#config.workspaceRoots;
    return typeof r === 'function' ? r(agentId) : (r[agentId] ?? []);
  }

  /**
   * Resolves a path for `agentId` (for the permission gate and the action log): the real path, confined to
   * the workspace. `createParents` (file.write) creates missing parent directories, confined the same way;
   * `plan` (a streamed write, judged at its finish) gives the path they would make, creating nothing.
   */
  async resolvePath(agentId: string, path: string, createParents: boolean | 'plan' = false): Promise<string> {
    return (await resolveInWorkspace(this.roots(agentId), path, createParents)).path;
  }

  /**
   * The bytes at a resolved path as the action log records them (decoded as UTF-8 only when recorded), or null
   * when there is none to record (absent, or not a readable single-link regular file): confined like every
   * read, so a FIFO never blocks it. Bytes, not text: a 10 MB file's decode held the event loop for ~50 ms,
   * twice per write, only to find the change already recorded.
   */
  async readRecorded(agentId: string, path: string): Promise<Buffer | null> {
    try {
      const file = await readConfined(this.roots(agentId), path, this.maxFileBytes);
      return file ? file.bytes : null;
    } catch {
      return null;
    }
  }

  async read(
    ctx: EditCallContext,
    data: { path: string; startLine?: number | undefined; endLine?: number | undefined },
  ): Promise<ReadReply> {
    const target = await this.#target(ctx, data.path, 'edit');
    const file = target.file!;
    const reply = await readRange(file, target.display, data, this.#config.readLimits ?? DEFAULT_READ_LIMITS);
    this.#seen.set(ctx.agentId, file.path, { hash: file.hash, mtimeMs: file.mtimeMs });
    await ctx.emit({
      type: 'file.read.recorded',
      data: {
        fileId: fileIdOf(file.path),
        path: file.path,
        hash: file.hash,
        mtimeMs: file.mtimeMs,
        totalLines: fileLines(file.text).length,
      },
    });
    return reply;
  }

  async edit(
    ctx: EditCallContext,
    data: { path: string; edits: ReadonlyArray<{ oldText: string; newText: string }> },
  ): Promise<AppliedReply> {
    const target = await this.#target(ctx, data.path, 'edit');
    const edits =
      target.file?.lineEnding === 'crlf'
        ? data.edits.map((e) => ({ oldText: lf(e.oldText), newText: lf(e.newText) }))
        : data.edits;
    edits.forEach((e, i) => {
      assertWellFormed(e.oldText, `old_text of edit ${i}`);
      assertWellFormed(e.newText, `new_text of edit ${i}`);
    });
    const s = this.#start(ctx, target, 'edit', false);
    await this.#emitStarted(ctx, s, false);
    s.actor.send({ type: 'edit.apply', data: { edits: [...edits] } });
    return this.#complete(ctx, s);
  }

  /**
   * Writes a whole file. `encoded` is `data.content` as UTF-8 bytes with their sha256, when the host's JSON thread
   * made them (checked well-formed there): written as they are when the file's format allows (edit-commit.ts).
   */
  async write(
    ctx: EditCallContext,
    data: { path: string; content: string },
    encoded?: { bytes: Buffer; sha256: string; facts: ContentFacts },
  ): Promise<AppliedReply> {
    if (!encoded) assertWellFormed(data.content, 'content');
    const target = await this.#target(ctx, data.path, 'write');
    const s = this.#start(ctx, target, 'write', false);
    if (encoded && target.file?.lineEnding !== 'crlf') {
      s.encoded = { bytes: encoded.bytes, sha256: encoded.sha256, facts: encoded.facts, text: data.content };
    }
    await this.#emitStarted(ctx, s, false);
    s.actor.send({
      type: 'edit.write',
      data: { content: target.file?.lineEnding === 'crlf' ? lf(data.content) : data.content },
    });
    return this.#complete(ctx, s);
  }

  async begin(
    ctx: EditCallContext,
    data: { path: string; mode?: 'edit' | 'write' | undefined },
  ): Promise<{ editId: EditId }> {
    const mode = data.mode ?? 'edit';
    this.#open.take(ctx.agentId);
    let stored: Session | undefined;
    try {
      const target = await this.#target(ctx, data.path, mode);
      const finished = this.#config.finished?.(ctx.agentId);
      if (finished) throw finishedAgentError(ctx.agentId, finished, 'begin edits');
      stored = this.#start(ctx, target, mode, true);
      this.#sessions.set(stored.editId, stored);
      await this.#emitStarted(ctx, stored, true);
      return { editId: stored.editId };
    } finally {
      // A stored session gives its slot back when it is closed; a begin that stored none, now.
      if (!stored) this.#open.release(ctx.agentId);
    }
  }

  async input(
    ctx: EditCallContext,
    data: { editId: string; chunk: string },
  ): Promise<{ editId: EditId; received: number; state: string }> {
    const s = this.#session(ctx.agentId, data.editId);
    return this.#locked(s, async () => {
      s.actor.send({ type: 'edit.input', data: { chunk: data.chunk } });
      await this.#flush(ctx, s);
      const snap = s.actor.getSnapshot();
      const { failure, outcomes } = snap.context.result;
      if (snap.value === 'failed' && failure && outcomes.length > 0) {
        // The edits before the failed one are written only by edit.finish: under the path lock, recorded for
        // review, and asked about first when a person must approve (a write from here skipped all three).
        throw new RuntimeError(
          failureCode(failure),
          `${failure.message} The ${outcomes.length} edit(s) before it are not written yet: call edit.finish ` +
            'to write them, or edit.cancel to drop them.',
          { details: { editId: s.editId, appliedCount: 0 } },
        );
      }
      if (snap.value === 'failed') await this.#complete(ctx, s);
      return { editId: s.editId, received: snap.context.received, state: String(snap.value) };
    });
  }

  /**
   * Ends a streamed edit's input and works out its change without writing anything: what a person must see
   * before it is written (the edits that applied, as sent, or the whole content), or undefined when nothing
   * would be written. `finish` then writes it.
   */
  async seal(ctx: EditCallContext, data: { editId: string }): Promise<string | undefined> {
    const s = this.#session(ctx.agentId, data.editId);
    return this.#locked(s, async () => {
      if (s.approval === 'asking') throw approvalErrors.asking(s.editId);
      s.actor.send({ type: 'edit.finish' });
      await this.#flush(ctx, s);
      const shown = toBeWritten(s.mode, s.actor.getSnapshot().context.result);
      // Nothing would be written: nothing to ask about, finish reports why.
      if (s.approval === 'open') s.approval = shown === undefined ? 'approved' : 'asking';
      return shown;
    });
  }

  /** A session to judge at edit.finish: what to ask about, or undefined when it needs no judgment now. */
  approvalNeeded(agentId: string, editId: string): { mode: 'edit' | 'write'; given: string } | undefined {
    const s = this.#sessions.get(editId);
    const open = s?.agentId === agentId && s.approval !== undefined && s.approval !== 'approved';
    return open ? { mode: s.mode, given: s.target.given } : undefined;
  }

  /** A person approved what `seal` showed: `finish` may write it. */
  approve(agentId: string, editId: string, byPerson = false): void {
    const s = this.#session(agentId, editId);
    if (byPerson) approvedByPerson(s);
    if (s.approval === 'asking') s.approval = 'approved';
  }

  async finish(ctx: EditCallContext, data: { editId: string }): Promise<AppliedReply> {
    const s = this.#session(ctx.agentId, data.editId);
    if (s.approval !== undefined && s.approval !== 'approved') throw approvalErrors.notApproved(s.editId);
    return this.#locked(s, async () => {
      s.actor.send({ type: 'edit.finish' });
      return this.#complete(ctx, s);
    });
  }

  async cancel(
    ctx: EditCallContext,
    data: { editId: string },
    message = 'The edit was cancelled; nothing was written.',
  ): Promise<{ editId: EditId; cancelled: true }> {
    const s = this.#session(ctx.agentId, data.editId);
    return this.#locked(s, async () => {
      s.actor.send({ type: 'edit.cancel' });
      this.#close(s);
      await ctx.emit({
        type: 'edit.failed',
        data: {
          editId: s.editId,
          path: s.target.path,
          code: 'cancelled',
          message,
          appliedCount: 0,
        },
      });
      return { editId: s.editId, cancelled: true as const };
    });
  }

  #target(ctx: EditCallContext, given: string, mode: 'edit' | 'write'): Promise<Target> {
    const inspect = this.#config.inspect;
    const limits = { maxFileBytes: this.maxFileBytes, ...(inspect ? { inspect } : {}) };
    return resolveTarget(this.roots(ctx.agentId), given, mode, limits, ctx.expectedPath);
  }

  /** How a path is shown to an agent: relative to its workspace root when inside it. */
  displayPath(agentId: string, abs: string): Promise<string> {
    return displayOf(this.roots(agentId), abs);
  }

  #start(ctx: EditCallContext, target: Target, mode: 'edit' | 'write', preview: boolean): Session {
    const editId = newId('e') as EditId;
    const input: EditSessionInput = {
      editId,
      mode,
      // A write's buffer serves only its streamed preview diff: not decoded for a plain file.write.
      buffer: mode === 'write' && !preview ? '' : (target.file?.text ?? ''),
      stale: target.file ? this.#seen.isStale(ctx.agentId, target.file) : false,
      ...(ctx.shownOnly ? { shownOnly: true } : {}),
      preview,
      crlf: target.file?.lineEnding === 'crlf',
      maxFileBytes: this.maxFileBytes,
    };
    const actor = createActor(editSessionMachine, { input });
    const s: Session = {
      editId,
      agentId: ctx.agentId,
      mode,
      target,
      actor,
      pending: [],
      lock: Promise.resolve(),
      ...(ctx.shownOnly ? { shownOnly: true } : {}),
      // Streamed: its content comes after the gate judged edit.begin; edit.finish judges it again (seal, approve).
      ...(preview && ctx.judgedAtFinish ? { approval: 'open' as const } : {}),
    };
    actor.on('*', (fact) => s.pending.push(fact as EditFact));
    actor.start();
    return s;
  }

  async #emitStarted(ctx: EditCallContext, s: Session, streaming: boolean): Promise<void> {
    await ctx.emit({
      type: 'edit.started',
      data: { editId: s.editId, path: s.target.path, mode: s.mode, streaming, baseHash: s.target.file?.hash ?? null },
    });
  }

  async #flush(ctx: EditCallContext, s: Session): Promise<void> {
    while (s.pending.length > 0) await ctx.emit(s.pending.shift()!);
  }

  /** Writes what the session produced, emits `edit.applied`/`edit.failed`, and replies (or throws the failure). */
  async #complete(ctx: EditCallContext, s: Session): Promise<AppliedReply> {
    this.#close(s);
    await this.#flush(ctx, s);
    return completeSession(
      {
        roots: this.roots(s.agentId),
        maxFileBytes: this.maxFileBytes,
        storeBlob: this.#config.storeBlob,
        storedBase: this.#config.storedBase,
        syntaxCheck: this.#config.syntaxCheck !== false,
        seen: this.#seen,
        diff: this.#config.diff,
        inspect: this.#config.inspect,
      },
      ctx,
      s,
    );
  }

  /** The ids of the agent's open streaming edits, from the moment each is stored (in its begin's turn). */
  openEditIds(agentId: string): string[] {
    return [...this.#sessions.values()].filter((s) => s.agentId === agentId).map((s) => s.editId);
  }

  #session(agentId: string, editId: string): Session {
    const s = this.#sessions.get(editId);
    if (s && s.agentId === agentId) return s;
    if (this.#closed.has(editId))
      throw new RuntimeError(
        ErrorCode.InvalidState,
        `Edit ${JSON.stringify(editId)} is already finished. Begin a new edit with edit.begin.`,
      );
    throw new RuntimeError(
      ErrorCode.NotFound,
      `No streaming edit ${JSON.stringify(editId)} for this agent. ` +
        `Begin one with edit.begin and use the editId it returns.`,
    );
  }

  #close(s: Session): void {
    if (this.#sessions.delete(s.editId)) {
      this.#closed.add(s.editId);
      if (this.#closed.size > CLOSED_IDS_KEPT) this.#closed.delete(this.#closed.values().next().value!);
      this.#open.release(s.agentId);
    }
    s.actor.stop();
  }

  /** Serializes commands of one session (chunks must be applied in order). */
  #locked<T>(s: Session, run: () => Promise<T>): Promise<T> {
    const next = s.lock.then(() => {
      if (!this.#sessions.has(s.editId)) return this.#session(s.agentId, s.editId) as never;
      return run();
    });
    s.lock = next.catch(() => undefined);
    return next;
  }
}

function lf(text: string): string {
  return text.replace(/\r\n/g, '\n');
}
