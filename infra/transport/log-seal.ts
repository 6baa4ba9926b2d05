/**
 * @module
 * Guards the audit log (stream SKEIN_EVENTS) against deletion and
 * alteration. The data dir keeps a seal (`log-seal.json`: the stream's
 * settings and the first and last sequence seen). At start, a stream that is
 * gone, shorter, or configured differently than sealed stops the host with an
 * error saying what changed and how to recover: a fresh log is never begun
 * silently. While running, JetStream advisories for the stream (deleted,
 * updated) and a failed append that finds the stream changed mark the log
 * lost: the host refuses commands and says so.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { jetstreamManager, type StreamInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import * as z from 'zod';
import { EVENTS_STREAM } from '../../schemas/index.ts';

/** The settings that decide what the log keeps; any change to them can drop or hide facts. */
const SEALED_KEYS = [
  'subjects',
  'storage',
  'retention',
  'discard',
  'max_msgs',
  'max_bytes',
  'max_age',
  'max_msgs_per_subject',
  'max_msg_size',
  'deny_delete',
  'deny_purge',
] as const;

const Seal = z.object({
  stream: z.string(),
  config: z.record(z.string(), z.unknown()),
  firstSeq: z.number().int(),
  lastSeq: z.number().int(),
  sealedAt: z.string(),
});
type Seal = z.infer<typeof Seal>;

export class LogTamperedError extends Error {
  override name = 'LogTamperedError';
}

export function sealPath(dataDir: string): string {
  return join(dataDir, 'log-seal.json');
}

function readSeal(dataDir: string): Seal | undefined {
  const path = sealPath(dataDir);
  if (!existsSync(path)) return undefined;
  const parsed = Seal.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    throw new LogTamperedError(`${path} is not a log seal (${parsed.error.message}); restore it or move it away`);
  }
  return parsed.data;
}

function sealedConfig(info: StreamInfo): Record<string, unknown> {
  const config = info.config as unknown as Record<string, unknown>;
  return Object.fromEntries(SEALED_KEYS.map((key) => [key, config[key] ?? null]));
}

/** What differs between a sealed stream and the one the broker has now; empty when nothing. */
export function changesSince(seal: Seal, info: StreamInfo | undefined): string[] {
  if (!info) return [`deleted (it held facts up to sequence ${seal.lastSeq})`];
  const changes: string[] = [];
  const now = sealedConfig(info);
  for (const key of SEALED_KEYS) {
    const was = JSON.stringify(seal.config[key] ?? null);
    const is = JSON.stringify(now[key] ?? null);
    if (was !== is) changes.push(`${key} ${is} (was ${was})`);
  }
  if (info.state.last_seq < seal.lastSeq) {
    changes.push(`shorter: last sequence ${info.state.last_seq} (was ${seal.lastSeq})`);
  }
  // An empty stream reports first sequence 0; its first fact is 1.
  const firstKept = Math.max(seal.firstSeq, 1);
  if (info.state.first_seq > firstKept) {
    changes.push(`facts ${firstKept}-${info.state.first_seq - 1} are gone (first sequence ${info.state.first_seq})`);
  }
  return changes;
}

async function streamInfo(nc: NatsConnection): Promise<StreamInfo | undefined> {
  const jsm = await jetstreamManager(nc);
  try {
    return await jsm.streams.info(EVENTS_STREAM);
  } catch (err) {
    if (/stream not found/i.test(String((err as Error).message))) return undefined;
    throw err;
  }
}

/** Before the log is opened: refuses to start on a stream that differs from the seal in the data dir. */
export async function verifySeal(nc: NatsConnection, dataDir: string): Promise<void> {
  const seal = readSeal(dataDir);
  if (!seal) return;
  const changes = changesSince(seal, await streamInfo(nc));
  if (changes.length === 0) return;
  throw new LogTamperedError(
    `the audit log stream ${seal.stream} is not the one this data dir sealed at ${seal.sealedAt}: ` +
      `${changes.join('; ')}. skein will not begin or continue a log that lost facts. Restore the JetStream ` +
      `store (${join(dataDir, 'jetstream')}) from a backup and start again; or, to start over knowingly, ` +
      `export what is left (skein replay --export) and move ${sealPath(dataDir)} away.`,
  );
}

export type SealKeeper = { note(seq: number): void; stop(): Promise<void> };

/**
 * After the log is open: writes the seal now and on new facts (at most every `intervalMs`), and watches the
 * stream's advisories. `onLost(change)` is called once when the stream is deleted or altered.
 */
export async function keepSeal(
  nc: NatsConnection,
  dataDir: string,
  onLost: (change: string) => void,
  intervalMs = 250,
): Promise<SealKeeper> {
  const info = await streamInfo(nc);
  if (!info) throw new LogTamperedError(`stream ${EVENTS_STREAM} vanished while the host was starting`);
  const seal: Seal = {
    stream: EVENTS_STREAM,
    config: sealedConfig(info),
    firstSeq: info.state.first_seq,
    lastSeq: info.state.last_seq,
    sealedAt: new Date().toISOString(),
  };
  let lost = false;
  const write = () => {
    const path = sealPath(dataDir);
    seal.sealedAt = new Date().toISOString();
    writeFileSync(`${path}.tmp`, `${JSON.stringify(seal, null, 2)}\n`, { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
  };
  write();
  let dirty = false;
  let writing: Promise<void> | undefined;
  // Off the event loop: a write and rename over the old seal costs 1-4 ms of blocking I/O on ext4 (a rename
  // over a file flushes the new one), four times a second while facts flow. A failed write is tried again.
  const writeLater = () => {
    const path = sealPath(dataDir);
    seal.sealedAt = new Date().toISOString();
    const text = `${JSON.stringify(seal, null, 2)}\n`;
    writing = writeFile(`${path}.tmp`, text, { mode: 0o600 })
      .then(() => rename(`${path}.tmp`, path))
      .catch(() => {
        dirty = true;
      })
      .finally(() => {
        writing = undefined;
      });
  };
  const timer = setInterval(() => {
    if (!dirty || lost || writing) return;
    dirty = false;
    writeLater();
  }, intervalMs);
  timer.unref();
  let retry: NodeJS.Timeout | undefined;
  const check = async (): Promise<void> => {
    if (lost) return;
    // What the stream must hold at least is what was noted before the info was asked for: a fact acked while
    // the request was on its way may be missing from the answer without anything lost (a false "shorter" made
    // the host refuse every command when another host's start touched the stream).
    const sealed = { ...seal };
    let now: StreamInfo | undefined;
    try {
      now = await streamInfo(nc);
    } catch {
      // No answer is not "deleted": on a cluster a node loss elects a new stream leader (an advisory) and
      // the stream info times out meanwhile. Look again shortly.
      clearTimeout(retry);
      retry = setTimeout(() => void check(), 1_000);
      retry.unref();
      return;
    }
    const changes = changesSince(sealed, now);
    if (changes.length === 0 || lost) return;
    lost = true;
    onLost(changes.join('; '));
  };
  const advisories = nc.subscribe(`$JS.EVENT.ADVISORY.STREAM.*.${EVENTS_STREAM}`, {
    callback: () => void check(),
  });
  await nc.flush();
  return {
    note(seq) {
      // Once per fact: only the sequence moves here; the time is stamped when the seal is written.
      if (lost || seq <= seal.lastSeq) return;
      seal.lastSeq = seq;
      dirty = true;
    },
    async stop() {
      clearInterval(timer);
      clearTimeout(retry);
      advisories.unsubscribe();
      await writing;
      if (dirty && !lost) write();
    },
  };
}
