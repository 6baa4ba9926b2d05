/**
 * @module
 * Big command payloads parsed off the event loop. Decoding and `JSON.parse` of a 10 MB `file.write` took
 * tens of milliseconds on the host's thread, in one piece, so every other agent's commands and pings
 * waited. Payloads over `OFF_THREAD_BYTES` are parsed by one worker thread (actors/common/lazy-worker.ts);
 * the parsed value comes back by structured clone (a copy, far cheaper than a parse). `OrderedJsonParse` keeps
 * each agent's tool calls in order around those parses.
 *
 * The payload goes to the worker moved, not copied, when the bus says it is the message's alone (`owned`, the
 * embedded socket's commands): a 10 MB copy held this thread ~40 ms on a loaded machine. Otherwise (a view on
 * a broker connection's buffer) a copy of its bytes goes. A payload the worker cannot parse comes back (moved
 * again) for the caller's own parse, which throws the error that names it. If the worker dies holding a moved
 * payload, the command fails with a retryable `unavailable` (nothing of it was done; a copied one the caller
 * still has, and parses itself) and the next big payload starts a new worker (`JSON_THREAD_RESTARTS` times; then,
 * and for a worker that cannot start, the caller parses on its own thread: slower, never different).
 *
 * A big `data.content` (a file.write) comes back as its UTF-8 bytes (`Parsed.content`, moved, with their sha256
 * and what the edit kernel asks of the text: `ContentFacts`), never as a cloned string (a structured clone of a
 * 10 MB string held this thread ~70 ms). The string is rebuilt here from the bytes a piece at a time, one piece
 * per task, as a rope: nothing on the write path reads its characters (the kernel uses the bytes and the facts),
 * so V8 never copies it into one flat 10 MB string on this thread.
 */
import type { Logger } from 'pino';
import { LazyWorker } from '../../actors/common/lazy-worker.ts';
import { ErrorCode, RuntimeError } from '../../schemas/errors.ts';
import type { ContentFacts } from '../../actors/edit/file-io.ts';

/** Payload size above which the parse runs on the worker. */
export const OFF_THREAD_BYTES = 1024 * 1024;
/** Length of a `data.content` string from which the worker also sends it as UTF-8 bytes. */
export const CONTENT_BYTES_CHARS = 256 * 1024;
/** Worker deaths survived by starting a new one; past them big payloads are parsed on the caller's thread. */
export const JSON_THREAD_RESTARTS = 3;
/** Bytes of content turned into text per task when the string is rebuilt (~1–5 ms of this thread each). */
const PIECE_BYTES = 1 << 20;

/**
 * A well-formed `data.content` string as UTF-8 bytes (exactly `Buffer.from(text, 'utf8')`), their sha256, the
 * string itself (`text`, the very string in the parsed `data.content`) and what the worker found in it.
 */
export type ContentBytes = { bytes: Buffer; sha256: string; text: string; ascii: boolean; facts: ContentFacts };
/**
 * A payload parsed on the worker: the JSON value, and its big `data.content` as bytes when it has one. Or, when
 * the worker could not parse it, `unparsed`: the payload's bytes back, for the caller's parse to name the error.
 */
export type Parsed = { value: unknown; content?: ContentBytes } | { unparsed: Uint8Array };

export class JsonThread {
  readonly #worker: LazyWorker;
  readonly #threshold: number;

  /** `worker`: the worker script (tests give one that dies); default json-thread-worker.mjs. */
  constructor(log: Logger, threshold = OFF_THREAD_BYTES, worker?: URL) {
    // Two levels up is the package root both from infra/transport/ (sources) and from dist/<x>/ (the bundle).
    const url = worker ?? new URL('../../infra/transport/json-thread-worker.mjs', import.meta.url);
    this.#worker = new LazyWorker(url, log.child({ actor: 'json-thread' }), { restarts: JSON_THREAD_RESTARTS });
    this.#threshold = threshold;
  }

  /** Whether `parse` would send a payload of this size to the worker. */
  offThread(bytes: number): boolean {
    return !this.#worker.broken && bytes >= this.#threshold;
  }

