/**
 * @module
 * The fact writer after an append in doubt, over the real JSONL log (temp dir) behind a wrapper that loses
 * answers or fails reads as a stalled broker does: the re-read before the next append (from where, what it
 * folds, what it logs, what a failed re-read answers), the background re-read and its backoff (fake
 * `setTimeout` only; the log's I/O is real), and the broker-down answers (`unavailable`: no retry, no health
 * fact). Output facts never put a subject in doubt.
 */
import { describe, expect, it, vi } from 'vitest';
import { ErrorCode, RuntimeError, type AgentId } from '../../../schemas/index.ts';
import { Fold } from '../../../machines/kernel/projection.ts';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { AppendFailedError, FactWriter } from '../../../infra/kernel/fact-writer.ts';
import { digestOf } from '../../../infra/kernel/digest.ts';
import { replayLog } from '../../../infra/kernel/replay.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { spawnedFact } from '../../support/agent-facts.ts';
import { brokerLogs, storedFacts } from '../../support/broker-log.ts';

const nextLog = brokerLogs('skein-fact-writer-resync-');

async function setup(options: { retries?: number; assertAvailable?: () => void } = {}) {
  const b = await nextLog();
  const fold = new Fold(AGGREGATES);
  const { logger, lines } = memoryLogger('warn');
  const w = new FactWriter({
    log: b.log,
    fold,
    logger,
    hostId: 'h1',
    retries: options.retries ?? 0,
    retryDelayMs: 1,
    assertAvailable: options.assertAvailable,
  });
  const replayed = async () => (await replayLog(b.real, AGGREGATES)).digest;
  return { b, w, fold, lines, replayed };
}

const main = { agentId: 'main' as AgentId };
const subject = (id: string) => `skein.evt.main.agent.${id}`;
const cancel = (agentId: string, reason = 'stop') => ({
  type: 'agent.cancelled',
  data: { agentId, reason, by: 'main' },
});
const timeout = () => new Error('TimeoutError: timeout');
const storedLine = 'facts whose append had timed out were stored after all; folded them before appending more';
const down = () => new RuntimeError(ErrorCode.Unavailable, 'broker down', { retryable: true });

describe('the re-read before the next append', () => {
  it('reads from the next sequence, folds the fact stored in doubt, logs it, and appends after it', async () => {
    const { b, w, fold, lines, replayed } = await setup();
    await w.write(spawnedFact('a1'), main);
    b.fault = (r) => (r.fact.type === 'agent.cancelled' ? { storeThenThrow: timeout() } : undefined);
    await expect(w.write(cancel('a1'), main)).rejects.toBeInstanceOf(AppendFailedError);
    expect(b.reads).toEqual([]);
    b.fault = () => undefined;
    const next = await w.write(cancel('a1', 'again'), main);
    expect(b.reads).toEqual([{ subject: subject('a1'), fromSeq: 2, onInvalid: expect.any(Function) }]);
    expect(b.requests.at(-1)?.expectedLastSubjectSeq).toBe(2);
    expect(next.seq).toBe(4);
    expect(lines.filter((l) => l['msg'] === storedLine)).toEqual([
      expect.objectContaining({ subject: subject('a1'), found: 1, lastSeq: 2 }),
    ]);
    expect({ facts: w.facts, lastSeq: w.lastSeq }).toEqual({ facts: 4, lastSeq: 4 });
    // No longer in doubt: the next append reads nothing first.
    await w.write(cancel('a1', 'third'), main);
    expect(b.reads).toHaveLength(1);
    expect(digestOf(fold)).toBe(await replayed());
  });

  it('finds nothing when the failed append was never stored: no log line, the same expected sequence', async () => {
    const { b, w, lines } = await setup();
    await w.write(spawnedFact('a2'), main);
    b.fault = (r) => (r.fact.type === 'agent.cancelled' ? { throws: timeout() } : undefined);
    await expect(w.write(cancel('a2'), main)).rejects.toBeInstanceOf(AppendFailedError);
    b.fault = () => undefined;
    await w.write(cancel('a2', 'again'), main);
    expect(b.reads).toEqual([{ subject: subject('a2'), fromSeq: 2, onInvalid: expect.any(Function) }]);
    expect(b.requests.at(-1)?.expectedLastSubjectSeq).toBe(1);
    expect(lines.filter((l) => l['msg'] === storedLine)).toEqual([]);
  });

  it('when the log cannot be read: unavailable, retryable, naming subject and cause; nothing appended', async () => {
    const { b, w } = await setup();
    await w.write(spawnedFact('a3'), main);
    b.fault = (r) => (r.fact.type === 'agent.cancelled' ? { throws: timeout() } : undefined);
    await expect(w.write(cancel('a3'), main)).rejects.toBeInstanceOf(AppendFailedError);
    b.fault = () => undefined;
    const appends = b.requests.length;
    for (const [error, named] of [
      [new Error('connection closed'), 'connection closed'],
      [null, 'null'],
    ] as const) {
      b.readFault = () => ({ error });
      const err = await w.write(cancel('a3', 'again'), main).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: ErrorCode.Unavailable, retryable: true, cause: error });
      expect((err as Error).message).toBe(
        `could not re-read '${subject('a3')}' from the event log after an append in doubt (${named}); ` +
          'nothing was appended — retry shortly',
      );
    }
    expect(b.requests.length).toBe(appends);
    b.readFault = () => undefined;
    await w.write(cancel('a3', 'at last'), main);
    expect(b.reads).toHaveLength(3);
    expect(b.requests.at(-1)?.expectedLastSubjectSeq).toBe(1);
  });
});

