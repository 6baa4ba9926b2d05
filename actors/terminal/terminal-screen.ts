/**
 * @module
 * The headless screen of one terminal: an @xterm/headless instance fed the
 * same coalesced output chunks that go to the log, whose parser hooks report
 * the control sequences of each chunk (the hooks return false, so xterm still
 * acts on every sequence). Also `renderScreen`, which rebuilds a screen from
 * logged chunks for replay.
 */
import xterm from '@xterm/headless';
import { cutPlain, skippablePrefix } from '../../machines/terminal/terminal-text.ts';
import { capCombining } from '../../machines/terminal/combining-cap.ts';
import type { ControlSequence, ScreenSnapshot } from '../../schemas/terminal.ts';

const { Terminal } = xterm;
type XTerm = InstanceType<typeof Terminal>;

/** Sequences listed per chunk; the rest are only counted. */
export const MAX_SEQUENCES_PER_CHUNK = 64;
const SCROLLBACK = 1000;
/** Plain text kept unparsed is cut (skippablePrefix) once it holds this many screens of characters. */
const DEFER_SCREENS = 16;

export type ChunkAnalysis = { sequences: ControlSequence[]; sequenceCount: number; isInteractive: boolean };

const CSI_KINDS: Record<string, ControlSequence['kind']> = {
  m: 'sgr',
  K: 'erase-line',
  J: 'erase-display',
  A: 'cursor-move',
  B: 'cursor-move',
  C: 'cursor-move',
  D: 'cursor-move',
  E: 'cursor-move',
  F: 'cursor-move',
  G: 'cursor-move',
  a: 'cursor-move',
  e: 'cursor-move',
  '`': 'cursor-move',
  H: 'cursor-position',
  f: 'cursor-position',
  d: 'cursor-position',
  s: 'save-cursor',
  u: 'restore-cursor',
  r: 'scroll-region',
};
const ALT_SCREEN_MODES = new Set([47, 1047, 1049]);

export class TerminalScreen {
  readonly term: XTerm;
  #seqs: ControlSequence[] = [];
  #count = 0;
  #interactive = false;
  #title = '';
  /** Where terminal replies (cursor reports, device attributes) go; settable for a reused screen. */
  onResponse: ((data: string) => void) | undefined;
  /**
   * xterm's synchronous parse (`_core._writeBuffer.writeSync`, present in the
   * pinned 6.0.0). The public `write` schedules each chunk with setTimeout,
   * which adds ≥ 1 ms per chunk to every command; we register no async
   * handlers, the case where writeSync is "unreliable". Falls back to `write`.
   */
  #writeSync: ((data: string) => void) | undefined;
  /** Skip the invisible start of big plain-text chunks (see skippablePrefix). */
  readonly fastPath: boolean;
  /** Whether a cell takes at most MAX_JOINED combining code points (combining-cap.ts); false only if xterm moved. */
  readonly combiningCapped: boolean;
  /** Characters not parsed thanks to the fast path (for benchmarks). */
  skipped = 0;
  /**
   * Plain text not fed to xterm yet (the fast path, issue 15): a flood's chunks are kept here, their invisible
   * start cut as it grows, and fed at once before anything reads or changes the screen. Parsing ~4,000
   * characters of every chunk (the visible end) was ~10% of the host's thread in a flood, and made xterm's
   * print hot enough for TurboFan to compile it in the middle of the flood: ~0.6 s of CPU on another thread and
   * ~40 MiB of compiler memory, which glibc kept.
   */
  #pending = '';

