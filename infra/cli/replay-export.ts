/**
 * @module
 * Where `skein replay --export` writes: never onto the log it reads (that file would be truncated before it
 * is read), and whole or not at all: into a temporary file beside the target, renamed into place once complete.
 */
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, realpathSync, renameSync, rmSync, statSync, type WriteStream } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from './output.ts';

/** The files of a data dir's log (`dataDirReader` in replay.ts reads these). */
const LOG_FILES = ['events.jsonl', 'output.jsonl', 'output.jsonl.1'];

export type ExportFile = {
  /** Writes one line; resolves when the stream can take more. */
  write(line: string): Promise<void> | undefined;
  /** Flushes and renames the file into place. */
  finish(): Promise<void>;
  /** Removes the temporary file (the target is left as it was). */
  abort(): void;
};

/**
 * Refuses an export path that is the replayed file or a file of the data dir's log: compared by real path,
 * and by device and inode when both exist (a hard link).
 */
export function checkExportTarget(path: string, source: { fromFile?: string; dataDir?: string }): void {
  const target = realTarget(path);
  const sameFile = (other: string) => realTarget(other) === target || sameInode(path, other);
  if (source.fromFile !== undefined && sameFile(source.fromFile)) {
    throw new UsageError(
      `--export '${path}' is the log being replayed ('${source.fromFile}'): writing it would erase it; ` +
        'export to another file',
    );
  }
  if (source.dataDir === undefined) return;
  const dataDir = source.dataDir;
  const inLog =
    LOG_FILES.some((name) => sameFile(join(dataDir, name))) ||
    target.startsWith(`${realTarget(join(dataDir, 'jetstream'))}/`);
  if (inLog) {
    throw new UsageError(
      `--export '${path}' is a file of the event log in '${dataDir}': writing it would erase the log; ` +
        'export to a file outside the data dir',
    );
  }
}

/** Opens the export: a temporary file beside `path`, so a failed or interrupted export leaves `path` alone. */
export async function openExport(path: string): Promise<ExportFile> {
  const dir = dirname(resolve(path));
  if (!existsSync(dir)) {
    throw new UsageError(
      `cannot write the export to '${path}': the directory '${dirname(path)}' does not exist; ` +
        'create it first or choose another path',
    );
  }
  const temp = join(dir, `.${basename(path)}.${randomBytes(4).toString('hex')}.tmp`);
  const stream = createWriteStream(temp, { flags: 'wx' });
  let failure: Error | undefined;
  stream.on('error', (err) => {
    failure ??= err;
  });
  await new Promise<void>((ready, reject) => {
    stream.once('open', () => ready());
    stream.once('error', (err) => reject(writeError(path, err)));
  });
  return {
    write(line) {
      if (failure) throw writeError(path, failure);
      if (stream.write(line)) return undefined;
      return new Promise((drained, reject) => {
        stream.once('drain', drained);
        stream.once('error', (err) => reject(writeError(path, err)));
      });
    },
    async finish() {
      await new Promise<void>((done, reject) => end(stream, (err) => (err ? reject(err) : done())));
      if (failure) throw writeError(path, failure);
      try {
        renameSync(temp, path);
      } catch (err) {
        throw writeError(path, err as Error);
      }
    },
    abort() {
      stream.destroy();
      rmSync(temp, { force: true });
    },
  };
}

function end(stream: WriteStream, callback: (err?: Error | null) => void): void {
  if (stream.destroyed) return callback(null);
  stream.end(callback);
}

/** A write that failed past the checks (a full disk, a permission): exit 1, naming the path. */
function writeError(path: string, err: Error): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const reason =
    code === 'EACCES' || code === 'EPERM'
      ? 'permission denied'
      : code === 'ENOSPC'
        ? 'the disk is full'
        : code === 'EISDIR'
          ? 'it is a directory'
          : err.message;
  return new Error(`cannot write the export to '${path}': ${reason}; choose another path`, { cause: err });
}

/** The real path of a file, or of its directory joined with its name when it does not exist (yet). */
function realTarget(path: string): string {
  const full = resolve(path);
  try {
    return realpathSync(full);
  } catch {
    try {
      return join(realpathSync(dirname(full)), basename(full));
    } catch {
      return full;
    }
  }
}

function sameInode(a: string, b: string): boolean {
  const sa = statSync(a, { throwIfNoEntry: false });
  const sb = statSync(b, { throwIfNoEntry: false });
  return sa !== undefined && sb !== undefined && sa.dev === sb.dev && sa.ino === sb.ino;
}
