/**
 * @module
 * The embedded event log: an append-only JSONL file per stream, one
 * `{ seq, subject, fact }` per line (the same format `skein replay --export`
 * writes). Appends are group-committed: every append waiting when a flush
 * starts is written and fsync'd together, then all resolve. A torn last line
 * (a crash mid-write) is cut off on open. Facts are published on the bus
 * after they are durable, as JetStream does for `nats sub`.
 */
import {
  createReadStream,
  existsSync,
  mkdirSync,
  openSync,
  closeSync,
  readFileSync,
  renameSync,
  statSync,
  ftruncateSync,
} from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { subjectMatches, type Bus } from './bus.ts';
import { decodeLogLine, encodeLogLine } from './codec.ts';
import {
  AppendConflictError,
  type AppendRequest,
  type AppendResult,
  type EventLog,
  type LogStream,
  type ReadOptions,
} from './event-log.ts';
import type { StoredFact } from '../../schemas/index.ts';
import type { Logger } from '../kernel/log.ts';

export type JsonlLogOptions = {
  dir: string;
  bus?: Bus | undefined;
  log?: Logger | undefined;
  /** Output stream retention: past this size the file is rotated once (the older half is dropped). */
  outputMaxBytes?: number;
  duplicateWindowMs?: number;
};

type Pending = { request: AppendRequest; resolve: (r: AppendResult) => void; reject: (e: unknown) => void };

class JsonlStream {
  readonly path: string;
  seq = 0;
  size = 0;
  readonly lastBySubject = new Map<string, number>();
  readonly recentIds = new Map<string, { seq: number; at: number }>();
  handle: FileHandle | undefined;
  queue: Pending[] = [];
  flushing: Promise<void> | undefined;

  constructor(path: string) {
    this.path = path;
  }
}

export class JsonlLog implements EventLog {
  readonly kind = 'jsonl' as const;
  readonly #options: JsonlLogOptions;
  readonly #streams: Record<LogStream, JsonlStream>;
  #closed = false;

