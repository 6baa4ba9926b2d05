/**
 * @module
 * One edit session's pure engine: parser events in, facts out. Old-text
 * chunks narrow the fuzzy matcher (provisional `edit.range.matched`), a
 * complete old text resolves to one range (`edit.range.resolved`) or fails
 * (`unresolved`/`ambiguous`), new-text chunks are re-indented and diffed
 * against the old range (`edit.diff.progressed`), and each finished edit is
 * spliced into the buffer before the next one resolves. Pure.
 */
import type { EditFact } from '../../schemas/edit.ts';
import type { EditId } from '../../schemas/ids.ts';
import {
  type EditFailure,
  type EditOutcome,
  type EditPlan,
  finalNewText,
  isFailure,
  planEdit,
  validateEdit,
} from './edit-apply.ts';
import { type CharOperation, StreamingDiff } from './edit-diff.ts';
import { StreamingFuzzyMatcher } from './edit-matcher.ts';
import { type EditEvent, StreamingEditParser, ToolInputError } from './edit-parser.ts';
import { Reindenter } from './edit-reindent.ts';
import { editErrors, lineStarts, rowOf } from './edit-text.ts';

export type SessionOptions = {
  editId: string;
  mode: 'edit' | 'write';
  /** The file's text (BOM removed, CRLF files as LF); '' for a new file. */
  buffer: string;
  /** The file changed on disk since the agent last read it. */
  stale: boolean;
  /**
   * A person approved this edit when it was asked about, seeing its old_text: a fuzzy match may replace only
   * lines old_text holds, spaces aside (`unshownLine`).
   */
  shownOnly?: boolean;
  /** Emit `edit.diff.progressed` facts (the live preview). */
  preview: boolean;
  /** The file uses CRLF (and the buffer was converted to LF): turn `\r\n` in old/new text into `\n` as it streams. */
  crlf?: boolean;
  /**
   * The largest file the edit may write, in bytes (`domains.edit.maxFileBytes`): a streamed input that cannot
   * end within it fails as it streams, not at `edit.finish` (found by a review: 36 MB sent against an 8 MiB limit
   * held 1.1 GB of the host's heap, ~30 bytes per character of the live preview).
   */
  maxFileBytes?: number;
};

/** JSON escapes a character in at most 6 (`\u0000`); an edit carries old and new text: 12 per byte, plus framing. */
const INPUT_PER_BYTE = 12;
const INPUT_FRAMING = 1 << 20;

/** `all`: the whole input is refused, edits completed before the fault included (a key given twice). */
export type SessionFailure =
  | EditFailure
  | { index?: number; reason: 'malformed'; message: string; offset: number; all?: boolean };

export type SessionResult = {
  /** The text to write: the buffer with every applied edit (or the written content). */
  content: string;
  outcomes: EditOutcome[];
  /** old/new text of each applied edit, as the model sent them (to re-apply if the file moved underneath). */
  specs: Array<{ oldText: string; newText: string }>;
  failure?: SessionFailure;
  /** The path given inside the tool-call JSON, if any. */
  inputPath?: string;
};

type Active = {
  index: number;
  matcher: StreamingFuzzyMatcher;
  old: string;
  plan?: EditPlan;
  neu: string;
  inserted: string;
  reindenter?: Reindenter;
  diff?: StreamingDiff;
  provisional?: string;
  /** A trailing `\r` of old/new text held until the next chunk shows whether `\n` follows. */
  oldCr: boolean;
  newCr: boolean;
};

export class EditSessionCore {
  readonly #opts: SessionOptions;
  readonly #parser: StreamingEditParser;
  #buffer: string;
  /** Line starts of `#buffer`, computed once per buffer version (for provisional line numbers). */
  #starts: number[] | undefined;
  #active: Active | undefined;
  #outcomes: EditOutcome[] = [];
  #specs: Array<{ oldText: string; newText: string }> = [];
  #failure: SessionFailure | undefined;
  #writeDiff: StreamingDiff | undefined;
  #content = '';
  /** A whole-file write's `\r` held back at a chunk's end (`#lf`). */
  #whole = { oldCr: false, newCr: false };
  #done = false;
  #inputPath: string | undefined;
  #received = 0;

  constructor(opts: SessionOptions) {
    this.#opts = opts;
    this.#buffer = opts.buffer;
    this.#parser = new StreamingEditParser(opts.mode);
  }

  get failed(): boolean {
    return this.#failure !== undefined;
  }
  get received(): number {
    return this.#received;
  }

