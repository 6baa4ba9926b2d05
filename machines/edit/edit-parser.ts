/**
 * @module
 * The streaming tool-call parser (after zed's `StreamingParser`): raw JSON
 * chunks of `{ path, edits: [{ old_text, new_text }] }` or `{ path, content }`
 * in, per-edit old/new text chunk events out. A trailing newline of old/new
 * text is held back until more text confirms it, `new_text` that arrives
 * before `old_text` is complete is buffered, and `finish()` parses the whole
 * input authoritatively (accepting `edits` given as a JSON string). Pure.
 */
import { type JsonPath, JsonScanner, JsonSyntaxError } from './edit-json.ts';
import type { EditSpec } from './edit-apply.ts';

export type EditEvent =
  | { type: 'old'; index: number; chunk: string; done: boolean }
  | { type: 'new'; index: number; chunk: string; done: boolean }
  | { type: 'content'; chunk: string; done: boolean };

export type ParsedToolInput = { path?: string; edits?: EditSpec[]; content?: string };

/** A malformed or truncated tool-call input, with the character offset where it went wrong. */
export class ToolInputError extends Error {
  override name = 'ToolInputError';
  readonly offset: number;
  /** The whole input is refused: the edits it completed before the fault are not written either. */
  readonly all: boolean;
  constructor(offset: number, message: string, all = false) {
    super(message);
    this.offset = offset;
    this.all = all;
  }
}

type EditState = {
  old: string;
  oldEmitted: number;
  oldDone: boolean;
  neu: string;
  newEmitted: number;
  newDone: boolean;
  /** The `done: true` new-text event went out. */
  newSent: boolean;
};

const OLD_KEYS = new Set(['old_text', 'oldText']);
const NEW_KEYS = new Set(['new_text', 'newText']);

export class StreamingEditParser {
  readonly #mode: 'edit' | 'write';
  readonly #scanner: JsonScanner;
  readonly #edits: EditState[] = [];
  #raw = '';
  /** A key given twice (`#onText`): what `finish` refuses. */
  #twice: ToolInputError | undefined;
  #content = '';
  #contentEmitted = 0;
  #out: EditEvent[] = [];

  constructor(mode: 'edit' | 'write') {
    this.#mode = mode;
    this.#scanner = new JsonScanner({
      stringChunk: (path, text) => this.#onText(path, text, false),
      stringEnd: (path, text) => this.#onText(path, text, true),
    });
  }

  /** Feeds raw tool-call JSON; returns the events it makes safe to emit. */
  push(chunk: string): EditEvent[] {
    this.#raw += chunk;
    this.#scanner.push(chunk);
    return this.#take();
  }

  /**
   * Parses the complete input and emits every remaining chunk with `done: true`.
   * Throws `ToolInputError` (naming the offset) when the JSON is malformed or truncated.
   */
  finish(): { events: EditEvent[]; input: ParsedToolInput } {
    if (this.#twice) throw this.#twice;
    const err = this.#scanner.error;
    if (err)
      throw new ToolInputError(
        err.offset,
        `The tool input is not valid JSON at offset ${err.offset}: ${err.message}. Send the complete JSON again.`,
      );
    if (!this.#scanner.complete) {
      const at = this.#raw.length;
      throw new ToolInputError(
        at,
        `The tool input is truncated at offset ${at}: it ends inside ` +
          `${this.#scanner.openDescription()}. Send the rest of the JSON before finishing.`,
      );
    }
    const input = decodeInput(JSON.parse(this.#raw), this.#raw.length);
    if (this.#mode === 'write') {
      const content = input.content ?? '';
      this.#emitContent(content, true);
    } else {
      (input.edits ?? []).forEach((e, i) => this.#finalizeEdit(i, e));
    }
    return { events: this.#take(), input };
  }

  #take(): EditEvent[] {
    const out = this.#out;
    this.#out = [];
    return out;
  }

  #state(i: number): EditState {
    while (this.#edits.length <= i)
      this.#edits.push({
        old: '',
        oldEmitted: 0,
        oldDone: false,
        neu: '',
        newEmitted: 0,
        newDone: false,
        newSent: false,
      });
    return this.#edits[i]!;
  }

  /**
   * A piece of a JSON string value at `path`; `end` when it is the string's last piece.
   * Streams `content` (write mode) or an edit's old_text/new_text; new_text is held back
   * until its old_text is complete.
   */
  #onText(path: JsonPath, text: string, end: boolean): void {
    if (this.#mode === 'write') {
      if (path.length === 1 && path[0] === 'content') {
        this.#content += text;
        this.#emitContent(this.#content, false);
      }
      return;
    }
    const field = editField(path);
    if (!field) return;
    const s = this.#state(field.index);
    // A key given twice: JSON parsers disagree on which value counts (the model's own reads the last, this one
    // streamed the first): refused at finish, never applied as something other than what the model meant.
    if (field.kind === 'old' ? s.oldDone : s.newDone) {
      const key = field.kind === 'old' ? 'old_text' : 'new_text';
      this.#twice ??= new ToolInputError(
        this.#raw.length,
        `edits[${field.index}] has "${key}" twice (or "edits" is given twice); nothing was written. Send each ` +
          'key once.',
        true,
      );
      return;
    }
    if (field.kind === 'old') {
      s.old += text;
      this.#emitOld(field.index, s, end);
      if (!end) return;
      s.oldDone = true;
      // new_text may have streamed first: release it now that old_text is complete.
      this.#emitNew(field.index, s, s.newDone);
    } else {
      s.neu += text;
      if (end) s.newDone = true;
      if (s.oldDone) this.#emitNew(field.index, s, end);
    }
  }

  #emitOld(index: number, s: EditState, done: boolean): void {
    const end = done ? s.old.length : safeEnd(s.old);
    if (end > s.oldEmitted || done) this.#out.push({ type: 'old', index, chunk: s.old.slice(s.oldEmitted, end), done });
    s.oldEmitted = end;
  }

  #emitNew(index: number, s: EditState, done: boolean): void {
    const end = done ? s.neu.length : safeEnd(s.neu);
    if (end > s.newEmitted || done) this.#out.push({ type: 'new', index, chunk: s.neu.slice(s.newEmitted, end), done });
    s.newEmitted = end;
    if (done) s.newSent = true;
  }

  #emitContent(full: string, done: boolean): void {
    if (done) {
      if (!full.startsWith(this.#content.slice(0, this.#contentEmitted)))
        throw new ToolInputError(
          this.#raw.length,
          'The streamed content does not agree with the final tool input. Send the tool call again.',
        );
      this.#out.push({ type: 'content', chunk: full.slice(this.#contentEmitted), done: true });
      this.#contentEmitted = full.length;
      return;
    }
    if (full.length > this.#contentEmitted) {
      this.#out.push({ type: 'content', chunk: full.slice(this.#contentEmitted), done: false });
      this.#contentEmitted = full.length;
    }
  }

  /** Emits whatever of edit `i` is still missing, from the fully parsed input. */
  #finalizeEdit(i: number, edit: EditSpec): void {
    const s = this.#state(i);
    if (!s.oldDone) {
      if (!edit.oldText.startsWith(s.old.slice(0, s.oldEmitted))) throw disagree();
      s.old = edit.oldText;
      this.#emitOld(i, s, true);
      s.oldDone = true;
    }
    if (!s.newSent) {
      if (!edit.newText.startsWith(s.neu.slice(0, s.newEmitted))) throw disagree();
      s.neu = edit.newText;
      s.newDone = true;
      this.#emitNew(i, s, true);
    }
  }
}

