/**
 * @module
 * An incremental JSON scanner for streamed tool-call input. It reads the raw
 * text chunk by chunk and reports string values as decoded fragments with
 * their path (`['edits', 0, 'old_text']`), so no snapshot is ever re-parsed.
 * A fragment never ends inside an escape (`\`, `\u12`) or between the two
 * halves of a surrogate pair. Pure.
 */

export type JsonPath = Array<string | number>;

export type JsonScanListener = {
  stringStart?(path: JsonPath): void;
  stringChunk?(path: JsonPath, text: string): void;
  /** The string closed; `text` is its last decoded fragment (possibly ''). */
  stringEnd?(path: JsonPath, text: string): void;
  /** An object or array closed at `path`. */
  containerEnd?(path: JsonPath, kind: 'object' | 'array'): void;
};

/**
 * How deep objects and arrays may nest. A tool call's input nests three deep (`{"edits": [{…}]}`); every level
 * is a frame held until it closes: unbounded, 10 Mi characters of `[` held 673 MB, and a streamed edit may send
 * about 100 Mi before its size bound.
 */
export const MAX_JSON_DEPTH = 64;

export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
  readonly offset: number;
  constructor(offset: number, message: string) {
    super(message);
    this.offset = offset;
  }
}

type Frame =
  | { kind: 'object'; key: string | undefined; expect: 'key' | 'colon' | 'value' | 'comma'; sawMember: boolean }
  | { kind: 'array'; index: number; expect: 'value' | 'comma'; sawItem: boolean };

type Mode = 'value' | 'string' | 'literal' | 'done';

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

export class JsonScanner {
  readonly #listener: JsonScanListener;
  readonly #stack: Frame[] = [];
  #mode: Mode = 'value';
  #offset = 0;
  #error: JsonSyntaxError | undefined;
  /** In a string: is it a key, decoded text not yet reported, and a pending escape. */
  #isKey = false;
  #decoded = '';
  #key = '';
  #escape: string | undefined;
  #literal = '';

  constructor(listener: JsonScanListener) {
    this.#listener = listener;
  }

  get error(): JsonSyntaxError | undefined {
    return this.#error;
  }
  get offset(): number {
    return this.#offset;
  }
  /** Whether one complete top-level value has been read. */
  get complete(): boolean {
    return this.#mode === 'done';
  }