  /** Feeds raw tool-call JSON. */
  push(chunk: string): EditFact[] {
    this.#received += chunk.length;
    if (this.#failure || this.#done) return [];
    const max = this.#opts.maxFileBytes;
    if (max !== undefined && this.#received > max * INPUT_PER_BYTE + INPUT_FRAMING) {
      this.#failure = {
        reason: 'malformed',
        message: tooLarge(`${this.#received} characters of input`, max),
        offset: 0,
      };
      return [];
    }
    const facts = this.#handle(this.#parser.push(chunk));
    // A file has at least one byte per character: content longer than the limit cannot fit it.
    if (max !== undefined && this.#content.length > max && !this.#failure)
      this.#failure = { reason: 'malformed', message: tooLarge(`${this.#content.length} characters`, max), offset: 0 };
    return facts;
  }

  /** Parses the complete input and finishes every edit. */
  finish(): EditFact[] {
    if (this.#failure || this.#done) return [];
    let events: EditEvent[];
    try {
      const fin = this.#parser.finish();
      events = fin.events;
      this.#inputPath = fin.input.path;
      if (this.#opts.mode === 'write' && fin.input.content === undefined) {
        this.#failure = {
          reason: 'malformed',
          message: 'The tool input has no "content" string. Send {"path": "...", "content": "..."}.',
          offset: 0,
        };
        return [];
      }
      if (this.#opts.mode === 'edit' && (fin.input.edits ?? []).length === 0) {
        this.#failure = { index: 0, reason: 'invalid', message: editErrors.noEdits() };
        return [];
      }
    } catch (err) {
      if (!(err instanceof ToolInputError)) throw err;
      this.#failure = {
        reason: 'malformed',
        message: err.message,
        offset: err.offset,
        ...(err.all ? { all: true } : {}),
      };
      return [];
    }
    const facts = this.#handle(events);
    this.#done = true;
    return facts;
  }

  /** Applies fully known edits (the one-shot `file.edit`) through the same path. */
  applyAll(edits: ReadonlyArray<{ oldText: string; newText: string }>): EditFact[] {
    if (edits.length === 0) {
      this.#failure = { index: 0, reason: 'invalid', message: editErrors.noEdits() };
      return [];
    }
    const events: EditEvent[] = edits.flatMap((e, index) => [
      { type: 'old' as const, index, chunk: e.oldText, done: true },
      { type: 'new' as const, index, chunk: e.newText, done: true },
    ]);
    const facts = this.#handle(events);
    this.#done = true;
    return facts;
  }

  /** Writes content fully known up front (the one-shot `file.write`). */
  writeAll(content: string): EditFact[] {
    const facts = this.#handle([{ type: 'content', chunk: content, done: true }]);
    this.#done = true;
    return facts;
  }

