/**
 * @module
 * The embedded event log: an append-only JSONL file per stream, one
 * `{ seq, subject, fact }` per line (the same format `skein replay --export`
 * writes). Appends are group-committed: every append waiting when a flush
 * starts is written and fsync'd together, then all resolve. A batch is
 * acknowledged only when every byte is written and synced; a failed or short
 * write is cut off again and rejected (`unavailable` when the disk is full). A
 * damaged tail (torn or glued last line) is cut off and reported on open. Facts are published on the bus
 * after they are durable, as JetStream does for `nats sub`.
 */
import { createReadStream, existsSync, mkdirSync, openSync, closeSync, renameSync, statSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { subjectMatches, type Bus } from './bus.ts';
import { encodeLogLine } from './codec.ts';
import { diskError, isDiskFull, ShortWriteError } from './disk-errors.ts';
import { decodeSalvaging, loadAndRepair } from './jsonl-tail.ts';
import { JsonlSeal } from './jsonl-seal.ts';
import {
  AppendConflictError,
  type AppendRequest,
  type AppendResult,
  type EventLog,
  type LogStream,
  type ReadOptions,
} from './event-log.ts';
import { ErrorCode, InvalidMessageError, noteRecordedBytes, type StoredFact } from '../../schemas/index.ts';
import type { Logger } from '../kernel/log.ts';

export type JsonlLogOptions = {
  dir: string;
  bus?: Bus | undefined;
  log?: Logger | undefined;
  /** Output stream retention: past this size the file is rotated once (the older half is dropped). */
  outputMaxBytes?: number;
  duplicateWindowMs?: number;
  /**
   * Where the seal of `events.jsonl` lives (`jsonl-seal.ts`; the runtime gives `<data>/auth`): every line
   * is MAC-chained and checked on open. Without it the log is not sealed (tests of the log format).
   */
  sealDir?: string | undefined;
};

type Pending = { request: AppendRequest; resolve: (r: AppendResult) => void; reject: (e: unknown) => void };

class JsonlStream {
  readonly path: string;
  seq = 0;
  size = 0;
  readonly lastBySubject = new Map<string, number>();
  readonly recentIds = new Map<string, { seq: number; at: number }>();
  /** Id of the last fact stored (AppendRequest.expectedLastMsgId). */
  lastId: string | undefined;
  handle: FileHandle | undefined;
  queue: Pending[] = [];
  flushing: Promise<void> | undefined;
  /** A failed write may have left bytes past `size`; they are cut before the next write. */
  dirty = false;
  /** Writes are failing (reported once, until one succeeds). */
  failing = false;

  constructor(path: string) {
    this.path = path;
  }
}

export class JsonlLog implements EventLog {
  readonly kind = 'jsonl' as const;
  readonly #options: JsonlLogOptions;
  readonly #streams: Record<LogStream, JsonlStream>;
  #seal: JsonlSeal | undefined;
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
    // Before the file is created or repaired: a missing or altered log is refused, never begun afresh.
    if (options.sealDir) log.#seal = JsonlSeal.open(log.eventsPath, options.sealDir, options.log);
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
    const cutoff = Date.now() - (this.#options.duplicateWindowMs ?? 120_000);
    if (name === 'output' && existsSync(`${stream.path}.1`)) {
      const older = loadAndRepair(`${stream.path}.1`, this.#options.log).facts.at(-1);
      if (older) stream.seq = older.seq;
    }
    const tail = name === 'events' ? this.#seal?.tail : undefined;
    const loaded = loadAndRepair(stream.path, this.#options.log, tail);
    for (const fact of loaded.facts) {
      stream.seq = fact.seq;
      stream.lastBySubject.set(fact.subject, fact.seq);
      stream.lastId = fact.id;
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
    let inFlight: Pending[] = [];
    try {
      // Let appends issued in the same tick join this batch.
      await new Promise((r) => setImmediate(r));
      while (stream.queue.length > 0) {
        inFlight = stream.queue;
        stream.queue = [];
        await this.#flushBatch(name, stream, inFlight);
      }
    } catch (err) {
      // The batch in flight too: an append left unsettled would hold its subject's lock forever.
      for (const pending of [...inFlight, ...stream.queue.splice(0)]) pending.reject(err);
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
  async #flushBatch(name: LogStream, stream: JsonlStream, batch: Pending[]): Promise<void> {
    const now = Date.now();
    this.#expireIds(stream, now);
    const lines: string[] = [];
    const accepted: Array<{ pending: Pending; stored: StoredFact }> = [];
    const batchLast = new Map<string, number>();
    const batchIds = new Map<string, number>();
    let seq = stream.seq;
    let lastId = stream.lastId;
    for (const pending of batch) {
      const { subject, fact, expectedLastSubjectSeq, expectedLastMsgId } = pending.request;
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
      if (expectedLastMsgId !== undefined && expectedLastMsgId !== lastId) {
        pending.reject(new AppendConflictError(subject, expectedLastMsgId, `wrong last msg ID: ${lastId ?? 'none'}`));
        continue;
      }
      const stored: StoredFact = { ...fact, seq: seq + 1, subject };
      let line: string;
      try {
        line = encodeLogLine(stored);
      } catch (err) {
        // Only this append fails (a value JSON cannot write); the batch's others are written.
        const detail = err instanceof Error ? err.message : String(err);
        pending.reject(
          new InvalidMessageError(
            ErrorCode.InvalidMessage,
            subject,
            `fact '${fact.type}' cannot be written as JSON: ${detail}`,
          ),
        );
        continue;
      }
      seq += 1;
      lastId = fact.id;
      batchLast.set(subject, stored.seq);
      batchIds.set(fact.id, stored.seq);
      lines.push(line);
      accepted.push({ pending, stored });
    }
    if (lines.length === 0) return;
    const sealed = name === 'events' ? this.#seal?.seal(lines) : undefined;
    const bytes = Buffer.from(`${(sealed?.lines ?? lines).join('\n')}\n`);
    try {
      await this.#repairTail(stream);
      await writeAll(stream, bytes);
      await stream.handle!.datasync();
    } catch (err) {
      // Nothing of the batch is acknowledged; what reached the file is cut off again (or on the next
      // write, or on open), so no half line is ever followed by another fact.
      stream.dirty = true;
      await this.#repairTail(stream).catch(() => undefined);
      const reported = diskError(this.#options.dir, err);
      this.#reportFailure(stream, err);
      for (const { pending } of accepted) pending.reject(reported);
      return;
    }
    if (stream.failing) {
      stream.failing = false;
      this.#options.log?.info({ path: stream.path }, 'event log writable again');
    }
    stream.size += bytes.length;
    stream.seq = seq;
    stream.lastId = lastId;
    // The seal follows the durable batch (written off the loop; a failure is logged there).
    if (sealed) this.#seal!.commit(seq, sealed.lastMac);
    for (const [subject, last] of batchLast) stream.lastBySubject.set(subject, last);
    for (const [id, at] of batchIds) stream.recentIds.set(id, { seq: at, at: now });
    const written = sealed?.lines ?? lines;
    for (const [i, { pending, stored }] of accepted.entries()) {
      pending.resolve({ seq: stored.seq, duplicate: false, bytes: Buffer.byteLength(written[i]!) + 1 });
      const { seq: _seq, subject, ...fact } = stored;
      this.#options.bus?.publish(subject, JSON.stringify(fact));
    }
    if (name === 'output') await this.#rotateOutput(stream);
  }

  /** Cuts whatever a failed write left past the last acknowledged byte. */
  async #repairTail(stream: JsonlStream): Promise<void> {
    if (!stream.dirty) return;
    await stream.handle!.truncate(stream.size);
    await stream.handle!.datasync();
    stream.dirty = false;
  }

  /** One log line per change of state (failing / writable again), not one per failed batch. */
  #reportFailure(stream: JsonlStream, err: unknown): void {
    if (stream.failing) return;
    stream.failing = true;
    this.#options.log?.error(
      { err, path: stream.path, dataDir: this.#options.dir, diskFull: isDiskFull(err) },
      'event log write failed; appends are refused (retryable) until it can be written again',
    );
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
    await this.#seal?.flush();
  }
}

/** Reads a JSONL log or export file, in order, within the given bounds. */
export async function* readJsonlFile(path: string, options: ReadOptions = {}): AsyncIterable<StoredFact> {
  const from = options.fromSeq ?? 1;
  const until = options.untilSeq ?? Number.POSITIVE_INFINITY;
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line) continue;
    const decoded = decodeSalvaging(path, line);
    if (decoded.damaged) options.onInvalid?.(decoded.fact?.seq ?? 0, path, new Error(decoded.error));
    // A damaged line may still end with a whole fact glued after a torn one (open keeps it too).
    const fact = decoded.fact;
    if (!fact) continue;
    noteRecordedBytes(fact, Buffer.byteLength(line) + 1);
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

/** Writes every byte or throws: a short write (a disk filling mid-write) is an error, never a success. */
async function writeAll(stream: JsonlStream, bytes: Buffer): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    const { bytesWritten } = await stream.handle!.write(bytes, offset, bytes.length - offset);
    if (bytesWritten <= 0) throw new ShortWriteError(stream.path, offset, bytes.length);
    offset += bytesWritten;
  }
}
