/**
 * @module
 * Big command payloads parsed off the event loop. Decoding and `JSON.parse` of a 10 MB `file.write` took
 * tens of milliseconds on the host's thread, in one piece, so every other agent's commands and pings
 * waited. Payloads over `OFF_THREAD_BYTES` are parsed by one worker thread (actors/common/lazy-worker.ts);
 * the parsed value comes back by structured clone (a copy, far cheaper than a parse). Smaller payloads, a
 * payload the worker cannot parse (the host then parses it itself and throws the error that names it) and
 * a worker that cannot start or dies all give `undefined`: the caller parses on its own thread, slower,
 * never different. `OrderedJsonParse` keeps each agent's tool calls in order around those parses.
 *
 * A big `data.content` (a file.write) comes back as its UTF-8 bytes too (`Parsed.content`, moved, with their
 * sha256), so the host writes them as they are instead of encoding and hashing 10 MB again; ASCII content is
 * rebuilt here from those bytes (a copy), not cloned as a string (which held this thread ~70 ms for 10 MB).
 */
import type { Logger } from 'pino';
import { LazyWorker } from '../../actors/common/lazy-worker.ts';

/** Payload size above which the parse runs on the worker. */
export const OFF_THREAD_BYTES = 1024 * 1024;
/** Length of a `data.content` string from which the worker also sends it as UTF-8 bytes. */
export const CONTENT_BYTES_CHARS = 256 * 1024;

/** A well-formed `data.content` string as UTF-8 bytes (exactly `Buffer.from(content, 'utf8')`) and their sha256. */
export type ContentBytes = { bytes: Buffer; sha256: string };
/** A payload parsed on the worker: the JSON value, and its big `data.content` as bytes when it has one. */
export type Parsed = { value: unknown; content?: ContentBytes };

export class JsonThread {
  readonly #worker: LazyWorker;
  readonly #threshold: number;

  constructor(log: Logger, threshold = OFF_THREAD_BYTES) {
    // Two levels up is the package root both from infra/transport/ (sources) and from dist/<x>/ (the bundle).
    const url = new URL('../../infra/transport/json-thread-worker.mjs', import.meta.url);
    this.#worker = new LazyWorker(url, log.child({ actor: 'json-thread' }));
    this.#threshold = threshold;
  }

  /** Whether `parse` would send a payload of this size to the worker. */
  offThread(bytes: number): boolean {
    return !this.#worker.broken && bytes >= this.#threshold;
  }

  /** The parsed payload, or `undefined` when the caller must parse it (see the module doc). */
  async parse(payload: Uint8Array, contentChars = CONTENT_BYTES_CHARS): Promise<Parsed | undefined> {
    if (!this.offThread(payload.byteLength)) return undefined;
    // A copy of just this payload's bytes (a view may share a larger buffer), moved, not cloned again.
    const bytes = payload.slice();
    let answer: Record<string, unknown>;
    try {
      answer = await this.#worker.request({ bytes, contentChars }, [bytes.buffer]);
    } catch {
      return undefined;
    }
    if (answer['failed']) return undefined;
    const value = answer['value'];
    const sent = answer['content'] as { bytes: Uint8Array; sha256: string; ascii: boolean } | undefined;
    if (!sent) return { value };
    const content = Buffer.from(sent.bytes.buffer, sent.bytes.byteOffset, sent.bytes.byteLength);
    // ASCII bytes are their own text, one byte a character: latin1 reads them back as the string it was.
    if (sent.ascii) (value as { data: { content: string } }).data.content = content.toString('latin1');
    return { value, content: { bytes: content, sha256: sent.sha256 } };
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

  parse(agentId: string, acts: boolean, data: Uint8Array): Promise<Parsed | undefined> | undefined {
    const big = data.byteLength <= this.#maxPayloadBytes && this.#json.offThread(data.byteLength);
    if (!acts) return big ? this.#json.parse(data) : undefined;
    const before = this.#parsing.get(agentId);
    if (!before && !big) return undefined;
    const mine = (async () => {
      await before;
      return big ? this.#json.parse(data) : undefined;
    })();
    const tail = mine.then(() => undefined);
    this.#parsing.set(agentId, tail);
    void tail.then(() => {
      if (this.#parsing.get(agentId) === tail) this.#parsing.delete(agentId);
    });
    return mine;
  }
}
