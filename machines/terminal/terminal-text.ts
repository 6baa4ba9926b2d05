/**
 * @module
 * Pure text helpers for terminal output shown to a model: plain text from raw
 * PTY output, and head+tail truncation that says what was left out and how
 * to page it. No I/O.
 */

/**
 * CSI, OSC (BEL or ST terminated), DCS/SOS/PM/APC strings, and two-byte ESC
 * sequences. Only used to *remove* sequences from text; interpretation is
 * left to @xterm/headless.
 */
const ANSI = new RegExp(
  [
    /\x1b\[[0-?]*[ -/]*[@-~]/.source, // CSI
    /\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/.source, // OSC
    /\x1b[PX^_][^\x1b]*\x1b\\/.source, // DCS, SOS, PM, APC
    /\x1b[ -/]*[0-~]/.source, // other escapes
    /\x9b[0-?]*[ -/]*[@-~]/.source, // 8-bit CSI
  ].join('|'),
  'g',
);
const OTHER_CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]/g;
/**
 * Printable ASCII, CR and LF only, whole: text like it has no sequence, control or escape to remove. Anchored,
 * it runs once from the start (0.6-0.9 ns a character here) where the unanchored search for a character outside
 * the class tried every position (1.1-1.2): this runs on each PTY read, 100 MB of a flood included.
 */
const ALL_PLAIN = /^[\x20-\x7e\r\n]*$/;

/** Whether `text` is printable ASCII, CR and LF only (no control sequence; JSON at most doubles it). */
export function isPlainText(text: string): boolean {
  return ALL_PLAIN.test(text);
}

/**
 * Plain text of raw output: control sequences removed, CRLF → LF, and a line
 * rewritten with bare CRs (progress bars) keeps only its last version.
 */
export function plainText(raw: string, plain = isPlainText(raw)): string {
  // Printable ASCII with CR LF line ends (a flood of text, most output): one scan instead of five, none when
  // the caller already knows (`plain`, from isPlainText).
  if (plain) {
    const text = raw.includes('\r') ? raw.replace(/\r+\n/g, '\n') : raw;
    if (!text.includes('\r')) return text;
  }
  const stripped = raw.replace(ANSI, '').replace(/\x1b/g, '').replace(/\r+\n/g, '\n');
  if (!stripped.includes('\r') && !OTHER_CONTROLS.test(stripped)) return stripped;
  OTHER_CONTROLS.lastIndex = 0;
  return stripped
    .split('\n')
    .map((line) => overwriteCarriageReturns(applyBackspaces(line)))
    .join('\n')
    .replace(OTHER_CONTROLS, '');
}

/**
 * A bare CR returns to column 0: later text overwrites earlier text, so each column shows the last part that
 * reached it. Built from the last part backwards, each character copied once: overlaying the parts in order
 * (`part + screen.slice(part.length)`) copied the whole line per CR, ~1 µs a byte for output an agent can
 * print on purpose (`A…A` then `\rb` repeated: 62 ms for a 64 KiB chunk).
 */
function overwriteCarriageReturns(line: string): string {
  if (!line.includes('\r')) return line;
  const parts = line.split('\r');
  let screen = parts[parts.length - 1]!;
  for (let i = parts.length - 2; i >= 0; i--) {
    const part = parts[i]!;
    if (part.length > screen.length) screen += part.slice(screen.length);
  }
  return screen;
}

/**
 * Each backspace removes the character before it (a whole code point), if any. Works on the runs between
 * backspaces, each kept or cut at its end (a slice): linear, where a character at a time cost ~80 ns each.
 */
