/**
 * @module
 * `skein replay`: rebuild state from the log (the runtime's JetStream or
 * JSONL log, or an export file) and print a timeline, the digest, or an
 * export. Works while the runtime runs and after it died: a private-broker
 * store is opened with a temporary nats-server.
 */
import { pino } from 'pino';
import { authDir, startAuthBroker } from '../transport/auth/broker.ts';
import { clientAuth, type ClientAuth } from '../transport/auth/client-auth.ts';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { encodeLogLine } from '../transport/codec.ts';
import { AGGREGATES } from '../kernel/domains.ts';
import type { EventLog } from '../transport/event-log.ts';
import { JetStreamLog } from '../transport/jetstream-log.ts';
import { checkJsonlSeal } from '../transport/jsonl-seal.ts';
import { NatsBus } from '../transport/nats-bus.ts';
import { isAlive, startNatsServer, stopStaleNatsServer } from '../transport/nats-server.ts';
import { replay } from '../kernel/replay.ts';
import { screenAt, ScreenReplayError } from '../terminal/screen-replay.ts';
import { readRuntimeInfo } from '../kernel/runtime.ts';
import { factLine } from './fact-line.ts';
import { checkExportTarget, openExport, type ExportFile } from './replay-export.ts';
import { checkIsLog, fileSource, type Source } from './replay-file.ts';
import { action, EXIT, UsageError } from './output.ts';
import { clientTarget } from './target.ts';

type ReplayOptions = {
  until?: string;
  digest?: boolean;
  export?: string;
  fromFile?: string;
  json?: boolean;
  screen?: string;
  at?: string;
  nats?: string;
  data?: string;
};

export async function replayCommand(opts: ReplayOptions): Promise<void> {
  await action(async () => {
    const untilSeq = opts.until === undefined ? undefined : Number(opts.until);
    if (untilSeq !== undefined && (!Number.isInteger(untilSeq) || untilSeq < 0)) {
      throw new UsageError(`--until '${opts.until}' is not a sequence number`);
    }
    if (opts.export) {
      const dataDir = opts.fromFile ? opts.data : clientTarget(opts).dataDir;
      checkExportTarget(opts.export, {
        ...(opts.fromFile ? { fromFile: opts.fromFile } : {}),
        ...(dataDir ? { dataDir } : {}),
      });
    }
    const exportFile = opts.export && !opts.screen ? await openExport(opts.export) : undefined;
    let source: Source;
    try {
      source = await openSource(opts, untilSeq);
    } catch (err) {
      exportFile?.abort();
      throw err;
    }
    if (opts.screen) {
      try {
        return await printScreen(source, opts.screen, opts);
      } finally {
        await source.close();
      }
    }
    try {
      const total = untilSeq ?? (await source.total());
      const progress = process.stderr.isTTY && total > 10_000;
      const quiet = opts.digest || opts.export;
      let lastAt = '';
      let nextSeq = 1;
      const result = await replay(source.facts, AGGREGATES, {
        ...(untilSeq === undefined ? {} : { untilSeq }),
        onFact: (fact) => {
          lastAt = fact.at;
          if (fact.seq > nextSeq) warnGap(source.name, nextSeq, fact.seq);
          nextSeq = fact.seq + 1;
          if (exportFile) exportFile.write(`${encodeLogLine(fact)}\n`);
          else if (!quiet) process.stdout.write(opts.json ? `${JSON.stringify(fact)}\n` : `${factLine(fact)}\n`);
          if (progress && fact.seq % 2000 === 0)
            process.stderr.write(`\rreplaying ${bar(fact.seq, total)} ${fact.seq}/${total}`);
        },
      });
      if (progress) process.stderr.write('\n');
      let outputChunks = 0;
      if (exportFile) {
        outputChunks = await exportOutput(source, exportFile, untilSeq === undefined ? undefined : lastAt);
        await exportFile.finish();
      }
      if (opts.digest) process.stdout.write(`${result.digest}\n`);
      else if (opts.export)
        process.stdout.write(
          `exported ${result.facts} facts (last seq ${result.lastSeq}) and ${outputChunks} output chunks ` +
            `to ${opts.export}\n`,
        );
      else
        process.stdout.write(
          `-- ${result.facts} facts, last seq ${result.lastSeq}, ` +
            `${result.fold.size} aggregates, digest ${result.digest}\n`,
        );
      return EXIT.ok;
    } catch (err) {
      exportFile?.abort();
      throw err;
    } finally {
      await source.close();
    }
  });
}

/**
 * Appends the output stream (terminal output) after the facts, so `--screen` works on the export. With
 * `--until` (an event sequence; output is numbered apart) only output up to that fact's time goes in.
 * Returns the number of chunks written.
 */
async function exportOutput(source: Source, out: ExportFile, untilAt: string | undefined) {
  let chunks = 0;
  for await (const fact of source.read({ stream: 'output', onInvalid })) {
    if (untilAt !== undefined && fact.at > untilAt) break;
    await out.write(`${encodeLogLine(fact)}\n`);
    chunks++;
  }
  return chunks;
}

