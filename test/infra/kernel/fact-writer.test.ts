/**
 * @module
 * The fact writer over the real JSONL event log (files in a temp dir): the
 * stamped envelope, the subject, the fold, retries with the same msg-id, the
 * final failure and its health fact, conflicts, duplicates, the output
 * stream and restore. Faults are injected by a wrapper around the real log
 * that fails chosen appends before passing them on.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode, type AgentId, type StoredFact } from '../../../schemas/index.ts';
import { Fold } from '../../../machines/kernel/projection.ts';
import { agentAggregateDef } from '../../../machines/agent/agent.ts';
import { AppendFailedError, FactWriter } from '../../../infra/kernel/fact-writer.ts';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import { AppendConflictError, type AppendRequest, type EventLog } from '../../../infra/transport/event-log.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { agentWriter } from '../../support/fact-writer.ts';
import { spawnedData as childData, outputFact, spawnedFact } from '../../support/agent-facts.ts';

const dir = tempDir('skein-fact-writer-');
afterAll(() => dir.dispose());
let n = 0;

/** The real log, with a hook that may throw before an append reaches it; records every request. */
async function faultyLog(fail: (request: AppendRequest, attempt: number) => Error | undefined = () => undefined) {
  const real = await JsonlLog.open({ dir: `${dir.path}/${++n}` });
  const requests: AppendRequest[] = [];
  const log: EventLog = {
    kind: real.kind,
    append: async (request) => {
      requests.push(request);
      const error = fail(request, requests.filter((r) => r.fact.id === request.fact.id).length);
      if (error) throw error;
      return real.append(request);
    },
    read: (o) => real.read(o),
    scan: (o, v) => real.scan(o, v),
    lastSeq: (s) => real.lastSeq(s),
    close: () => real.close(),
  };
  return { log, real, requests };
}

async function writer(fail?: Parameters<typeof faultyLog>[0], retries = 2) {
  const { log, real, requests } = await faultyLog(fail);
  const fold = new Fold([agentAggregateDef]);
  const { logger, lines } = memoryLogger('warn');
  const w = new FactWriter({ log, fold, logger, hostId: 'h1', retries, retryDelayMs: 1 });
  return { w, fold, lines, requests, real };
}

const spawnedData = (agentId: string) => childData(agentId, 'main');
const spawned = (agentId: string) => spawnedFact(agentId, 'main');
const main = { agentId: 'main' as AgentId };

async function all(log: EventLog, stream: 'events' | 'output' = 'events'): Promise<StoredFact[]> {
  const out: StoredFact[] = [];
  for await (const f of log.read({ stream })) out.push(f);
  return out;
}