function applyBackspaces(line: string): string {
  if (!line.includes('\b')) return line;
  const runs = line.split('\b');
  const kept: string[] = [runs[0]!];
  for (let i = 1; i < runs.length; i++) {
    // The backspace before runs[i] removes the last code point kept so far.
    let last = kept.length - 1;
    while (last >= 0 && kept[last]!.length === 0) last--;
    kept.length = last + 1;
    if (last >= 0) {
      const run = kept[last]!;
      const end = run.length;
      const pair = end >= 2 && isLowSurrogate(run.charCodeAt(end - 1)) && isHighSurrogate(run.charCodeAt(end - 2));
      kept[last] = run.slice(0, end - (pair ? 2 : 1));
    }
    kept.push(runs[i]!);
  }
  return kept.join('');
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function utf8Length(text: string): number {
  // Fast path: every UTF-16 unit is at most 3 UTF-8 bytes.
  let ascii = true;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  return ascii ? text.length : encoder.encode(text).length;
}

export type Truncated = { text: string; truncated: boolean; omittedBytes: number };

/**
 * Keeps the head (40 %) and the tail (60 %: errors are usually at the end) of
 * `text` within about `maxBytes` UTF-8 bytes, cutting at line ends when one is
 * near, with a marker line naming how many bytes were left out and `pageHint`.
 */
export function headTail(text: string, maxBytes: number, pageHint = ''): Truncated {
  if (text.length <= maxBytes / 3 || utf8Length(text) <= maxBytes) return { text, truncated: false, omittedBytes: 0 };
  const bytes = encoder.encode(text);
  const headBudget = Math.floor(maxBytes * 0.4);
  const tailBudget = maxBytes - headBudget;
  let headEnd = utf8Boundary(bytes, headBudget);
  let tailStart = utf8Boundary(bytes, bytes.length - tailBudget);
  const nlHead = bytes.lastIndexOf(10, headEnd - 1);
  if (nlHead > headEnd - 200 && nlHead > 0) headEnd = nlHead + 1;
  const nlTail = bytes.indexOf(10, tailStart);
  if (nlTail >= 0 && nlTail < tailStart + 200) tailStart = nlTail + 1;
  const omitted = tailStart - headEnd;
  const marker = `\n[… ${omitted} bytes omitted${pageHint ? `; ${pageHint}` : ''} …]\n`;
  return {
    text: decoder.decode(bytes.subarray(0, headEnd)) + marker + decoder.decode(bytes.subarray(tailStart)),
    truncated: true,
    omittedBytes: omitted,
  };
}

/** The nearest index ≤ i that starts a UTF-8 character. */
function utf8Boundary(bytes: Uint8Array, i: number): number {
  let j = Math.max(0, Math.min(bytes.length, i));
  while (j > 0 && j < bytes.length && (bytes[j]! & 0xc0) === 0x80) j--;
  return j;
}

/**
 * How much of the start of a plain-text chunk (printable ASCII, CR, LF only)
 * can be left out of a `cols`×`rows` screen without changing what the screen
 * shows at the end (viewport and cursor), assuming a plain terminal state
 * (normal buffer, autowrap on, insert mode off, no scroll region). The kept
 * tail either starts with a CR LF and holds 2·rows+1 LFs after it, or, with
 * no CR/LF at all, is cut at a multiple of `cols` and still fills 2·rows+2
 * rows: in both cases every row visible at the end is created blank by
 * scrolling after the two writes have come into step. The CR is kept: an LF
 * alone leaves the cursor's column as it was, so a tail whose lines end in
 * bare LFs (a program in raw mode) would otherwise run at the column the
 * skipped text did not reach. Returns 0 when nothing can be skipped. Used to
 * keep floods from costing a full parse.
 */
export function skippablePrefix(data: string, cols: number, rows: number, plain?: boolean): number {
  if (data.length < 4 * cols * rows) return 0;
  if (!(plain ?? isPlainText(data))) return 0;
  const hasCr = data.includes('\r');
  const hasLf = data.includes('\n');
  if (!hasCr && !hasLf) {
    const keep = (2 * rows + 2) * cols;
    return Math.max(0, Math.floor((data.length - keep) / cols) * cols);
  }
  let lfs = 0;
  for (let i = data.length - 1; i >= 1; i--) {
    if (data.charCodeAt(i) !== 10) continue;
    if (lfs >= 2 * rows + 1 && data.charCodeAt(i - 1) === 13) return i - 1;
    lfs++;
  }
  return 0;
}

/**
 * `skippablePrefix(head + tail, cols, rows, true)` for plain text, and the tail that is kept, without joining
 * the two when the cut falls inside `tail`: the screen's unparsed text (`head`) plus a flood's next chunk
 * (`tail`), where joining copied both for every chunk (issue 15).
 */
export function cutPlain(head: string, tail: string, cols: number, rows: number): { skip: number; kept: string } {
  const length = head.length + tail.length;
  if (length < 4 * cols * rows) return { skip: 0, kept: head + tail };
  if (!head.includes('\r') && !head.includes('\n') && !tail.includes('\r') && !tail.includes('\n')) {
    const keep = (2 * rows + 2) * cols;
    const skip = Math.max(0, Math.floor((length - keep) / cols) * cols);
    return { skip, kept: skip >= head.length ? tail.slice(skip - head.length) : (head + tail).slice(skip) };
  }
  // The loop of skippablePrefix over the tail's part of the text; the rest (a cut in head, or none) as it is.
  let lfs = 0;
  for (let i = tail.length - 1; i >= 1; i--) {
    if (tail.charCodeAt(i) !== 10) continue;
    if (lfs >= 2 * rows + 1 && tail.charCodeAt(i - 1) === 13)
      return { skip: head.length + i - 1, kept: tail.slice(i - 1) };
    lfs++;
  }
  const all = head + tail;
  const skip = skippablePrefix(all, cols, rows, true);
  return { skip, kept: all.slice(skip) };
}

/**
 * The last line a program printed, as plain text, at most `max` characters (its end kept): what a shell that
 * exited before its first prompt said (bwrap's refusal, a missing rc file). Empty when it printed nothing.
 */
export function lastLine(raw: string, max = 240): string {
  const lines = plainText(raw)
    .split(/\r?\n|\r/)
    .map((line) => line.trim())
    .filter(Boolean);
  const last = lines.at(-1) ?? '';
  return last.length > max ? `…${last.slice(last.length - max + 1)}` : last;
}