  /**
   * The parsed payload, or `undefined` when the caller must parse `payload` itself (small, or the worker could
   * not take it). `owned`: the payload is the caller's to give away (`BusMsg.owned`): it is moved, and is
   * empty after. Throws a retryable `unavailable` RuntimeError when the worker died with the moved payload.
   */
  async parse(
    payload: Uint8Array,
    options: { owned?: boolean | undefined; contentChars?: number } = {},
  ): Promise<Parsed | undefined> {
    const size = payload.byteLength;
    if (!this.offThread(size)) return undefined;
    const whole = payload.byteOffset === 0 && size === payload.buffer.byteLength;
    // Not ours to move (or a view on a larger buffer): a copy of just its bytes (`new`, as a Buffer's slice shares).
    const bytes = options.owned && whole ? payload : new Uint8Array(payload);
    let answer: Record<string, unknown>;
    try {
      const contentChars = options.contentChars ?? CONTENT_BYTES_CHARS;
      answer = await this.#worker.request({ bytes, contentChars }, [bytes.buffer as ArrayBuffer]);
    } catch (err) {
      // The caller still has its bytes (copied, or never handed over): it parses them itself.
      if (payload.byteLength === size) return undefined;
      throw new RuntimeError(
        ErrorCode.Unavailable,
        `the JSON thread stopped while it parsed this command's ${size}-byte payload, which was lost with it ` +
          `(${err instanceof Error ? err.message : String(err)}); nothing of the command was done: send it again`,
        { retryable: true, cause: err },
      );
    }
    // Not JSON: the caller parses it to name the error (the bytes back when they were moved).
    if (answer['failed']) return payload.byteLength === size ? undefined : { unparsed: answer['bytes'] as Uint8Array };
    const value = answer['value'];
    const sent = answer['content'] as
      | { bytes: Uint8Array; sha256: string; ascii: boolean; facts: ContentFacts }
      | undefined;
    if (!sent) return { value };
    const content = Buffer.from(sent.bytes.buffer, sent.bytes.byteOffset, sent.bytes.byteLength);
    const text = await textOf(content, sent.ascii);
    (value as { data: { content: string } }).data.content = text;
    return { value, content: { bytes: content, sha256: sent.sha256, text, ascii: sent.ascii, facts: sent.facts } };
  }

  /** Whether a worker thread is running (for tests). */
  get running(): boolean {
    return this.#worker.running;
  }

  close(): Promise<void> {
    return this.#worker.close();
  }
}

/**
 * The first `chars` characters of a content's text, from its bytes (`text.slice(0, chars)` would copy the whole
 * rope into one flat string first).
 */
export function contentHead(content: ContentBytes, chars: number): string {
  if (content.ascii) return content.bytes.toString('latin1', 0, chars);
  // A character is at most 4 bytes; stop before a continuation byte, so that no character is cut.
  let end = Math.min(content.bytes.length, 4 * chars + 4);
  while (end < content.bytes.length && (content.bytes[end]! & 0xc0) === 0x80) end--;
  return content.bytes.toString('utf8', 0, end).slice(0, chars);
}

/**
 * The text of well-formed UTF-8 `bytes`, built a piece per task (each ending on a character boundary) and joined
 * as a rope: no task holds the thread for the whole 10 MB.
 */
async function textOf(bytes: Buffer, ascii: boolean): Promise<string> {
  let text = '';
  for (let at = 0; at < bytes.length; ) {
    let end = Math.min(bytes.length, at + PIECE_BYTES);
    while (!ascii && end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
    text += bytes.toString(ascii ? 'latin1' : 'utf8', at, end);
    at = end;
    if (at < bytes.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return text;
}

/**
 * The JSON thread in each agent's command order. A payload over the thread's threshold (and within the payload
 * limit) is parsed on the worker; any other gives `undefined` at once (decodeCommand parses it). A tool call
 * (a command that acts: a write, an exec…) of an agent whose earlier big tool call is still being parsed waits
 * for it, so each agent's acts start in the order they came; reads and pings never wait behind a parse.
 */
export class OrderedJsonParse {
  readonly #json: JsonThread;
  readonly #maxPayloadBytes: number;
  /** agentId → the end of its latest tool call's parse. */
  readonly #parsing = new Map<string, Promise<unknown>>();

  constructor(json: JsonThread, maxPayloadBytes: number) {
    this.#json = json;
    this.#maxPayloadBytes = maxPayloadBytes;
  }

  /** `owned`: as for `JsonThread.parse`. */
  parse(agentId: string, acts: boolean, data: Uint8Array, owned?: boolean): Promise<Parsed | undefined> | undefined {
    const big = data.byteLength <= this.#maxPayloadBytes && this.#json.offThread(data.byteLength);
    if (!acts) return big ? this.#json.parse(data, { owned }) : undefined;
    const before = this.#parsing.get(agentId);
    if (!before && !big) return undefined;
    const mine = (async () => {
      await before;
      return big ? this.#json.parse(data, { owned }) : undefined;
    })();
    // The next tool call waits for this parse to end, not to succeed (its failure is this command's alone).
    const tail = mine.then(
      () => undefined,
      () => undefined,
    );
    this.#parsing.set(agentId, tail);
    void tail.then(() => {
      if (this.#parsing.get(agentId) === tail) this.#parsing.delete(agentId);
    });
    return mine;
  }
}
