import { createActor } from 'xstate';
import { finishedAgentError } from '../../machines/agent/agent.ts';
import { type EditSessionInput, editSessionMachine } from '../../machines/edit/edit-session.ts';
import { completeSession, type EditSession } from './edit-complete.ts';
import { editsDetail, type EditFact } from '../../schemas/edit.ts';
import { DEFAULT_MAX_OPEN_EDITS, DEFAULT_MAX_OPEN_EDITS_PER_HOST } from '../../schemas/edit-config.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import type { EditId } from '../../schemas/ids.ts';
import { newId } from '../../schemas/ids.ts';
import type { PerAgentSlots } from '../../machines/common/per-agent-slots.ts';
import { openEdits } from './open-edits.ts';
import { relativeInside } from '../../machines/common/confine.ts';
import { readConfined } from '../common/confined-fs.ts';
import {
  assertWellFormed,
  type ContentFacts,
  DEFAULT_MAX_FILE_BYTES,
  realRoots,
  resolveAndRead,
  resolveInWorkspace,
  decodeFile,
} from './file-io.ts';
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
  /** Called with the original bytes before a file is overwritten (content-addressed by `hash`). */
  storeBase?: (hash: string, bytes: Buffer) => void | Promise<void>;
  /** Where `storeBase` keeps the bytes of a hash (the diff thread reads a big base there). */
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
/** A session's editId and the commands run on it, serialized. */
type Session = EditSession & { pending: EditFact[]; lock: Promise<unknown> };
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
   * the workspace. `createParents` (file.write) creates missing parent directories, confined the same way.
   */
  async resolvePath(agentId: string, path: string, createParents = false): Promise<string> {
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
    const target = await this.#target(ctx.agentId, data.path, 'edit');
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
    const target = await this.#target(ctx.agentId, data.path, 'edit');
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
    const target = await this.#target(ctx.agentId, data.path, 'write');
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
      const target = await this.#target(ctx.agentId, data.path, mode);
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
      s.actor.send({ type: 'edit.finish' });
      await this.#flush(ctx, s);
      const result = s.actor.getSnapshot().context.result;
      if (s.mode === 'write') return result.failure ? undefined : result.content;
      return result.specs.length > 0 ? editsDetail(result.specs) : undefined;
    });
  }

  async finish(ctx: EditCallContext, data: { editId: string }): Promise<AppliedReply> {
    const s = this.#session(ctx.agentId, data.editId);
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

  async #target(agentId: string, given: string, mode: 'edit' | 'write'): Promise<Target> {
    // `dir/` names a directory, existing or not (the walk drops its empty last part: a write made a file `dir`).
    const namesDirectory = /\/\.?$/.test(given);
    // A whole-file write may create its parents (an agent without a shell `mkdir` could never make one).
    // One walk resolves and reads: the file is opened from the directory the walk reached.
    const resolved = namesDirectory
      ? undefined
      : await resolveAndRead(this.roots(agentId), given, this.maxFileBytes, mode === 'write');
    if (!resolved || resolved.isDirectory) {
      const what =
        mode === 'write' ? "Can't write to file: path is a directory" : "Can't edit file: path is a directory";
      throw new RuntimeError(ErrorCode.InvalidMessage, `${what}: ${JSON.stringify(given)}. Give the path of a file.`);
    }
    const display = await this.#display(agentId, resolved.path);
    if (!resolved.file) {
      if (mode === 'edit')
        throw new RuntimeError(
          ErrorCode.NotFound,
          `Can't edit file: path not found: ${JSON.stringify(given)}. ` +
            `Check the path, or create the file with write_file.`,
        );
      return { path: resolved.path, display, file: undefined, given };
    }
    // A whole-file write needs the old text only for its diff, made from the bytes on the diff thread: the
    // old file's decode and hash run there too (an edit needs the text here, for the matcher).
    const inspect = mode === 'write' ? this.#config.inspect : undefined;
    return { path: resolved.path, display, file: await decodeFile(resolved.file, given, inspect), given };
  }

  /** How a path is shown to an agent: relative to its workspace root when inside it. */
  displayPath(agentId: string, abs: string): Promise<string> {
    return this.#display(agentId, abs);
  }

  async #display(agentId: string, abs: string): Promise<string> {
    for (const root of await realRoots(this.roots(agentId))) {
      const rel = relativeInside(root, abs);
      if (rel !== undefined && rel !== '.') return rel;
    }
    return abs;
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
        storeBase: this.#config.storeBase,
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
