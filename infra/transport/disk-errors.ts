/**
 * @module
 * Disk failures of the embedded log as errors a client can act on: a full
 * disk (ENOSPC, EDQUOT) or a short write is `unavailable` and retryable, with
 * a message naming the data dir, because the runtime recovers by itself once
 * space returns. Anything else stays what it was.
 */
import { ErrorCode, RuntimeError } from '../../schemas/index.ts';
import { writePrivate } from './auth/authority.ts';

const FULL = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/** What to do when a write of the running runtime failed: it recovers once there is room. */
export const RETRY_ADVICE =
  'nothing was acknowledged — free space on that disk (or move --data) and retry; the runtime recovers by itself';
/** What to do when a file the start writes (a key, a token, the log seal) could not be written. */
export const START_ADVICE = 'free space on that disk (or move --data) and start skein again';

/** The disk holding `dir` is full (or over quota): retry after freeing space. */
export class DiskFullError extends RuntimeError {
  override name = 'DiskFullError';
  constructor(dir: string, detail: string, cause?: unknown, what = 'the event log in data dir', advice = RETRY_ADVICE) {
    super(ErrorCode.Unavailable, `${what} ${dir} could not be written (${detail}); ${advice}`, {
      retryable: true,
      cause,
      reason: `${what} ${dir} could not be written (${detail})`,
    });
  }
}

/** A write that stored fewer bytes than asked and reported no error (the disk filled mid-write). */
export class ShortWriteError extends Error {
  override name = 'ShortWriteError';
  constructor(path: string, written: number, wanted: number) {
    super(`short write on ${path}: ${written} of ${wanted} bytes stored`);
  }
}

export function isDiskFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return err instanceof ShortWriteError || (typeof code === 'string' && FULL.has(code));
}

/**
 * Maps a write failure on the log (or, naming it as `what`, another store or file in the data dir) to what the
 * caller should see; `advice` says what to do (START_ADVICE for a file the start writes).
 */
export function diskError(dir: string, err: unknown, what?: string, advice?: string): unknown {
  if (!isDiskFull(err)) return err;
  const code = (err as NodeJS.ErrnoException).code ?? 'short write';
  return new DiskFullError(dir, `${code}: disk full`, err, what, advice);
}

/** Writes a private file (0600) the start needs; a full disk names the file (`what` it is) and what to do. */
export function writeStartFile(path: string, text: string, what: string): void {
  try {
    writePrivate(path, text);
  } catch (err) {
    throw diskError(path, err, what, START_ADVICE);
  }
}
