/**
 * @module
 * Re-indentation of streamed `new_text` (after zed's `reindent.rs`): the
 * delta between the buffer's and the query's first-line indentation, a
 * separate agreed delta for later lines, and a streaming `Reindenter` that
 * rewrites each line's leading whitespace as it arrives. Beyond zed, when the
 * file indents with tabs and the model wrote spaces (or the reverse), leading
 * whitespace is first converted to the file's style. Pure.
 */

export type IndentDelta = { kind: 'spaces' | 'tabs'; delta: number };
export type LineIndent = { tabs: number; spaces: number; blank: boolean };
/** Leading-whitespace conversion applied before the delta: `width` spaces per tab. */
export type IndentConversion = { to: 'tabs' | 'spaces'; width: number };

/** Counts leading tabs and spaces (in any order) up to the first other char. */
export function lineIndent(line: string): LineIndent {
  let tabs = 0;
  let spaces = 0;
  let i = 0;
  for (; i < line.length; i++) {
    const ch = line[i];
    if (ch === '\t') tabs++;
    else if (ch === ' ') spaces++;
    else break;
  }
  const rest = line.slice(i);
  return { tabs, spaces, blank: rest.trim() === '' };
}

/** Buffer line uses tabs → a tab delta, otherwise a space delta; the other kind is ignored. */
export function computeIndentDelta(buffer: LineIndent, query: LineIndent): IndentDelta {
  return buffer.tabs > 0
    ? { kind: 'tabs', delta: buffer.tabs - query.tabs }
    : { kind: 'spaces', delta: buffer.spaces - query.spaces };
}

/** The delta every non-blank `(buffer, query)` pair agrees on, else `fallback`. */
export function computeRestIndentDelta(fallback: IndentDelta, pairs: Iterable<[LineIndent, LineIndent]>): IndentDelta {
  let agreed: IndentDelta | undefined;
  for (const [b, q] of pairs) {
    if (b.blank || q.blank) continue;
    const d = computeIndentDelta(b, q);
    if (!agreed) agreed = d;
    else if (agreed.kind !== d.kind || agreed.delta !== d.delta) return fallback;
  }
  return agreed ?? fallback;
}

/**
 * Decides whether the query's leading whitespace must be converted to the
 * buffer's style: the matched buffer rows indent with only tabs (or only
 * spaces) and some query line starts with the other kind. The tab width is
 * the one (of 4, 2, 8, 3) under which the most aligned line pairs agree on
 * one indent delta.
 */
