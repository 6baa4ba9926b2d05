/**
 * @module
 * The JSONL files `skein replay` reads (an export, or a data dir's `events.jsonl` / `output.jsonl`): as
 * readExportFile reads them, but a line that is not a fact is reported with its line number, and a file none of
 * whose lines is a fact is refused as not a log.
 */
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { noteRecordedBytes, type StoredFact } from '../../schemas/index.ts';
import { subjectMatches } from '../transport/bus.ts';
import type { FactSource } from '../kernel/replay.ts';
import type { ReadOptions } from '../transport/event-log.ts';
import { isOutputFact } from '../transport/export-file.ts';
import { decodeSalvaging } from '../transport/jsonl-tail.ts';
import type { StreamReader } from '../terminal/screen-replay.ts';
import { UsageError } from './output.ts';

/** Where replay reads from. */
export type Source = {
  /** The log as named in warnings: a file's path, or the stream. */
  name: string;
  facts: FactSource;
  /** Any stream, for terminal screens. */
  read: StreamReader;
  total: () => Promise<number>;
  close: () => Promise<void>;
  /** Why a terminal of the log may have no output in this source: said instead of showing an empty screen. */
  noOutput: (terminalId: string) => string;
};

type FileReadOptions = Omit<ReadOptions, 'onInvalid'> & { warn?: boolean };

/** A JSONL export or embedded log; with `dataDir`, terminal output is read from that dir's output files. */
export function fileSource(path: string, range: { untilSeq?: number }, dataDir?: string): Source {
  return {
    name: path,
    read: dataDir ? dataDirReader(dataDir) : (options) => readLogFile(path, { ...options, warn: true }),
    facts: readLogFile(path, { ...range, warn: true }),
    total: async () => {
      let last = 0;
      for await (const fact of readLogFile(path, range)) last = fact.seq;
      return last;
    },
    close: async () => undefined,
    noOutput: dataDir
      ? (id) => `no output of terminal '${id}' is left in ${dataDir} (output.jsonl is rotated by size)`
      : (id) =>
          `'${path}' holds no output of terminal '${id}': it is an event log without terminal output ` +
          '(a copy of events.jsonl, or an export made before exports carried output); export it again ' +
          'with `skein replay --export <file>`, or pass --data <dir> of the runtime that ran it',
  };
}

/**
 * Refuses a --from-file none of whose lines is a fact (`/etc/passwd`): replaying it gave 0 facts, exit 0 and a
 * warning per line. Stops at the first fact, so a real log costs one line.
 */
export async function checkIsLog(path: string): Promise<void> {
  let lines = 0;
  let first: string | undefined;
  for await (const { line, fact, error } of numberedLines(path)) {
    if (fact) return;
    lines++;
    first ??= `line ${line}: ${error}`;
  }
  if (lines === 0) return;
  throw new UsageError(
    `--from-file '${path}' is not a skein event log export: none of its ${lines} lines is a fact ` +
      `(${first}); pass a file written by \`skein replay --export\`, or a data dir's events.jsonl`,
  );
}

/** Reads any stream of a data dir's JSONL logs. */
function dataDirReader(dataDir: string): StreamReader {
  return (options) => {
    const stream = options.stream ?? 'events';
    const base = join(dataDir, `${stream}.jsonl`);
    const files = stream === 'output' && existsSync(`${base}.1`) ? [`${base}.1`, base] : [base];
    return (async function* () {
      for (const file of files) if (existsSync(file)) yield* readLogFile(file, { ...options, warn: true });
    })();
  };
}

/** One stream of a JSONL file, in order, within the bounds (readExportFile's reading, with line numbers). */
async function* readLogFile(path: string, options: FileReadOptions): AsyncIterable<StoredFact> {
  const output = options.stream === 'output';
  const from = options.fromSeq ?? 1;
  const until = options.untilSeq ?? Number.POSITIVE_INFINITY;
  const subject = options.subject ?? (output ? 'skein.out.>' : undefined);
  for await (const { line, fact, error } of numberedLines(path)) {
    if (error !== undefined && options.warn) {
      process.stderr.write(`skein replay: skipped line ${line} of ${path}: ${error}\n`);
    }
    // Events come first and output after them, numbered apart: each stream skips the other's lines.
    if (!fact || isOutputFact(fact) !== output) continue;
    if (fact.seq < from) continue;
    if (fact.seq > until) break;
    if (subject && !subjectMatches(subject, fact.subject)) continue;
    yield fact;
  }
}

/** Each non-empty line with its number: the fact it holds, or why it is not one (both for a glued line). */
async function* numberedLines(path: string): AsyncIterable<{ line: number; fact?: StoredFact; error?: string }> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  for await (const text of lines) {
    n++;
    if (!text) continue;
    const decoded = decodeSalvaging(path, text);
    // The error names the file already given with the line number.
    const error = decoded.damaged
      ? (decoded.error ?? 'damaged').replace(`Invalid message on '${path}': `, '')
      : undefined;
    if (decoded.fact) noteRecordedBytes(decoded.fact, Buffer.byteLength(text) + 1);
    yield { line: n, ...(decoded.fact ? { fact: decoded.fact } : {}), ...(error !== undefined ? { error } : {}) };
  }
}