  result(): SessionResult {
    const content = this.#opts.mode === 'write' && !this.#failure ? this.#content : this.#buffer;
    return {
      content,
      outcomes: this.#outcomes,
      specs: this.#specs,
      ...(this.#failure ? { failure: this.#failure } : {}),
      ...(this.#inputPath !== undefined ? { inputPath: this.#inputPath } : {}),
    };
  }

  #handle(events: EditEvent[]): EditFact[] {
    const facts: EditFact[] = [];
    for (const ev of events) {
      if (this.#failure) break;
      if (ev.type === 'content') this.#onContent(ev.chunk, ev.done, facts);
      else if (ev.type === 'old') this.#onOld(ev.index, ev.chunk, ev.done, facts);
      else this.#onNew(ev.index, ev.chunk, ev.done, facts);
    }
    return facts;
  }

  #onContent(chunk: string, done: boolean, facts: EditFact[]): void {
    // As a one-shot write's (edit-service.ts): a CRLF file's content is made LF, its endings CRLF when written.
    chunk = this.#lf(this.#whole, 'newCr', chunk, done);
    this.#content += chunk;
    if (!this.#opts.preview) return;
    this.#writeDiff ??= new StreamingDiff(this.#buffer);
    const ops = [...this.#writeDiff.pushNew(chunk), ...(done ? this.#writeDiff.finish() : [])];
    this.#pushOps(0, 0, ops, done, facts);
  }

  #onOld(index: number, chunk: string, done: boolean, facts: EditFact[]): void {
    const a = this.#ensureActive(index);
    if (!a) return;
    chunk = this.#lf(a, 'oldCr', chunk, done);
    a.old += chunk;
    const provisional = a.matcher.push(chunk, done);
    if (!done) {
      if (provisional) {
        const starts = (this.#starts ??= lineStarts(this.#buffer));
        const startLine = rowOf(starts, provisional.start) + 1;
        const endLine = rowOf(starts, provisional.end) + 1;
        const key = `${startLine}:${endLine}`;
        if (key !== a.provisional) {
          a.provisional = key;
          facts.push({
            type: 'edit.range.matched',
            data: { editId: this.#id(), editIndex: index, startLine, endLine },
          });
        }
      }
      return;
    }
    if (a.old === '') {
      this.#failure = { index, reason: 'invalid', message: editErrors.emptyOldText(index) };
      return;
    }
    const plan = planEdit(this.#buffer, a.old, a.matcher.finish(), index, this.#opts.stale, this.#opts.shownOnly);
    if (isFailure(plan)) {
      this.#failure = plan;
      if (plan.reason === 'ambiguous') {
        facts.push({
          type: 'edit.range.ambiguous',
          data: { editId: this.#id(), editIndex: index, lines: plan.lines ?? [], message: plan.message },
        });
      } else {
        facts.push({
          type: 'edit.range.unresolved',
          data: { editId: this.#id(), editIndex: index, message: plan.message, stale: this.#opts.stale },
        });
      }
      return;
    }
    a.plan = plan;
    a.reindenter = new Reindenter(plan.first, plan.rest, plan.conversion, plan.indentMap);
    if (this.#opts.preview) a.diff = new StreamingDiff(this.#buffer.slice(plan.range.start, plan.range.end));
    facts.push({
      type: 'edit.range.resolved',
      data: {
        editId: this.#id(),
        editIndex: index,
        startLine: plan.startLine,
        endLine: plan.endLine,
        matchKind: plan.matchKind,
        similarity: round(plan.similarity),
      },
    });
  }

  #onNew(index: number, chunk: string, done: boolean, facts: EditFact[]): void {
    const a = this.#ensureActive(index);
    if (!a) return;
    if (!a.plan || !a.reindenter) {
      this.#failure = {
        index,
        reason: 'invalid',
        message: `Edit ${index} sent new_text before its old_text was complete. Send old_text first.`,
      };
      return;
    }
    chunk = this.#lf(a, 'newCr', chunk, done);
    a.neu += chunk;
    let text: string;
    if (done) {
      const invalid = validateEdit({ oldText: a.old, newText: a.neu }, index);
      if (invalid) {
        this.#failure = invalid;
        return;
      }
      const whole = finalNewText(a.neu, a.plan);
      // The held-back trailing newline is always in the done chunk, so stripping applies to it.
      const cut = a.neu.length - whole.length;
      text = a.reindenter.push(chunk.slice(0, chunk.length - cut)) + a.reindenter.finish();
    } else {
      text = a.reindenter.push(chunk);
    }
    a.inserted += text;
    if (a.diff) {
      const ops = [...a.diff.pushNew(text), ...(done ? a.diff.finish() : [])];
      this.#pushOps(index, a.plan.range.start, ops, done, facts);
    }
    if (!done) return;
    const { plan } = a;
    this.#buffer = this.#buffer.slice(0, plan.range.start) + a.inserted + this.#buffer.slice(plan.range.end);
    this.#starts = undefined;
    this.#outcomes.push({
      index,
      matchKind: plan.matchKind,
      similarity: round(plan.similarity),
      range: plan.range,
      startLine: plan.startLine,
      endLine: plan.endLine,
      inserted: a.inserted,
    });
    this.#specs.push({ oldText: a.old, newText: a.neu });
    this.#active = undefined;
  }

  #ensureActive(index: number): Active | undefined {
    if (this.#active && this.#active.index === index) return this.#active;
    const expected = this.#outcomes.length;
    if (index !== expected) {
      this.#failure = {
        index: expected,
        reason: 'invalid',
        message: `Edit ${expected} is incomplete: it needs both "old_text" and "new_text". Send whole edits in order.`,
      };
      return undefined;
    }
    this.#active = {
      index,
      matcher: new StreamingFuzzyMatcher(this.#buffer),
      old: '',
      neu: '',
      inserted: '',
      oldCr: false,
      newCr: false,
    };
    return this.#active;
  }

  #lf(a: Pick<Active, 'oldCr' | 'newCr'>, field: 'oldCr' | 'newCr', chunk: string, done: boolean): string {
    if (!this.#opts.crlf) return chunk;
    let text = (a[field] ? '\r' : '') + chunk;
    a[field] = !done && text.endsWith('\r');
    if (a[field]) text = text.slice(0, -1);
    return text.replace(/\r\n/g, '\n');
  }

  #pushOps(index: number, rangeStart: number, ops: CharOperation[], final: boolean, facts: EditFact[]): void {
    if (ops.length === 0 && !final) return;
    facts.push({
      type: 'edit.diff.progressed',
      data: { editId: this.#id(), editIndex: index, rangeStart, ops, final },
    });
  }

  #id(): EditId {
    return this.#opts.editId as EditId;
  }
}

function round(n: number): number {
  return Math.round(n * 1e4) / 1e4;
}

function tooLarge(what: string, max: number): string {
  return (
    `The streamed input is over what a ${max}-byte file can hold (${what} so far); nothing was written. Write a ` +
    'smaller file, or raise domains.edit.maxFileBytes in the runtime config.'
  );
}