describe('FactWriter.write', () => {
  it('stamps the envelope, appends on the aggregate subject, folds, counts and tells listeners', async () => {
    const { w, fold, real } = await writer();
    const heard: StoredFact[] = [];
    w.onFact((f) => heard.push(f));
    const before = Date.now();
    const stored = await w.write(spawned('a1'), { ...main, causationId: 'c-1', id: 'c-1:0' });
    expect(stored).toEqual({
      id: 'c-1:0',
      type: 'agent.spawned',
      at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      agentId: 'main',
      causationId: 'c-1',
      data: spawnedData('a1'),
      seq: 1,
      subject: 'skein.evt.main.agent.a1',
    });
    expect(Date.parse(stored.at)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(stored.at)).toBeLessThanOrEqual(Date.now() + 1);
    expect(await all(real)).toEqual([stored]);
    expect(heard).toEqual([stored]);
    expect(fold.get('skein.evt.main.agent.a1')?.value).toBe('running');
    expect({ facts: w.facts, lastSeq: w.lastSeq }).toEqual({ facts: 1, lastSeq: 1 });
  });

  it('generates an id when none is given, takes the fact its own agent, and omits an absent causation', async () => {
    const { w } = await writer();
    const a = await w.write({ ...spawned('a2'), agentId: 'other' as AgentId }, main);
    const b = await w.write(spawned('a3'), main);
    expect(a.id).toMatch(/^f-[0-9a-f-]{36}$/);
    expect(b.id).toMatch(/^f-[0-9a-f-]{36}$/);
    expect(a.id).not.toBe(b.id);
    expect(a.agentId).toBe('other');
    expect(a.subject).toBe('skein.evt.other.agent.a2');
    expect('causationId' in a).toBe(false);
    expect({ facts: w.facts, lastSeq: w.lastSeq }).toEqual({ facts: 2, lastSeq: 2 });
  });

  it('refuses an unknown type or invalid data, naming it, and appends nothing', async () => {
    const { w, real } = await writer();
    await expect(w.write({ type: 'agent.teleported', data: {} }, main)).rejects.toMatchObject({
      code: ErrorCode.Internal,
      message: expect.stringMatching(/fact type 'agent\.teleported' is not in the catalogue \(schemas\/catalog\.ts\)/),
    });
    await expect(w.write({ type: 'agent.spawned', data: { agentId: 'x' } }, main)).rejects.toMatchObject({
      code: ErrorCode.Internal,
      message: expect.stringMatching(/^fact 'agent\.spawned' has invalid data: /),
    });
    expect(await all(real)).toEqual([]);
    expect(w.facts).toBe(0);
  });

  it('serializes appends per aggregate, each carrying the last sequence it saw', async () => {
    const { w, requests } = await writer();
    await Promise.all([w.write(spawned('s1'), main), w.write(spawned('s2'), main), w.write(spawned('s1'), main)]);
    await w.write(spawned('s1'), main);
    const bySubject = requests.map((r) => [r.subject.split('.').at(-1), r.expectedLastSubjectSeq]);
    expect(bySubject).toEqual([
      ['s1', 0],
      ['s2', 0],
      ['s1', 1],
      ['s1', 3],
    ]);
  });

  it('a duplicate fact id is stored once, folded once, and does not move the subject sequence back', async () => {
    const { w, real, requests } = await writer();
    const first = await w.write(spawned('d1'), { ...main, id: 'same:0' });
    await w.write(spawned('d1'), main);
    const again = await w.write(spawned('d1'), { ...main, id: 'same:0' });
    expect(again.seq).toBe(first.seq);
    expect((await all(real)).map((f) => f.seq)).toEqual([1, 2]);
    expect(w.facts).toBe(2);
    await w.write(spawned('d1'), main);
    expect(requests.at(-1)?.expectedLastSubjectSeq).toBe(2);
  });
});