/** Which edit field a string path is: `['edits', i, 'old_text' | 'oldText' | 'new_text' | 'newText']`. */
function editField(path: JsonPath): { index: number; kind: 'old' | 'new' } | undefined {
  if (path.length !== 3 || path[0] !== 'edits' || typeof path[1] !== 'number') return undefined;
  const key = path[2] as string;
  if (OLD_KEYS.has(key)) return { index: path[1], kind: 'old' };
  if (NEW_KEYS.has(key)) return { index: path[1], kind: 'new' };
  return undefined;
}

/** Holds back one trailing newline (zed `safe_emit_end_for_edit_text`; escapes are held by the scanner). */
/**
 * How much of a streamed text is safe to emit: all but a trailing line ending (`\n`, `\r\n`, or a `\r` whose
 * `\n` may follow), which the done chunk must hold for its stripping (`finalNewText`): a `\r\n` split over two
 * chunks left the `\r` written in a mixed file where the one-shot edit stripped it (a review's fuzzer).
 */
function safeEnd(text: string): number {
  if (text.endsWith('\r\n')) return text.length - 2;
  return text.endsWith('\n') || text.endsWith('\r') ? text.length - 1 : text.length;
}

function disagree(): ToolInputError {
  return new ToolInputError(
    0,
    'The streamed edit text does not agree with the final tool input. Send the tool call again.',
  );
}

/** Validates the parsed tool input: `edits` as an array (or a JSON string of one) of `{ old_text, new_text }`. */
export function decodeInput(value: unknown, offset: number): ParsedToolInput {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ToolInputError(
      0,
      'The tool input must be a JSON object such as {"path": "...", "edits": [...]}. Send an object.',
    );
  const obj = value as Record<string, unknown>;
  const out: ParsedToolInput = {};
  if (typeof obj.path === 'string') out.path = obj.path;
  if (typeof obj.content === 'string') out.content = obj.content;
  let edits = obj.edits;
  if (typeof edits === 'string') {
    try {
      edits = JSON.parse(edits);
    } catch (err) {
      throw new ToolInputError(
        offset,
        `The "edits" string is not valid JSON (${(err as Error).message}). Send edits as an array.`,
      );
    }
  }
  if (edits !== undefined) {
    if (!Array.isArray(edits))
      throw new ToolInputError(offset, '"edits" must be an array of {"old_text", "new_text"} objects. Send an array.');
    out.edits = edits.map((e, i) => {
      const rec = (typeof e === 'object' && e !== null ? e : {}) as Record<string, unknown>;
      const oldText = rec.old_text ?? rec.oldText;
      const newText = rec.new_text ?? rec.newText;
      if (typeof oldText !== 'string')
        throw new ToolInputError(
          offset,
          `Edit ${i} has no "old_text" string. Give each edit an "old_text" and a "new_text".`,
        );
      if (typeof newText !== 'string')
        throw new ToolInputError(
          offset,
          `Edit ${i} has no "new_text" string. Give each edit an "old_text" and a "new_text".`,
        );
      return { oldText, newText };
    });
  }
  return out;
}

export { JsonSyntaxError };