  private constructor(options: JsonlLogOptions) {
    this.#options = options;
    this.#streams = {
      events: new JsonlStream(join(options.dir, 'events.jsonl')),
      output: new JsonlStream(join(options.dir, 'output.jsonl')),
    };
  }

  static async open(options: JsonlLogOptions): Promise<JsonlLog> {
    mkdirSync(options.dir, { recursive: true });
    const log = new JsonlLog(options);
    for (const name of ['events', 'output'] as const) await log.#load(name);
    return log;
  }

  /** Path of the events file (the embedded log replays from it). */
  get eventsPath(): string {
    return this.#streams.events.path;
  }

  async #load(name: LogStream): Promise<void> {
    const stream = this.#streams[name];
    if (!existsSync(stream.path)) closeSync(openSync(stream.path, 'a'));
    const text = readFileSync(stream.path, 'utf8');
    const good = text.lastIndexOf('\n') + 1;
    if (good < text.length) {
      // A torn last line: the process died mid-write. Nothing after the last newline was acknowledged.
      this.#options.log?.warn(
        { path: stream.path, bytes: Buffer.byteLength(text.slice(good)) },
        'torn last line cut off',
      );
      const fd = openSync(stream.path, 'r+');
      ftruncateSync(fd, Buffer.byteLength(text.slice(0, good)));
      closeSync(fd);
    }
    const cutoff = Date.now() - (this.#options.duplicateWindowMs ?? 120_000);
    if (name === 'output' && existsSync(`${stream.path}.1`)) {
      const older = readFileSync(`${stream.path}.1`, 'utf8').split('\n').filter(Boolean);
      const last = older.at(-1);
      if (last) stream.seq = decodeLogLine(`${stream.path}.1`, last).seq;
    }
    for (const line of text.slice(0, good).split('\n')) {
      if (!line) continue;
      const fact = decodeLogLine(stream.path, line);
      stream.seq = fact.seq;
      stream.lastBySubject.set(fact.subject, fact.seq);
      const at = Date.parse(fact.at);
      if (at >= cutoff) stream.recentIds.set(fact.id, { seq: fact.seq, at });
    }
    stream.size = statSync(stream.path).size;
    stream.handle = await open(stream.path, 'a');
  }

  append(request: AppendRequest): Promise<AppendResult> {
    if (this.#closed) return Promise.reject(new Error('the event log is closed'));
    const stream = this.#streams[request.stream];
    return new Promise((resolve, reject) => {
      stream.queue.push({ request, resolve, reject });
      stream.flushing ??= this.#flush(request.stream);
    });
  }

  async #flush(name: LogStream): Promise<void> {
    const stream = this.#streams[name];
    try {
      // Let appends issued in the same tick join this batch.
      await new Promise((r) => setImmediate(r));
      while (stream.queue.length > 0) await this.#flushBatch(name, stream);
    } catch (err) {
      for (const pending of stream.queue.splice(0)) pending.reject(err);
      this.#options.log?.error({ err, path: stream.path }, 'event log flush failed');
    } finally {
      stream.flushing = undefined;
    }
  }

  /**
   * Writes one batch. Sequence numbers, subject sequences and msg-ids become visible only after the
   * fsync: a failed write is cut off the file again and every append of the batch is rejected, so a
   * retry is written anew instead of being taken for a duplicate of something never stored.
   */
  async #flushBatch(name: LogStream, stream: JsonlStream): Promise<void> {
    const batch = stream.queue;
    stream.queue = [];
    const now = Date.now();
    this.#expireIds(stream, now);
    const lines: string[] = [];
    const accepted: Array<{ pending: Pending; stored: StoredFact }> = [];
    const batchLast = new Map<string, number>();
    const batchIds = new Map<string, number>();
    let seq = stream.seq;
    for (const pending of batch) {
      const { subject, fact, expectedLastSubjectSeq } = pending.request;
      const seen = batchIds.get(fact.id) ?? stream.recentIds.get(fact.id)?.seq;
      if (seen !== undefined) {
        const inBatch = accepted.find((a) => a.stored.id === fact.id);
        if (inBatch) inBatch.pending = chain(inBatch.pending, pending);
        else pending.resolve({ seq: seen, duplicate: true });
        continue;
      }
      const last = batchLast.get(subject) ?? stream.lastBySubject.get(subject) ?? 0;
      if (expectedLastSubjectSeq !== undefined && expectedLastSubjectSeq !== last) {
        pending.reject(new AppendConflictError(subject, expectedLastSubjectSeq, `wrong last sequence: ${last}`));
        continue;
      }
      const stored: StoredFact = { ...fact, seq: ++seq, subject };
      batchLast.set(subject, stored.seq);
      batchIds.set(fact.id, stored.seq);
      lines.push(encodeLogLine(stored));
      accepted.push({ pending, stored });
    }
    if (lines.length === 0) return;
    const text = `${lines.join('\n')}\n`;
    try {
      await stream.handle!.write(text);
      await stream.handle!.datasync();
    } catch (err) {
      await stream.handle!.truncate(stream.size).catch(() => undefined);
      for (const { pending } of accepted) pending.reject(err);
      return;
    }
    stream.size += Buffer.byteLength(text);
    stream.seq = seq;
    for (const [subject, last] of batchLast) stream.lastBySubject.set(subject, last);
    for (const [id, at] of batchIds) stream.recentIds.set(id, { seq: at, at: now });
    for (const { pending, stored } of accepted) {
      pending.resolve({ seq: stored.seq, duplicate: false });
      const { seq: _seq, subject, ...fact } = stored;
      this.#options.bus?.publish(subject, JSON.stringify(fact));
    }
    if (name === 'output') await this.#rotateOutput(stream);
  }

  #expireIds(stream: JsonlStream, now: number): void {
    const cutoff = now - (this.#options.duplicateWindowMs ?? 120_000);
    for (const [id, entry] of stream.recentIds) {
      if (entry.at >= cutoff) break; // insertion order is time order
      stream.recentIds.delete(id);
    }
  }

  async #rotateOutput(stream: JsonlStream): Promise<void> {
    const max = this.#options.outputMaxBytes ?? 256 * 1024 * 1024;
    if (stream.size < max / 2) return;
    await stream.handle!.close();
    renameSync(stream.path, `${stream.path}.1`);
    stream.handle = await open(stream.path, 'a');
    stream.size = 0;
  }

  async *read(options: ReadOptions = {}): AsyncIterable<StoredFact> {
    const name = options.stream ?? 'events';
    const stream = this.#streams[name];
    const from = options.fromSeq ?? 1;
    const until = options.untilSeq ?? stream.seq;
    const files =
      name === 'output' && existsSync(`${stream.path}.1`) ? [`${stream.path}.1`, stream.path] : [stream.path];
    for (const file of files) {
      yield* readJsonlFile(file, { ...options, fromSeq: from, untilSeq: until });
    }
  }

  async scan(options: ReadOptions, visit: (fact: StoredFact) => void): Promise<void> {
    for await (const fact of this.read(options)) visit(fact);
  }

  async lastSeq(stream: LogStream = 'events'): Promise<number> {
    return this.#streams[stream].seq;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const stream of Object.values(this.#streams)) {
      await stream.flushing;
      await stream.handle?.close();
    }
  }
}

/** Reads a JSONL log or export file, in order, within the given bounds. */
export async function* readJsonlFile(path: string, options: ReadOptions = {}): AsyncIterable<StoredFact> {
  const from = options.fromSeq ?? 1;
  const until = options.untilSeq ?? Number.POSITIVE_INFINITY;
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line) continue;
    let fact: StoredFact;
    try {
      fact = decodeLogLine(path, line);
    } catch (err) {
      // Only the last line can be torn (no newline yet); anything else is reported and skipped.
      if (!line.endsWith('}')) break;
      options.onInvalid?.(0, path, err as Error);
      continue;
    }
    if (fact.seq < from) continue;
    if (fact.seq > until) break;
    if (options.subject && !subjectMatches(options.subject, fact.subject)) continue;
    yield fact;
  }
}

/** A second append of the same msg-id in one batch: settled when the first is, as a duplicate. */
function chain(first: Pending, second: Pending): Pending {
  return {
    request: first.request,
    resolve: (r) => {
      first.resolve(r);
      second.resolve({ seq: r.seq, duplicate: true });
    },
    reject: (e) => {
      first.reject(e);
      second.reject(e);
    },
  };
}
