/**
 * @module
 * The real JSONL event log (files in a temp dir) behind a thin wrapper that misbehaves the way a broker does:
 * an append refused before it reaches the log, an append stored whose answer is lost (a timeout), a read that
 * fails while the broker is away. Records every append request and every read, so a test sees what the writer
 * asked of the log. For the fact writer's tests; nothing of the writer is replaced.
 */
import { afterAll, afterEach, vi } from 'vitest';
import type { AppendRequest, EventLog, ReadOptions } from '../../infra/transport/event-log.ts';
import { JsonlLog } from '../../infra/transport/jsonl-log.ts';
import type { StoredFact } from '../../schemas/index.ts';
import { tempDir } from './temp-dir.ts';

/** What the wrapper does with one append: pass it on, refuse it (`throws`), or store it and lose the answer. */
export type AppendFault = { throws: unknown } | { storeThenThrow: unknown } | undefined;

export type BrokerLog = {
  log: EventLog;
  real: JsonlLog;
  requests: AppendRequest[];
  reads: ReadOptions[];
  /** Decides each append's fate; default: none fails. */
  fault: (request: AppendRequest) => AppendFault;
  /** Decides each read's fate: fail with `error` (the broker is away), or wait for `until` first. */
  readFault: (options: ReadOptions) => { error: unknown } | { until: Promise<void> } | undefined;
};

export async function brokerLog(dir: string): Promise<BrokerLog> {
  const real = await JsonlLog.open({ dir });
  const b: BrokerLog = {
    real,
    requests: [],
    reads: [],
    fault: () => undefined,
    readFault: () => undefined,
    log: {
      kind: real.kind,
      append: async (request) => {
        b.requests.push(request);
        const fault = b.fault(request);
        if (fault && 'throws' in fault) throw fault.throws;
        const result = await real.append(request);
        if (fault && 'storeThenThrow' in fault) throw fault.storeThenThrow;
        return result;
      },
      read: (options = {}) => {
        b.reads.push(options);
        const fault = b.readFault(options);
        return {
          async *[Symbol.asyncIterator]() {
            if (fault && 'error' in fault) throw fault.error;
            if (fault) await fault.until;
            yield* real.read(options);
          },
        };
      },
      scan: (o, v) => real.scan(o, v),
      lastSeq: (s) => real.lastSeq(s),
      close: () => real.close(),
    },
  };
  return b;
}

/** Every fact stored on `stream`, in order. */
export async function storedFacts(log: EventLog, stream: 'events' | 'output' = 'events'): Promise<StoredFact[]> {
  const out: StoredFact[] = [];
  for await (const f of log.read({ stream })) out.push(f);
  return out;
}

/**
 * For a test file: each call opens a new broker log in its own dir under one temp dir, with setTimeout faked
 * (the writer's retry timers; the log's I/O stays real). After each test the real timers come back and the
 * logs opened are closed; after the file the temp dir goes.
 */
export function brokerLogs(prefix: string): () => Promise<BrokerLog> {
  const dir = tempDir(prefix);
  afterAll(() => dir.dispose());
  const open: BrokerLog[] = [];
  afterEach(async () => {
    vi.useRealTimers();
    for (const b of open.splice(0)) await b.real.close();
  });
  let n = 0;
  return async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const b = await brokerLog(`${dir.path}/${++n}`);
    open.push(b);
    return b;
  };
}
