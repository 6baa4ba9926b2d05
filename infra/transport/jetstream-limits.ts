/**
 * @module
 * JetStream under a small or full disk. The output stream's `max_bytes` is
 * fitted to the storage the server can give (a small disk must not stop
 * `skein up`), or the start-up error names the setting to lower. A store that
 * is full, or a JetStream that disabled itself, answers appends with a
 * retryable `unavailable` at once rather than after a 15 s timeout.
 */
import { JetStreamApiError, type JetStreamManager } from '@nats-io/jetstream';
import { ErrorCode, OUTPUT_STREAM, RuntimeError, subjectPatterns } from '../../schemas/index.ts';

/** JetStream API errors that mean "no storage left" (insufficient resources, storage full). */
const NO_STORAGE = new Set([10023, 10047, 10028]);
const MIB = 1024 * 1024;

export class StoreFullError extends RuntimeError {
  override name = 'StoreFullError';
  constructor(detail: string, cause?: unknown) {
    super(
      ErrorCode.Unavailable,
      `JetStream could not store the fact (${detail}); nothing was acknowledged — free space in the ` +
        "nats-server store dir (private mode: '<data>/jetstream') and retry; appends resume by themselves",
      { retryable: true, cause, reason: `JetStream could not store the fact (${detail})` },
    );
  }
}

/** The error an append should report for a store failure, or undefined when it is something else. */
export function storeError(err: unknown): RuntimeError | undefined {
  if (err instanceof JetStreamApiError && NO_STORAGE.has(err.code)) return new StoreFullError(err.message, err);
  const text = String((err as Error)?.message ?? err);
  if (/insufficient (storage )?resources|no space|storage.*full/i.test(text)) return new StoreFullError(text, err);
  // JetStream switches itself off when its store fails; its API then has no responders.
  if (/no responders|503/i.test(text)) return new StoreFullError(`JetStream not answering: ${text}`, err);
  return undefined;
}

/**
 * Creates or updates SKEIN_OUTPUT with `max_bytes` = the configured retention, or, when the server cannot
 * reserve that much, the storage it has left (at least 1 MiB); fails naming `log.outputMaxBytes` otherwise.
 */
export async function ensureOutputStream(
  jsm: JetStreamManager,
  wanted: number,
  window: number,
  replicas = 1,
): Promise<number> {
  const config = (max_bytes: number) => ({
    name: OUTPUT_STREAM,
    subjects: [subjectPatterns.allOutput],
    storage: 'file' as const,
    retention: 'limits' as const,
    discard: 'old' as const,
    max_bytes,
    duplicate_window: window,
    num_replicas: replicas,
  });
  const attempt = async (max: number): Promise<void> => {
    const exists = await jsm.streams.info(OUTPUT_STREAM).then(
      () => true,
      () => false,
    );
    const { name, ...rest } = config(max);
    // A client without the right to update (an agent's or the CLI's identity) keeps the stream as it is,
    // as before: only a store that cannot hold the limit is an error here.
    if (exists) {
      await jsm.streams.update(name, rest).catch((err: unknown) => {
        if (storeError(err) && !/no responders|503/i.test(String((err as Error)?.message))) throw err;
      });
    } else {
      // Another host may create it at the same moment (named hosts starting together).
      await jsm.streams.add(config(max)).catch(async (err: unknown) => {
        if (
          !(await jsm.streams.info(OUTPUT_STREAM).then(
            () => true,
            () => false,
          ))
        )
          throw err;
      });
    }
  };
  try {
    await attempt(wanted);
    return wanted;
  } catch (err) {
    if (!storeError(err)) throw err;
    const account = await jsm.getAccountInfo().catch(() => undefined);
    const left = account ? account.limits.max_storage - account.storage : -1;
    // An unlimited account (-1) on a small disk: the server's own reservation check failed, so try halves.
    const candidates = left > 0 ? [Math.floor(left / 2)] : [wanted / 4, wanted / 16, wanted / 64].map(Math.floor);
    for (const max of candidates.filter((c) => c >= MIB && c < wanted)) {
      try {
        await attempt(max);
        return max;
      } catch {
        // Still too large: the next candidate is smaller.
      }
    }
    throw new Error(
      `JetStream cannot reserve ${Math.round(wanted / MIB)} MiB for terminal output (stream ${OUTPUT_STREAM}: ` +
        `${(err as Error).message}); lower log.outputMaxBytes in skein.config.json (e.g. ` +
        '{"log":{"outputMaxBytes":16777216}}) or free disk space for the nats-server store',
    );
  }
}
