/**
 * @module
 * The real JSONL event log (files in a temp dir) behind a thin wrapper that misbehaves the way a broker does:
 * an append refused before it reaches the log, an append stored whose answer is lost (a timeout), a read that
 * fails while the broker is away. Records every append request and every read, so a test sees what the writer
 * asked of the log. For the fact writer's tests; nothing of the writer is replaced.
 */
import type { AppendRequest, EventLog, ReadOptions } from '../../infra/transport/event-log.ts';
import { JsonlLog } from '../../infra/transport/jsonl-log.ts';
import type { StoredFact } from '../../schemas/index.ts';

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