export function indentConversion(
  bufferLines: readonly string[],
  queryLines: readonly string[],
  pairs: ReadonlyArray<[number, number]> = queryLines.map((_, i) => [i, i]),
): IndentConversion | undefined {
  let bTabs = 0;
  let bSpaces = 0;
  for (const l of bufferLines) {
    if (l[0] === '\t') bTabs++;
    else if (l[0] === ' ' && l.trim() !== '') bSpaces++;
  }
  const to = bTabs > 0 && bSpaces === 0 ? 'tabs' : bSpaces > 0 && bTabs === 0 ? 'spaces' : undefined;
  if (!to) return undefined;
  const other = to === 'tabs' ? ' ' : '\t';
  if (!queryLines.some((l) => l[0] === other && l.trim() !== '')) return undefined;
  let best: IndentConversion | undefined;
  let bestScore = -1;
  for (const width of [4, 2, 8, 3]) {
    const conv: IndentConversion = { to, width };
    const counts = new Map<number, number>();
    for (const [q, b] of pairs) {
      const ql = queryLines[q];
      const bl = bufferLines[b];
      if (ql === undefined || bl === undefined || ql.trim() === '' || bl.trim() === '') continue;
      const qi = lineIndent(convertIndent(ql, conv));
      const bi = lineIndent(bl);
      const d = to === 'tabs' ? bi.tabs - qi.tabs : bi.spaces - qi.spaces;
      counts.set(d, (counts.get(d) ?? 0) + 1);
    }
    const score = Math.max(0, ...counts.values());
    if (score > bestScore) {
      best = conv;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Leading whitespace of each aligned query line → that of its buffer line,
 * keeping only unambiguous entries (one query indent, one buffer indent).
 */
export function indentMap(
  bufferLines: readonly string[],
  queryLines: readonly string[],
  pairs: ReadonlyArray<[number, number]>,
): Map<string, string> {
  const map = new Map<string, string>();
  const conflicted = new Set<string>();
  for (const [q, b] of pairs) {
    const ql = queryLines[q];
    const bl = bufferLines[b];
    if (ql === undefined || bl === undefined || ql.trim() === '' || bl.trim() === '') continue;
    const qw = /^[ \t]*/.exec(ql)![0];
    const bw = /^[ \t]*/.exec(bl)![0];
    const seen = map.get(qw);
    if (seen === undefined && !conflicted.has(qw)) map.set(qw, bw);
    else if (seen !== undefined && seen !== bw) {
      map.delete(qw);
      conflicted.add(qw);
    }
  }
  return map;
}

/** Rewrites the leading whitespace of every line of `text` by `conversion` (used on the query). */
export function convertIndent(text: string, conversion: IndentConversion): string {
  return text.replace(/^[ \t]+/gm, (ws) => convertWhitespace(ws, conversion));
}

/**
 * Streaming re-indenter: the first line gets `first`, every later line
 * `rest`. While in a line's leading whitespace it buffers until the first
 * char that is not the delta's char, then emits `max(0, k + delta)` indent
 * chars and the rest of the line unchanged; whitespace-only lines pass
 * through verbatim.
 */
export class Reindenter {
  readonly #first: IndentDelta;
  readonly #rest: IndentDelta;
  readonly #conversion: IndentConversion | undefined;
  readonly #map: ReadonlyMap<string, string> | undefined;
  #pending = '';
  #inLeading = true;
  #onFirstLine = true;

  /**
   * `map`: leading whitespace of a query line → that of the buffer line it
   * matched. A new-text line indented exactly like a query line gets the
   * buffer line's indentation verbatim (mixed tab/space indents survive);
   * other lines get the delta.
   */
  constructor(first: IndentDelta, rest: IndentDelta, conversion?: IndentConversion, map?: ReadonlyMap<string, string>) {
    this.#first = first;
    this.#rest = rest;
    this.#conversion = conversion;
    this.#map = map && map.size > 0 ? map : undefined;
  }

  push(chunk: string): string {
    this.#pending += chunk;
    return this.#drain(false);
  }

  finish(): string {
    return this.#drain(true);
  }

  #drain(final: boolean): string {
    let out = '';
    while (this.#pending !== '') {
      if (!this.#inLeading) {
        const nl = this.#pending.indexOf('\n');
        if (nl === -1) {
          out += this.#pending;
          this.#pending = '';
          break;
        }
        out += this.#pending.slice(0, nl + 1);
        this.#pending = this.#pending.slice(nl + 1);
        this.#inLeading = true;
        this.#onFirstLine = false;
        continue;
      }
      const delta = this.#onFirstLine ? this.#first : this.#rest;
      const indentChar = delta.kind === 'tabs' ? '\t' : ' ';
      const conv = this.#conversion;
      let k = 0;
      const isLeading = (ch: string) => (conv || this.#map ? ch === ' ' || ch === '\t' : ch === indentChar);
      while (k < this.#pending.length && isLeading(this.#pending[k]!)) k++;
      const nlAt = this.#pending.indexOf('\n');
      const lineEnd = nlAt === -1 ? this.#pending.length : nlAt;
      if (k >= this.#pending.length && !final) break; // still in leading whitespace: wait
      if (k < this.#pending.length && (k === lineEnd || this.#pending.slice(k, lineEnd).trim() === '')) {
        if (nlAt === -1 && !final) break; // whitespace-only so far: the line may still be blank
        const take = nlAt === -1 ? this.#pending.length : nlAt + 1;
        out += this.#pending.slice(0, take);
        this.#pending = this.#pending.slice(take);
        if (nlAt !== -1) this.#onFirstLine = false;
        continue;
      }
      if (k >= this.#pending.length) {
        out += this.#pending; // final and whitespace-only: verbatim
        this.#pending = '';
        break;
      }
      let leading = this.#pending.slice(0, k);
      const mapped = this.#map?.get(leading);
      if (mapped !== undefined) {
        out += mapped;
        this.#pending = this.#pending.slice(k);
        this.#inLeading = false;
        continue;
      }
      if (conv) leading = convertWhitespace(leading, conv);
      let n = 0;
      while (n < leading.length && leading[n] === indentChar) n++;
      out += indentChar.repeat(Math.max(0, n + delta.delta)) + leading.slice(n);
      this.#pending = this.#pending.slice(k);
      this.#inLeading = false;
    }
    if (final) {
      out += this.#pending;
      this.#pending = '';
    }
    return out;
  }
}

/** Re-indents a whole text at once (the non-streaming form). */
export function reindent(
  text: string,
  first: IndentDelta,
  rest: IndentDelta,
  conversion?: IndentConversion,
  map?: ReadonlyMap<string, string>,
): string {
  const r = new Reindenter(first, rest, conversion, map);
  return r.push(text) + r.finish();
}

function convertWhitespace(ws: string, conv: IndentConversion): string {
  let col = 0;
  for (const ch of ws) col = ch === '\t' ? (Math.floor(col / conv.width) + 1) * conv.width : col + 1;
  if (conv.to === 'spaces') return ' '.repeat(col);
  return '\t'.repeat(Math.floor(col / conv.width)) + ' '.repeat(col % conv.width);
}