  constructor(cols: number, rows: number, options: { onResponse?: (data: string) => void; fastPath?: boolean } = {}) {
    this.fastPath = options.fastPath ?? true;
    // logLevel 'off': xterm logs each parse error (a DEL byte on the ground state, common in binary output) with
    // console.error and the parser's whole state, ~0.8 KB each: 100 MB of an agent's binary output wrote over
    // 100 MB to the runtime's stderr, and spent ~10% of a flood's CPU formatting it.
    this.term = new Terminal({ cols, rows, scrollback: SCROLLBACK, allowProposedApi: true, logLevel: 'off' });
    this.combiningCapped = capCombining(this.term);
    const writeBuffer = (this.term as unknown as { _core?: { _writeBuffer?: { writeSync?: (d: string) => void } } })
      ._core?._writeBuffer;
    if (typeof writeBuffer?.writeSync === 'function') this.#writeSync = (d) => writeBuffer.writeSync!(d);
    this.onResponse = options.onResponse;
    const parser = this.term.parser;
    for (const [final, kind] of Object.entries(CSI_KINDS)) {
      parser.registerCsiHandler({ final }, (params) => {
        if (kind === 'cursor-position') this.#interactive = true;
        this.#add(kind, `CSI ${fmtParams(params)}${final}`);
        return false;
      });
    }
    for (const final of ['h', 'l']) {
      parser.registerCsiHandler({ prefix: '?', final }, (params) => {
        const modes = params.flat();
        const alt = modes.some((m) => ALT_SCREEN_MODES.has(m));
        if (alt && final === 'h') this.#interactive = true;
        this.#add(
          alt ? (final === 'h' ? 'alt-screen-on' : 'alt-screen-off') : 'mode',
          `CSI ?${fmtParams(params)}${final}`,
        );
        return false;
      });
    }
    parser.registerEscHandler({ final: '7' }, () => (this.#add('save-cursor', 'ESC 7'), false));
    parser.registerEscHandler({ final: '8' }, () => (this.#add('restore-cursor', 'ESC 8'), false));
    for (const ident of [0, 1, 2]) {
      parser.registerOscHandler(ident, (data) => (this.#add('title', `OSC ${ident}`, data), false));
    }
    for (const ident of [7, 52, 133, 633, 1337]) {
      parser.registerOscHandler(ident, (data) => (this.#add('osc', `OSC ${ident}`, data), false));
    }
    // Hyperlinks are listed, not kept: nothing here reads them, and xterm kept an entry per linked cell (200,000
    // links printed: 135 MB of one screen's heap, up to its scrollback's 41,000 cells).
    parser.registerOscHandler(8, (data) => (this.#add('osc', 'OSC 8', data), true));
    this.term.onTitleChange((t) => {
      this.#title = t;
    });
    this.term.onData((data) => this.onResponse?.(data));
  }

  #add(kind: ControlSequence['kind'], seq: string, value?: string): void {
    this.#count++;
    if (this.#seqs.length < MAX_SEQUENCES_PER_CHUNK) {
      this.#seqs.push(value === undefined ? { kind, seq } : { kind, seq, value: value.slice(0, 200) });
    }
  }

  /**
   * Feeds one chunk; resolves once xterm parsed it, with the sequences it held. `plain`: whether the chunk is
   * plain text (`isPlainText`), when the caller already knows.
   */
  write(data: string, plain?: boolean): Promise<ChunkAnalysis> {
    const now = this.parseNow(data, plain);
    if (now) return Promise.resolve(now);
    this.#catchUp();
    // xterm calls back right after parsing this chunk, before the next one.
    return new Promise((resolve) => this.term.write(this.#unseen(data, plain), () => resolve(this.#collect())));
  }

  /**
   * Feeds one chunk and returns what it held, parsed within this call; undefined (nothing fed) when xterm's
   * synchronous parse is missing, so the caller falls back to `write`.
   */
  parseNow(data: string, plain?: boolean): ChunkAnalysis | undefined {
    if (!this.#writeSync) return undefined;
    if (plain === true && this.#defer(data)) return { sequences: [], sequenceCount: 0, isInteractive: false };
    this.#catchUp();
    this.#writeSync(this.#unseen(data, plain));
    return this.#collect();
  }

  /**
   * Keeps a plain chunk for later when xterm's parser is between sequences on the normal screen in the plain
   * state: plain text (printable ASCII, CR, LF) then holds no sequence, changes no mode and gets no reply, so
   * its analysis is empty and only the screen it leaves is owed. Returns false when it must be parsed now.
   */
  #defer(data: string): boolean {
    if (!this.fastPath) return false;
    if (this.#pending === '') {
      if (this.#parserState() !== 0 || !this.#plainState() || this.#interactive) return false;
    }
    const { cols, rows } = this.term;
    if (this.#pending.length + data.length < DEFER_SCREENS * cols * rows) this.#pending += data;
    else {
      const { skip, kept } = cutPlain(this.#pending, data, cols, rows);
      this.skipped += skip;
      this.#pending = kept;
      // Nothing to cut (long lines without CR LF): parse now rather than hold more.
      if (this.#pending.length >= (DEFER_SCREENS / 2) * cols * rows) this.#catchUp();
    }
    return true;
  }

  /** Feeds what `#defer` kept; called before anything reads or changes the screen. */
  #catchUp(): void {
    if (this.#pending === '') return;
    const pending = this.#pending;
    this.#pending = '';
    this.#writeSync!(this.#unseen(pending, true));
  }

  /** xterm's parser state (0: ground, between sequences); unknown counts as inside one. */
  #parserState(): number {
    const core = this.term as unknown as { _core?: { _inputHandler?: { _parser?: { currentState?: number } } } };
    return core._core?._inputHandler?._parser?.currentState ?? -1;
  }

  /** The chunk less its invisible start, for big plain-text chunks (the fast path). */
  #unseen(data: string, plain?: boolean): string {
    const { cols, rows } = this.term;
    // Only between sequences: inside one (a chunk cut in an OSC title), the text is the sequence's, not the screen's.
    if (this.fastPath && data.length >= 4 * cols * rows && this.#parserState() === 0 && this.#plainState()) {
      const skip = skippablePrefix(data, cols, rows, plain);
      if (skip > 0) {
        this.skipped += skip;
        return data.slice(skip);
      }
    }
    return data;
  }

  /** Normal buffer, autowrap on, insert mode off, full-screen scroll region. */
  #plainState(): boolean {
    const core = (this.term as unknown as { _core?: { buffer?: { scrollTop: number; scrollBottom: number } } })._core;
    const buf = core?.buffer;
    if (buf?.scrollTop !== 0 || buf.scrollBottom !== this.term.rows - 1) return false;
    const modes = this.term.modes;
    return this.term.buffer.active.type === 'normal' && modes.wraparoundMode && !modes.insertMode;
  }

  #collect(): ChunkAnalysis {
    const result: ChunkAnalysis = {
      sequences: this.#seqs,
      sequenceCount: this.#count,
      isInteractive: this.#interactive || this.term.buffer.active.type === 'alternate',
    };
    this.#seqs = [];
    this.#count = 0;
    this.#interactive = false;
    return result;
  }

  resize(cols: number, rows: number): void {
    this.#catchUp();
    this.term.resize(cols, rows);
  }

  snapshot(): ScreenSnapshot {
    this.#catchUp();
    const buf = this.term.buffer.active;
    const lines: string[] = [];
    for (let y = 0; y < this.term.rows; y++) lines.push(buf.getLine(buf.viewportY + y)?.translateToString(true) ?? '');
    const snap: ScreenSnapshot = {
      cols: this.term.cols,
      rows: this.term.rows,
      lines,
      cursor: { x: buf.cursorX, y: buf.cursorY },
      buffer: buf.type === 'alternate' ? 'alternate' : 'normal',
    };
    if (this.#title) snap.title = this.#title;
    return snap;
  }

  /** The last non-empty line at or above the cursor: what a waiting program asked. */
  promptLine(): string {
    this.#catchUp();
    const buf = this.term.buffer.active;
    for (let y = buf.cursorY; y >= 0; y--) {
      const line = buf.getLine(buf.viewportY + y)?.translateToString(true) ?? '';
      if (line.trim()) return line.trimEnd();
    }
    return '';
  }

  dispose(): void {
    this.term.dispose();
  }
}

/**
 * One pre-built screen at the default size: building an xterm costs ~3 ms,
 * which would otherwise sit on every terminal.open. Refilled after each take.
 */
let spare: TerminalScreen | undefined;
let spareTimer: NodeJS.Timeout | undefined;
export function takeScreen(cols: number, rows: number, onResponse: (data: string) => void): TerminalScreen {
  const screen = spare && spare.term.cols === cols && spare.term.rows === rows ? spare : new TerminalScreen(cols, rows);
  if (screen === spare) spare = undefined;
  screen.onResponse = onResponse;
  if (cols === 80 && rows === 24 && !spare && !spareTimer) {
    spareTimer = setTimeout(() => {
      spareTimer = undefined;
      spare ??= new TerminalScreen(80, 24);
    }, 0);
    spareTimer.unref();
  }
  return screen;
}

function fmtParams(params: (number | number[])[]): string {
  return params.map((p) => (Array.isArray(p) ? p.join(':') : String(p))).join(';');
}

/** An item of a terminal's history for replay: an output chunk, or a resize at that point. */
export type ScreenHistoryItem = string | { data: string } | { cols: number; rows: number };

/**
 * Renders the screen a terminal showed after `items` (its output chunks and
 * resizes, in log order), starting from a `cols`×`rows` window.
 */
export async function renderScreen(
  items: Iterable<ScreenHistoryItem>,
  cols: number,
  rows: number,
): Promise<ScreenSnapshot> {
  const screen = new TerminalScreen(cols, rows);
  try {
    let last: Promise<unknown> = Promise.resolve();
    for (const item of items) {
      if (typeof item === 'string') last = screen.write(item);
      else if ('data' in item) last = screen.write(item.data);
      else {
        await last;
        screen.resize(item.cols, item.rows);
      }
    }
    await last;
    return screen.snapshot();
  } finally {
    screen.dispose();
  }
}
