/**
 * @module
 * The output path of one terminal: every PTY read is numbered by byte offset,
 * kept in a bounded in-memory tail for `terminal.read` (bytes in a ring,
 * `output-ring.ts`), coalesced (≤ 64 KiB or ≤ 20 ms by default; plain text
 * up to PLAIN_CHUNK_BYTES), parsed by the headless screen, and handed to
 * `emitOutput` as a `terminal.output.received` fact. When too many chunks are
 * in flight (the log falls behind) the producer is paused, and resumed at half.
 */
import type { TerminalId } from '../../schemas/ids.ts';
import { checkedFact } from '../../schemas/message.ts';
import type { ControlSequence } from '../../schemas/terminal.ts';
import { TerminalOutputReceived } from '../../schemas/terminal-events.ts';
import type { Logger } from 'pino';
import { isPlainText, plainText } from '../../machines/terminal/terminal-text.ts';
import type { ScreenSnapshot } from '../../schemas/terminal.ts';
import { OutputRing } from './output-ring.ts';
import { type ChunkAnalysis, takeScreen, type TerminalScreen } from './terminal-screen.ts';

/**
 * A chunk of plain text (`isPlainText`) grows up to this size, within coalesceMs like any chunk: a flood goes
 * out in fewer, bigger facts, which cost less per byte (issue 15). Its JSON is at most 3× its bytes (CR LF
 * escaped, plus the plainText copy), under NATS's 1 MiB max_payload. 120 KiB keeps the payload of a chunk
 * without escapes under 128 KiB, glibc's mmap threshold: at 256 KiB each payload was mmapped, and freeing one
 * raised glibc's threshold, so the later ones came from the heap and stayed there (a 100 MB flood peaked at
 * 201-204 MiB RSS, 183 MiB at 120 KiB).
 */
export const PLAIN_CHUNK_BYTES = 120 * 1024;

export type OutputFact = {
  type: 'terminal.output.received';
  data: {
    terminalId: string;
    offset: number;
    bytes: number;
    data: string;
    plainText?: string;
    sequences: Array<{ kind: ControlSequence['kind']; seq: string; value?: string }>;
    sequenceCount: number;
    isInteractive: boolean;
  };
  agentId?: string;
  /** `data.data` is printable ASCII without `"`, `\`, CR or LF, known from its reads: its JSON is itself, quoted. */
  jsonSafe?: boolean;
};

export type OutputOptions = {
  terminalId: TerminalId;
  agentId: string;
  cols: number;
  rows: number;
  coalesceBytes: number;
  coalesceMs: number;
  highWaterChunks: number;
  maxRetainedBytes: number;
  emitOutput: (fact: OutputFact) => Promise<void>;
  /** Flow control of the producer (the PTY). */
  pause: () => void;
  resume: () => void;
  /** Terminal replies the screen generates (cursor reports, device attributes). */
  respond: (data: string) => void;
  log: Logger;
};

export class TerminalOutput {
  readonly screen: TerminalScreen;
  #o: OutputOptions;
  /** Bytes seen so far: the offset of the next byte. */
  end = 0;
  readonly #retained: OutputRing;
  /**
   * What is buffered, appended with `+=`: V8 keeps it as a rope and copies it flat once, when it is written
   * into the payload; `join` of ~30-60 reads cost ~2 ms per MB of a flood (issue 15).
   */
  #buf = '';
  #bufBytes = 0;
  #bufOffset = 0;
  /** Whether everything buffered is plain text. */
  #bufPlain = true;
  /** Whether some buffered plain text holds a character JSON escapes (`"`, `\`, CR, LF). */
  #bufEscaped = false;
  #timer: NodeJS.Timeout | undefined;
  /** Parses (and resizes) in stream order, when one could not run at once. */
  #chain: Promise<unknown> = Promise.resolve();
  /** Steps on `#chain` not run yet: while any, a chunk queues behind them. */
  #queued = 0;
  #lastEmit: Promise<void> = Promise.resolve();
  #backlog = 0;
  #paused = false;
  chunksEmitted = 0;
  pauses = 0;

  constructor(options: OutputOptions) {
    this.#o = options;
    this.#retained = new OutputRing(options.maxRetainedBytes);
    this.screen = takeScreen(options.cols, options.rows, options.respond);
  }