async function openSource(opts: ReplayOptions, untilSeq: number | undefined): Promise<Source> {
  const range = untilSeq === undefined ? {} : { untilSeq };
  if (opts.fromFile) {
    if (!existsSync(opts.fromFile)) throw new UsageError(`--from-file '${opts.fromFile}' does not exist`);
    await checkIsLog(opts.fromFile);
    warnIfUnsealed(opts.fromFile, join(dirname(resolve(opts.fromFile)), 'auth'));
    return fileSource(opts.fromFile, range);
  }
  const target = clientTarget(opts);
  const auth = clientAuth(target.dataDir);
  if (target.natsUrl) return natsSource(target.natsUrl, range, async () => undefined, auth);
  const info = readRuntimeInfo(target.dataDir);
  const eventsFile = join(target.dataDir, 'events.jsonl');
  if (info?.mode === 'embedded' || (!info && existsSync(eventsFile))) {
    warnIfUnsealed(eventsFile, authDir(target.dataDir));
    return fileSource(eventsFile, range, target.dataDir);
  }
  if (info?.natsUrl && isAlive(info.pid)) return natsSource(info.natsUrl, range, async () => undefined, auth);
  const store = join(target.dataDir, 'jetstream');
  if (!existsSync(store))
    throw new UsageError(`no event log in ${target.dataDir}: run \`skein up\` first, or pass --from-file / --nats`);
  // The runtime is gone: open its store with a temporary private server.
  if (info?.natsServerPid) await stopStaleNatsServer(info.natsServerPid, store);
  if (existsSync(join(authDir(target.dataDir), 'keys.json'))) {
    // A private broker with identities keeps the store under the account: open it the same way.
    const logger = pino({ level: 'warn' });
    const broker = await startAuthBroker({ dataDir: target.dataDir, bin: target.config.natsServerBin, logger });
    return natsSource(broker.url, range, () => broker.stop(), { creds: broker.hostCreds });
  }
  const server = await startNatsServer({ storeDir: store, bin: target.config.natsServerBin });
  return natsSource(server.url, range, () => server.stop());
}

/** An embedded log beside its seal: facts the host did not write, or a log cut short, are reported first. */
function warnIfUnsealed(eventsFile: string, sealDir: string): void {
  let changes: string[] | undefined;
  try {
    changes = checkJsonlSeal(eventsFile, sealDir);
  } catch (err) {
    changes = [(err as Error).message];
  }
  if (changes && changes.length > 0) {
    process.stderr.write(
      `warning: ${eventsFile} does not match its seal in ${sealDir}: ${changes.join('; ')}. ` +
        'Facts from there on may not have been written by the host.\n',
    );
  }
}

/** Facts missing from the middle of a log (a line deleted from an export): the state replayed lacks them. */
function warnGap(name: string, expected: number, seq: number): void {
  const one = seq - 1 === expected;
  const missing = one ? `fact ${expected} is` : `facts ${expected}-${seq - 1} are`;
  process.stderr.write(
    `skein replay: warning: ${missing} missing from ${name} (the sequence jumps from ${expected - 1} to ${seq}); ` +
      `the state is replayed without ${one ? 'it' : 'them'}\n`,
  );
}

const onInvalid = (seq: number, subject: string, err: Error) =>
  process.stderr.write(`skein replay: skipped message ${seq} on ${subject}: ${err.message}\n`);

async function printScreen(source: Source, terminalId: string, opts: ReplayOptions): Promise<number> {
  const at = opts.at === undefined ? undefined : Number(opts.at);
  if (at !== undefined && (!Number.isInteger(at) || at < 0))
    throw new UsageError(`--at '${opts.at}' is not an output sequence number`);
  let screen: Awaited<ReturnType<typeof screenAt>>;
  try {
    screen = await screenAt(source.read, terminalId, at);
  } catch (err) {
    if (err instanceof ScreenReplayError) throw new UsageError(err.message);
    throw err;
  }
  // Every terminal prints at least its prompt: no chunk at all means the output is not in this source.
  if (screen.chunks === 0 && at === undefined) throw new UsageError(source.noOutput(terminalId));
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(screen, null, 2)}\n`);
  } else {
    const rule = '-'.repeat(screen.cols);
    process.stdout.write(
      `${terminalId} at output seq ${screen.atSeq} (${screen.chunks} chunks), ${screen.cols}x${screen.rows}, ` +
        `${screen.buffer} buffer, cursor ` +
        `${screen.cursor.x},${screen.cursor.y}\n${rule}\n${screen.lines.join('\n')}\n${rule}\n`,
    );
  }
  return EXIT.ok;
}

async function natsSource(
  url: string,
  range: { untilSeq?: number },
  stopServer: () => Promise<void>,
  auth?: ClientAuth,
): Promise<Source> {
  const bus = await NatsBus.connect(url, 'skein-replay', auth);
  const log: EventLog = await JetStreamLog.open(bus.nc);
  return {
    name: 'the SKEIN_EVENTS stream',
    read: (options) => log.read({ ...options, onInvalid }),
    facts: (visit) => log.scan({ ...range, onInvalid }, visit),
    total: () => log.lastSeq(),
    close: async () => {
      await bus.close();
      await stopServer();
    },
    noOutput: (id) => `no output of terminal '${id}' is left in the SKEIN_OUTPUT stream (it is size-limited)`,
  };
}

function bar(done: number, total: number): string {
  const width = 30;
  const filled = Math.round((done / Math.max(1, total)) * width);
  return `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}]`;
}