  push(chunk: string): void {
    if (this.#error) return;
    try {
      for (let i = 0; i < chunk.length; i++) {
        this.#char(chunk[i]!);
        this.#offset++;
      }
    } catch (err) {
      if (err instanceof JsonSyntaxError) this.#error = err;
      else throw err;
    }
    this.#flushString();
  }

  /** Describes what is still open, for a "truncated" error. */
  openDescription(): string {
    if (this.#mode === 'string') return 'an unterminated string';
    const top = this.#stack[this.#stack.length - 1];
    if (top) return `an unclosed ${top.kind}`;
    if (this.#mode === 'value') return 'no value';
    return 'an incomplete value';
  }

  #path(): JsonPath {
    const path: JsonPath = [];
    for (const f of this.#stack) path.push(f.kind === 'object' ? (f.key ?? '') : f.index);
    return path;
  }

  #fail(message: string): never {
    throw new JsonSyntaxError(this.#offset, message);
  }

  #char(ch: string): void {
    if (this.#mode === 'string') return this.#stringChar(ch);
    if (this.#mode === 'literal') {
      if (/[0-9a-zA-Z+\-.]/.test(ch)) {
        this.#literal += ch;
        return;
      }
      this.#endLiteral();
    }
    if (ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t') return;
    if (this.#mode === 'done') this.#fail(`unexpected ${JSON.stringify(ch)} after the end of the JSON value`);
    const top = this.#stack[this.#stack.length - 1];
    if (top?.kind === 'object' && top.expect !== 'value') {
      if (top.expect === 'key') {
        if (ch === '"') return this.#startString(true);
        if (ch === '}' && !top.sawMember) return this.#close('object');
        this.#fail(`expected a property name in double quotes, got ${JSON.stringify(ch)}`);
      }
      if (top.expect === 'colon') {
        if (ch === ':') {
          top.expect = 'value';
          return;
        }
        this.#fail(`expected ':' after the property name, got ${JSON.stringify(ch)}`);
      }
      if (ch === ',') {
        top.expect = 'key';
        top.sawMember = true;
        return;
      }
      if (ch === '}') return this.#close('object');
      this.#fail(`expected ',' or '}' in an object, got ${JSON.stringify(ch)}`);
    }
    if (top?.kind === 'array' && top.expect === 'comma') {
      if (ch === ',') {
        top.index++;
        top.expect = 'value';
        return;
      }
      if (ch === ']') return this.#close('array');
      this.#fail(`expected ',' or ']' in an array, got ${JSON.stringify(ch)}`);
    }
    if (ch === ']' && top?.kind === 'array' && !top.sawItem) return this.#close('array');
    this.#value(ch);
  }

  #value(ch: string): void {
    if ((ch === '{' || ch === '[') && this.#stack.length >= MAX_JSON_DEPTH) {
      this.#fail(
        `the input nests objects and arrays more than ${MAX_JSON_DEPTH} deep; a tool call's input is an object ` +
          'of strings and a list of edits',
      );
    }
    if (ch === '{') {
      this.#stack.push({ kind: 'object', key: undefined, expect: 'key', sawMember: false });
      return;
    }
    if (ch === '[') {
      this.#stack.push({ kind: 'array', index: 0, expect: 'value', sawItem: false });
      return;
    }
    if (ch === '"') return this.#startString(false);
    if (/[-0-9tfn]/.test(ch)) {
      this.#mode = 'literal';
      this.#literal = ch;
      return;
    }
    this.#fail(`expected a JSON value, got ${JSON.stringify(ch)}`);
  }

  #endLiteral(): void {
    const lit = this.#literal;
    if (!/^(true|false|null|-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?)$/.test(lit))
      this.#fail(`invalid literal ${JSON.stringify(lit)}`);
    this.#mode = 'value';
    this.#afterValue();
  }

  #afterValue(): void {
    const top = this.#stack[this.#stack.length - 1];
    if (!top) this.#mode = 'done';
    else if (top.kind === 'object') top.expect = 'comma';
    else {
      top.expect = 'comma';
      top.sawItem = true;
    }
  }

  #close(kind: 'object' | 'array'): void {
    const path = this.#path();
    this.#stack.pop();
    this.#listener.containerEnd?.(path, kind);
    this.#afterValue();
  }

  #startString(isKey: boolean): void {
    this.#mode = 'string';
    this.#isKey = isKey;
    this.#decoded = '';
    this.#key = '';
    if (!isKey) this.#listener.stringStart?.(this.#path());
  }

  #stringChar(ch: string): void {
    if (this.#escape !== undefined) {
      if (this.#escape === '') {
        if (ch === 'u') {
          this.#escape = 'u';
          return;
        }
        const v = ESCAPES[ch];
        if (v === undefined) this.#fail(`invalid escape \\${ch} in a string`);
        this.#escape = undefined;
        this.#decoded += v;
        return;
      }
      if (!/[0-9a-fA-F]/.test(ch)) this.#fail(`invalid \\u escape: ${JSON.stringify(ch)} is not a hex digit`);
      this.#escape += ch;
      if (this.#escape.length === 5) {
        this.#decoded += String.fromCharCode(parseInt(this.#escape.slice(1), 16));
        this.#escape = undefined;
      }
      return;
    }
    if (ch === '\\') {
      this.#escape = '';
      return;
    }
    if (ch === '"') {
      const rest = this.#decoded;
      this.#decoded = '';
      this.#mode = 'value';
      if (this.#isKey) {
        const top = this.#stack[this.#stack.length - 1] as Extract<Frame, { kind: 'object' }>;
        top.key = this.#key + rest;
        top.expect = 'colon';
      } else {
        this.#listener.stringEnd?.(this.#path(), rest);
        this.#afterValue();
      }
      return;
    }
    if (ch < ' ')
      this.#fail(`unescaped control character U+${ch.charCodeAt(0).toString(16).padStart(4, '0')} in a string`);
    this.#decoded += ch;
  }

  /** Reports decoded text at the end of a chunk; a trailing high surrogate waits for its pair. */
  #flushString(): void {
    if (this.#mode !== 'string' || this.#decoded === '') return;
    let text = this.#decoded;
    let keep = '';
    const last = text.charCodeAt(text.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      keep = text.slice(-1);
      text = text.slice(0, -1);
    }
    this.#decoded = keep;
    if (text === '') return;
    if (this.#isKey) this.#key += text;
    else this.#listener.stringChunk?.(this.#path(), text);
  }
}