describe('the background re-read', () => {
  it('backs off 500 ms, doubling to 5 s while the log cannot be read, then folds and leaves no timer', async () => {
    const { b, w, fold, replayed } = await setup();
    await w.write(spawnedFact('g1'), main);
    b.fault = (r) => (r.fact.type === 'agent.cancelled' ? { storeThenThrow: timeout() } : undefined);
    b.readFault = () => ({ error: new Error('broker away') });
    await expect(w.write(cancel('g1'), main)).rejects.toBeInstanceOf(AppendFailedError);
    const readsAt: number[] = [];
    let t = 0;
    for (const step of [499, 1, 999, 1, 1_999, 1, 3_999, 1, 4_999, 1, 4_999, 1]) {
      await vi.advanceTimersByTimeAsync(step);
      t += step;
      while (readsAt.length < b.reads.length) readsAt.push(t);
    }
    expect(readsAt).toEqual([500, 1_500, 3_500, 7_500, 12_500, 17_500]);
    expect(fold.get(subject('g1'))?.value).toBe('running');
    b.readFault = () => undefined;
    await vi.advanceTimersByTimeAsync(5_000);
    await vi.waitFor(async () => expect(digestOf(fold)).toBe(await replayed()));
    expect(fold.get(subject('g1'))?.value).not.toBe('running');
    await vi.waitFor(() => expect(vi.getTimerCount()).toBe(0));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(b.reads).toHaveLength(7);
  });

  it('one timer for every subject in doubt: one read each a round', async () => {
    const { b, w } = await setup();
    b.readFault = () => ({ error: new Error('broker away') });
    b.fault = (r) => (r.fact.type === 'agent.spawned' ? { throws: timeout() } : undefined);
    await expect(w.write(spawnedFact('g2'), main)).rejects.toBeInstanceOf(AppendFailedError);
    await expect(w.write(spawnedFact('g3'), main)).rejects.toBeInstanceOf(AppendFailedError);
    await vi.advanceTimersByTimeAsync(500);
    expect(b.reads.map((r) => r.subject)).toEqual([subject('g2'), subject('g3')]);
  });

  it('skips a subject an append re-read while the round waited', async () => {
    const { b, w, fold } = await setup();
    b.fault = (r) => (r.fact.type !== 'agent.spawned' ? undefined : { storeThenThrow: timeout() });
    await expect(w.write(spawnedFact('g4'), main)).rejects.toBeInstanceOf(AppendFailedError);
    await expect(w.write(spawnedFact('g5'), main)).rejects.toBeInstanceOf(AppendFailedError);
    b.fault = () => undefined;
    let release = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    b.readFault = (o) => (o.subject === subject('g4') ? { until: gate } : undefined);
    await vi.advanceTimersByTimeAsync(500);
    expect(b.reads.map((r) => r.subject)).toEqual([subject('g4')]);
    b.readFault = () => undefined;
    await w.write(spawnedFact('g5'), main);
    expect(b.reads.map((r) => r.subject)).toEqual([subject('g4'), subject('g5')]);
    release();
    await vi.waitFor(() => expect(fold.get(subject('g4'))?.value).toBe('running'));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(b.reads.map((r) => r.subject)).toEqual([subject('g4'), subject('g5')]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not read while the broker is down, and reads once it is back', async () => {
    let up = true;
    const { b, w, fold } = await setup({
      assertAvailable: () => {
        if (!up) throw down();
      },
    });
    b.fault = () => ({ storeThenThrow: timeout() });
    await expect(w.write(spawnedFact('g6'), main)).rejects.toBeInstanceOf(AppendFailedError);
    up = false;
    await vi.advanceTimersByTimeAsync(500 + 1_000);
    expect(b.reads).toEqual([]);
    up = true;
    await vi.advanceTimersByTimeAsync(2_000);
    await vi.waitFor(() => expect(fold.get(subject('g6'))?.value).toBe('running'));
  });
});

describe('unavailable and output', () => {
  it('broker known down: refused at once with its error, no append, no health fact, the subject in doubt', async () => {
    let up = false;
    const { b, w, lines } = await setup({
      retries: 2,
      assertAvailable: () => {
        if (!up) throw down();
      },
    });
    await expect(w.write(spawnedFact('u1'), main)).rejects.toMatchObject({ code: ErrorCode.Unavailable });
    expect(b.requests).toEqual([]);
    expect(lines.filter((l) => l['msg'] === 'fact not appended')).toEqual([
      expect.objectContaining({ subject: subject('u1'), attempts: 0 }),
    ]);
    up = true;
    await w.write(spawnedFact('u1'), main);
    expect(b.reads).toEqual([{ subject: subject('u1'), fromSeq: 1, onInvalid: expect.any(Function) }]);
  });

  it('an append answered unavailable is not retried and rethrown as is, with no health fact', async () => {
    const { b, w, lines } = await setup({ retries: 2 });
    const err = down();
    b.fault = () => ({ throws: err });
    await expect(w.write(spawnedFact('u2'), main)).rejects.toBe(err);
    expect(b.requests.map((r) => r.fact.type)).toEqual(['agent.spawned']);
    expect(lines.filter((l) => l['msg'] === 'fact not appended')).toHaveLength(1);
  });

  it('another RuntimeError is retried and ends in AppendFailedError', async () => {
    const { b, w } = await setup({ retries: 1 });
    b.fault = (r) =>
      r.fact.type === 'agent.spawned' ? { throws: new RuntimeError(ErrorCode.Internal, 'odd') } : undefined;
    await expect(w.write(spawnedFact('u3'), main)).rejects.toBeInstanceOf(AppendFailedError);
    expect(b.requests.map((r) => r.fact.type)).toEqual(['agent.spawned', 'agent.spawned', 'host.append.failed']);
  });

  it('a failed output append puts nothing in doubt: no re-read, ever', async () => {
    const { b, w } = await setup();
    b.fault = (r) => (r.stream === 'output' ? { throws: timeout() } : undefined);
    const out = {
      type: 'terminal.output.received',
      data: {
        terminalId: 't-1',
        offset: 0,
        bytes: 1,
        data: 'x',
        sequences: [],
        sequenceCount: 0,
        isInteractive: false,
      },
    };
    await expect(w.write(out, main)).rejects.toBeInstanceOf(AppendFailedError);
    expect((await storedFacts(b.real)).map((f) => f.type)).toEqual(['host.append.failed']);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(b.reads).toEqual([]);
  });
});