  /** Accepts one PTY read; returns its byte offset. */
  push(data: string): number {
    const offset = this.end;
    // Native, ~13× faster than utf8Length's loop on a flood (13 vs 170 ms per 100 MB), and the same count.
    const bytes = Buffer.byteLength(data, 'utf8');
    this.end += bytes;
    this.#retained.append(data, bytes);
    const plain = isPlainText(data);
    // Four searches for one character each (memchr), not a scan of the chunk when it is encoded.
    const escaped = plain && (data.includes('\n') || data.includes('\r') || data.includes('"') || data.includes('\\'));
    if (this.#bufBytes > 0 && this.#bufBytes + bytes > this.#limit(this.#bufPlain && plain)) this.flush();
    if (this.#bufBytes === 0) this.#bufOffset = offset;
    this.#buf += data;
    this.#bufBytes += bytes;
    this.#bufPlain &&= plain;
    this.#bufEscaped ||= escaped;
    if (this.#bufBytes >= this.#limit(this.#bufPlain)) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), this.#o.coalesceMs);
    return offset;
  }

  /**
   * Emits what is buffered; resolves when every chunk so far is appended. When nothing waits to be parsed
   * ahead of it, the chunk is parsed and its append asked for within this call: a command's output tail then
   * goes out in the same socket write as its `terminal.command.finished`, emitted just before (the parse of a
   * prompt-sized tail is ~20 µs; a hop to the next microtask cost a write and an ack of its own).
   */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#bufBytes === 0) return this.#lastEmit;
    const data = this.#buf;
    const offset = this.#bufOffset;
    const bytes = this.#bufBytes;
    // Known from each read (push): the screen and plainText need not scan the chunk for it again.
    const plain = this.#bufPlain;
    const jsonSafe = plain && !this.#bufEscaped;
    this.#buf = '';
    this.#bufBytes = 0;
    this.#bufPlain = true;
    this.#bufEscaped = false;
    this.#backlog++;
    this.#pressure();
    const previous = this.#lastEmit;
    // Calls to emitOutput are made in stream order (parse order); appends may overlap.
    const send = async (a: ChunkAnalysis) => {
      const fact: OutputFact = {
        ...checkedFact(TerminalOutputReceived, {
          terminalId: this.#o.terminalId,
          offset,
          bytes,
          data,
          ...plainOf(data, plain),
          ...a,
        }),
        agentId: this.#o.agentId,
        ...(jsonSafe ? { jsonSafe } : {}),
      };
      const append = this.#o.emitOutput(fact);
      await previous;
      await append;
      this.chunksEmitted++;
    };
    let sent: Promise<void>;
    const now = this.#queued === 0 ? this.screen.parseNow(data, plain) : undefined;
    if (now) sent = send(now);
    else {
      this.#queued++;
      let appended: Promise<void> = Promise.resolve();
      const parsed = this.#chain.then(async () => {
        try {
          appended = send(await this.screen.write(data, plain));
        } finally {
          this.#queued--;
        }
      });
      this.#chain = parsed;
      sent = parsed.then(() => appended);
    }
    const emitted = sent
      .catch((err: unknown) => this.#o.log.error({ err, terminalId: this.#o.terminalId }, 'output not appended'))
      .finally(() => {
        this.#backlog--;
        this.#pressure();
      });
    this.#lastEmit = emitted;
    return emitted;
  }

  /** Applies a resize to the screen at this point of the stream (after what is buffered). */
  resize(cols: number, rows: number): Promise<void> {
    const flushed = this.flush();
    this.#queued++;
    this.#chain = this.#chain.then(() => {
      try {
        this.screen.resize(cols, rows);
      } finally {
        this.#queued--;
      }
    });
    return flushed;
  }

  /** The screen after everything received so far. */
  async snapshot(): Promise<ScreenSnapshot> {
    this.flush();
    await this.#chain;
    return this.screen.snapshot();
  }

  async promptLine(): Promise<string> {
    this.flush();
    await this.#chain;
    return this.screen.promptLine();
  }

  /** The first retained offset: output before it is only in the log. */
  get retainedStart(): number {
    return this.#retained.start;
  }

  /** Raw output between two offsets (clamped to what is retained). */
  slice(from: number, to = this.end): string {
    return this.#retained.read(from, to);
  }

  /**
   * The largest chunk: bigger for plain text. A chunk waits at most coalesceMs either way, so only output faster
   * than PLAIN_CHUNK_BYTES per coalesceMs (a flood) goes in chunks that big; slower output goes at the timer.
   */
  #limit(plain: boolean): number {
    const { coalesceBytes } = this.#o;
    return plain ? Math.max(coalesceBytes, PLAIN_CHUNK_BYTES) : coalesceBytes;
  }

  #pressure(): void {
    if (!this.#paused && this.#backlog >= this.#o.highWaterChunks) {
      this.#paused = true;
      this.pauses++;
      this.#o.pause();
    } else if (this.#paused && this.#backlog <= Math.floor(this.#o.highWaterChunks / 2)) {
      this.#paused = false;
      this.#o.resume();
    }
  }

  get backlog(): number {
    return this.#backlog;
  }

  dispose(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.screen.dispose();
  }
}

/** `plainText` only when it differs from the raw data: plain output is not stored twice. */
function plainOf(data: string, plain: boolean): { plainText?: string } {
  const text = plainText(data, plain);
  return text === data ? {} : { plainText: text };
}