describe('FactWriter failures', () => {
  it('retries a failed append with the same msg-id, then stores and folds it once', async () => {
    const { w, fold, lines, requests, real } = await writer((_r, attempt) =>
      attempt <= 2 ? new Error(`disk hiccup ${attempt}`) : undefined,
    );
    const heard: string[] = [];
    w.onFact((f) => heard.push(f.id));
    const stored = await w.write(spawned('r1'), { ...main, id: 'r:0' });
    expect(requests.map((r) => r.fact.id)).toEqual(['r:0', 'r:0', 'r:0']);
    expect(new Set(requests.map((r) => r.fact.at)).size).toBe(1);
    expect(await all(real)).toEqual([stored]);
    expect(heard).toEqual(['r:0']);
    expect(w.facts).toBe(1);
    expect(fold.size).toBe(1);
    expect(lines.map((l) => [l['msg'], l['attempt']])).toEqual([
      ['append failed; retrying with the same msg-id', 1],
      ['append failed; retrying with the same msg-id', 2],
    ]);
  });

  it('an append stored but not acknowledged is retried, found as a duplicate, and folded once', async () => {
    const { log, real, requests } = await faultyLog();
    let lost = false;
    const lossy: EventLog = {
      ...log,
      append: async (request) => {
        const result = await log.append(request);
        if (!lost) {
          lost = true;
          throw new Error('ack lost');
        }
        return result;
      },
    };
    const { w, fold } = agentWriter(lossy);
    const stored = await w.write(spawned('ack1'), { ...main, id: 'ack:0' });
    expect(requests).toHaveLength(2);
    expect(await all(real)).toEqual([stored]);
    expect({ facts: w.facts, lastSeq: w.lastSeq }).toEqual({ facts: 1, lastSeq: 1 });
    expect(fold.get('skein.evt.main.agent.ack1')?.value).toBe('running');
  });

  it('backs off longer after each failed attempt', async () => {
    const { log } = await faultyLog((_r, attempt) => (attempt <= 2 ? new Error('busy') : undefined));
    const { w } = agentWriter(log, { retryDelayMs: 60 });
    const started = performance.now();
    await w.write(spawned('b1'), main);
    // 60 ms after the first failure, 120 ms after the second.
    expect(performance.now() - started).toBeGreaterThanOrEqual(175);
  });

  it('after the last retry: AppendFailedError naming type, subject, attempts; a host.append.failed fact', async () => {
    const { w, real, fold, lines } = await writer((r) =>
      r.fact.type === 'agent.spawned' ? new Error('disk full') : undefined,
    );
    const err = await w.write(spawned('f1'), { ...main, id: 'f:0', causationId: 'c-9' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppendFailedError);
    expect(err).toMatchObject({ code: ErrorCode.AppendFailed, retryable: true });
    expect((err as Error).message).toBe(
      "fact 'agent.spawned' could not be appended to 'skein.evt.main.agent.f1' after 3 attempts (disk full); " +
        'nothing was applied — check the event log (nats-server / data dir) and retry',
    );
    const stored = await all(real);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({
      type: 'host.append.failed',
      agentId: 'main',
      causationId: 'c-9',
      subject: 'skein.evt.main.host.h1',
      data: {
        hostId: 'h1',
        factId: 'f:0',
        factType: 'agent.spawned',
        subject: 'skein.evt.main.agent.f1',
        attempts: 3,
        error: expect.objectContaining({ message: 'disk full' }),
      },
    });
    expect(fold.get('skein.evt.main.agent.f1')).toBeUndefined();
    expect(lines.filter((l) => l['msg'] === 'fact not appended')).toEqual([
      expect.objectContaining({ subject: 'skein.evt.main.agent.f1', event: 'agent.spawned', attempts: 3 }),
    ]);
    expect((err as Error).name).toBe('AppendFailedError');
  });

  it('a conflict is not retried: it is rethrown as is, with a health fact of one attempt', async () => {
    const conflict = new AppendConflictError('skein.evt.main.agent.k1', 0, 'wrong last sequence');
    const { w, real, requests } = await writer((r) => (r.fact.type === 'agent.spawned' ? conflict : undefined));
    await expect(w.write(spawned('k1'), main)).rejects.toBe(conflict);
    expect(requests.filter((r) => r.fact.type === 'agent.spawned')).toHaveLength(1);
    const stored = await all(real);
    expect(stored.map((f) => [f.type, (f.data as { attempts: number }).attempts])).toEqual([['host.append.failed', 1]]);
  });

  it('when the health fact fails too, it logs that and does not loop', async () => {
    const { w, requests, lines } = await writer(() => new Error('log gone'), 0);
    await expect(w.write(spawned('z1'), main)).rejects.toBeInstanceOf(AppendFailedError);
    expect(requests.map((r) => r.fact.type)).toEqual(['agent.spawned', 'host.append.failed']);
    expect(lines.filter((l) => l['msg'] === 'health fact not appended either')).toEqual([
      expect.objectContaining({ err: expect.objectContaining({ message: expect.stringContaining('log gone') }) }),
    ]);
  });

  it('a listener that throws is logged and does not stop the others or the write', async () => {
    const { w, lines } = await writer();
    const heard: string[] = [];
    w.onFact(() => {
      throw new Error('listener bug');
    });
    const off = w.onFact((f) => heard.push(f.type));
    await w.write(spawned('l1'), main);
    off();
    await w.write(spawned('l2'), main);
    expect(heard).toEqual(['agent.spawned']);
    expect(lines.filter((l) => l['msg'] === 'fact listener failed')).toEqual([
      expect.objectContaining({ event: 'agent.spawned', err: expect.objectContaining({ message: 'listener bug' }) }),
      expect.objectContaining({ event: 'agent.spawned', err: expect.objectContaining({ message: 'listener bug' }) }),
    ]);
  });
});

describe('FactWriter output and restore', () => {
  it('output facts go to the output stream without a sequence check or a fold, and reach listeners', async () => {
    const { w, real, requests, fold } = await writer();
    const heard: string[] = [];
    w.onFact((f) => heard.push(f.type));
    const out = await w.write(outputFact(), main);
    expect(out.subject).toBe('skein.out.main.t-1');
    expect(requests[0]).toMatchObject({ stream: 'output', expectedLastSubjectSeq: undefined });
    expect(await all(real, 'output')).toHaveLength(1);
    expect(await all(real, 'events')).toEqual([]);
    expect({ facts: w.facts, lastSeq: w.lastSeq, folded: fold.size }).toEqual({ facts: 0, lastSeq: 0, folded: 0 });
    expect(heard).toEqual(['terminal.output.received']);
  });

  it('restore counts a stored fact of a type this version does not know, without folding it', async () => {
    const { w, fold } = await writer();
    w.restore({
      id: 'new:0',
      type: 'agent.levitated',
      at: '2026-01-01T00:00:00.000Z',
      agentId: 'main' as AgentId,
      data: {},
      seq: 4,
      subject: 'skein.evt.main.agent.n1',
    } as unknown as StoredFact);
    expect({ facts: w.facts, lastSeq: w.lastSeq, folded: fold.size }).toEqual({ facts: 1, lastSeq: 4, folded: 0 });
  });

  it('restore folds a stored fact and the next write on its subject expects its sequence', async () => {
    const { w, fold, requests } = await writer();
    const stored: StoredFact = {
      id: 'old:0',
      type: 'agent.spawned',
      at: '2026-01-01T00:00:00.000Z',
      agentId: 'main' as AgentId,
      data: spawnedData('o1'),
      seq: 7,
      subject: 'skein.evt.main.agent.o1',
    };
    w.restore(stored);
    expect({ facts: w.facts, lastSeq: w.lastSeq }).toEqual({ facts: 1, lastSeq: 7 });
    expect(fold.get('skein.evt.main.agent.o1')?.value).toBe('running');
    await w.write(spawned('o1'), main).catch(() => undefined);
    expect(requests[0]?.expectedLastSubjectSeq).toBe(7);
  });
});

describe('FactWriter.settled (what a read waits for)', () => {
  it('waits for the facts sent, not for one still queued behind its subject, nor for the output stream', async () => {
    // Appends of `agent.completed`, `agent.failed` and of output are held until released; the rest pass.
    const held: Array<() => void> = [];
    const { log, real } = await faultyLog();
    const slow: EventLog = {
      ...log,
      append: async (request) => {
        if (['agent.completed', 'agent.failed'].includes(request.fact.type) || request.stream === 'output') {
          await new Promise<void>((r) => held.push(r));
        }
        return log.append(request);
      },
    };
    const fold = new Fold([agentAggregateDef]);
    const w = new FactWriter({
      log: slow,
      fold,
      logger: memoryLogger('warn').logger,
      hostId: 'h1',
      retries: 0,
      retryDelayMs: 1,
    });
    await w.write(spawned('k1'), main);
    await w.write(spawned('k2'), main);
    const first = w.write({ type: 'agent.completed', data: { agentId: 'k1', result: 1 } }, main);
    const second = w.write({ type: 'agent.completed', data: { agentId: 'k2', result: 2 } }, main);
    void w.write(outputFact(), main);
    await new Promise((r) => setTimeout(r, 20));
    expect(held).toHaveLength(3);
    // Another fact of k1's subject: sent only after the first is acked (the last sent is k2's), so unseen yet.
    const queued = w.write({ type: 'agent.failed', data: { agentId: 'k1', error: 'gave up', exitCode: null } }, main);
    let settled = false;
    const waiting = w.settled(5_000).then(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    held[0]!(); // k1's first completion, then k2's: the queued one goes out and is held in turn
    held[1]!();
    const t = Date.now();
    await waiting;
    expect(Date.now() - t).toBeLessThan(1_000);
    expect((await first).type).toBe('agent.completed');
    expect((await second).type).toBe('agent.completed');
    expect(held).toHaveLength(4);
    for (const release of held.splice(0)) release();
    expect((await queued).type).toBe('agent.failed');
    await real.close();
  });
});
