/**
 * One suite, two event logs: JetStream (real nats-server) and the embedded
 * JSONL file. Append, dedupe by msg-id, one writer per subject, ordered and
 * bounded reads, output stream, and durability across a reopen.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordedBytesOf, type Fact, type StoredFact } from '../../../schemas/index.ts';
import { AppendConflictError, type EventLog } from '../../../infra/transport/event-log.ts';
import { JetStreamLog } from '../../../infra/transport/jetstream-log.ts';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import { EmbeddedBus } from '../../../infra/transport/embedded-bus.ts';
import { NatsBus } from '../../../infra/transport/nats-bus.ts';
import { startTestNats, type TestNats } from '../../support/nats-server.ts';
import { tempDir } from '../../support/temp-dir.ts';

type Harness = { open(): Promise<EventLog>; dispose(): Promise<void> };

function jetstreamHarness(): Harness {
  let nats: TestNats;
  const buses: NatsBus[] = [];
  return {
    async open() {
      nats ??= await startTestNats();
      const bus = await NatsBus.connect(nats.url);
      buses.push(bus);
      return JetStreamLog.open(bus.nc);
    },
    async dispose() {
      for (const bus of buses) await bus.close();
      await nats?.dispose();
    },
  };
}

function jsonlHarness(): Harness {
  const dir = tempDir('skein-jsonl-');
  const logs: JsonlLog[] = [];
  return {
    async open() {
      const log = await JsonlLog.open({ dir: dir.path, bus: new EmbeddedBus() });
      logs.push(log);
      return log;
    },
    async dispose() {
      for (const log of logs) await log.close();
      dir.dispose();
    },
  };
}

let n = 0;
function fact(type = 'agent.spawned', agentId = 'main'): Fact {
  n++;
  return {
    id: `f-${process.pid}-${n}-${Math.random().toString(36).slice(2)}`,
    type,
    at: new Date().toISOString(),
    agentId: agentId as Fact['agentId'],
    data: {
      agentId: `a${n}`,
      parentId: 'main',
      label: `l${n}`,
      workspace: '/w',
      depth: 1,
      task: null,
      hasPolicy: false,
      worker: null,
    },
  };
}

async function collect(iterable: AsyncIterable<StoredFact>): Promise<StoredFact[]> {
  const out: StoredFact[] = [];
  for await (const f of iterable) out.push(f);
  return out;
}

describe.each([
  ['jetstream', jetstreamHarness],
  ['jsonl', jsonlHarness],
] as const)('event log (%s)', (_name, makeHarness) => {
  let harness: Harness;
  let log: EventLog;
  beforeAll(async () => {
    harness = makeHarness();
    log = await harness.open();
  });
  afterAll(async () => harness.dispose());

  it('starts empty and appends in order', async () => {
    expect(await log.lastSeq()).toBe(0);
    const a = fact();
    const b = fact();
    const ra = await log.append({
      stream: 'events',
      subject: 'skein.evt.main.agent.x1',
      fact: a,
      expectedLastSubjectSeq: 0,
    });
    const rb = await log.append({
      stream: 'events',
      subject: 'skein.evt.main.agent.x2',
      fact: b,
      expectedLastSubjectSeq: 0,
    });
    expect([ra, rb]).toMatchObject([
      { seq: 1, duplicate: false },
      { seq: 2, duplicate: false },
    ]);
    const read = await collect(log.read());
    expect(read).toEqual([
      { ...a, seq: 1, subject: 'skein.evt.main.agent.x1' },
      { ...b, seq: 2, subject: 'skein.evt.main.agent.x2' },
    ]);
    // The bytes each fact takes in the log (limits.maxRecordedBytesPerAgent): the append's and a read's agree,
    // and hold at least the fact's JSON.
    expect(read.map((f) => recordedBytesOf(f))).toEqual([ra.bytes, rb.bytes]);
    expect(ra.bytes).toBeGreaterThanOrEqual(JSON.stringify(a).length);
    const scanned: Array<number | undefined> = [];
    await log.scan({}, (f) => scanned.push(recordedBytesOf(f)));
    expect(scanned).toEqual([ra.bytes, rb.bytes]);
  });

  it('stores a retried msg-id once', async () => {
    const f = fact();
    const first = await log.append({ stream: 'events', subject: 'skein.evt.main.agent.x3', fact: f });
    const again = await log.append({ stream: 'events', subject: 'skein.evt.main.agent.x3', fact: f });
    expect(again).toMatchObject({ seq: first.seq, duplicate: true });
    expect(await log.lastSeq()).toBe(first.seq);
  });

  it('refuses a second writer on the same subject (expected last sequence)', async () => {
    const subject = 'skein.evt.main.agent.x4';
    const first = await log.append({ stream: 'events', subject, fact: fact(), expectedLastSubjectSeq: 0 });
    await expect(
      log.append({ stream: 'events', subject, fact: fact(), expectedLastSubjectSeq: 0 }),
    ).rejects.toBeInstanceOf(AppendConflictError);
    const second = await log.append({ stream: 'events', subject, fact: fact(), expectedLastSubjectSeq: first.seq });
    expect(second.seq).toBeGreaterThan(first.seq);
  });

  it('stores a fact sent before the ack of the one it expects last, and refuses it after any other', async () => {
    const subject = 'skein.evt.main.agent.x5';
    const seq = await log.lastSeq();
    const [a, b] = [fact(), fact()];
    // Sent together, the second before the first is acked: stored right after it.
    const [ra, rb] = await Promise.all([
      log.append({ stream: 'events', subject, fact: a, expectedLastSubjectSeq: 0 }),
      log.append({ stream: 'events', subject, fact: b, expectedLastMsgId: a.id }),
    ]);
    expect([ra.seq, rb.seq]).toEqual([seq + 1, seq + 2]);
    // Another fact (another subject, another writer) stored after the expected one: refused, nothing stored.
    const [c, other, d] = [fact(), fact(), fact()];
    const sent = [
      log.append({ stream: 'events', subject, fact: c, expectedLastSubjectSeq: rb.seq }),
      log.append({ stream: 'events', subject: 'skein.evt.main.agent.x6', fact: other }),
      log.append({ stream: 'events', subject, fact: d, expectedLastMsgId: c.id }),
    ];
    const [rc, , rd] = await Promise.allSettled(sent);
    expect(rc?.status).toBe('fulfilled');
    expect(rd?.status).toBe('rejected');
    expect((rd as PromiseRejectedResult).reason).toBeInstanceOf(AppendConflictError);
    expect(String((rd as PromiseRejectedResult).reason.message)).toContain(`expected last fact '${c.id}'`);
    // The expected fact refused (wrong subject sequence): the one sent after it is refused too.
    const [e, f] = [fact(), fact()];
    const refused = await Promise.allSettled([
      log.append({ stream: 'events', subject, fact: e, expectedLastSubjectSeq: rb.seq }),
      log.append({ stream: 'events', subject, fact: f, expectedLastMsgId: e.id }),
    ]);
    expect(refused.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    // A stored fact sent again with a stale expectation is its duplicate (dedupe comes first).
    expect(await log.append({ stream: 'events', subject, fact: b, expectedLastMsgId: 'not-last' })).toMatchObject({
      seq: rb.seq,
      duplicate: true,
    });
    const ids = (await collect(log.read({ fromSeq: seq + 1 }))).map((x) => x.id);
    expect(ids).toEqual([a.id, b.id, c.id, other.id]);
  });

  it('keeps the order of many appends in flight', async () => {
    const facts = Array.from({ length: 200 }, () => fact());
    const before = await log.lastSeq();
    const results = await Promise.all(
      facts.map((f, i) => log.append({ stream: 'events', subject: `skein.evt.main.agent.p${i}`, fact: f })),
    );
    expect(new Set(results.map((r) => r.seq)).size).toBe(200);
    const read = await collect(log.read({ fromSeq: before + 1 }));
    expect(read.map((f) => f.id).sort()).toEqual(facts.map((f) => f.id).sort());
    expect(read.map((f) => f.seq)).toEqual([...read.map((f) => f.seq)].sort((x, y) => x - y));
  });

  it('reads a bounded range and filters by subject', async () => {
    const range = await collect(log.read({ fromSeq: 2, untilSeq: 3 }));
    expect(range.map((f) => f.seq)).toEqual([2, 3]);
    const only = await collect(log.read({ subject: 'skein.evt.main.agent.x4' }));
    expect(only.map((f) => f.subject)).toEqual(['skein.evt.main.agent.x4', 'skein.evt.main.agent.x4']);
    expect(await collect(log.read({ subject: 'skein.evt.nobody.>' }))).toEqual([]);
  });

  it('scans exactly what it reads: the whole log, a bounded range, a subject, and a visitor that throws', async () => {
    const scanned = async (options: Parameters<EventLog['scan']>[0]) => {
      const out: StoredFact[] = [];
      await log.scan(options, (f) => out.push(f));
      return out;
    };
    for (let i = 0; i < 5; i++) {
      await log.append({ stream: 'events', subject: `skein.evt.main.agent.scan${i % 2}`, fact: fact() });
    }
    const last = await log.lastSeq();
    const ranges = [
      {},
      { fromSeq: last - 3, untilSeq: last - 2 },
      { fromSeq: last },
      { subject: 'skein.evt.main.agent.scan1' },
    ];
    for (const options of ranges) {
      expect(await scanned(options)).toEqual(await collect(log.read(options)));
    }
    expect((await scanned({})).map((f) => f.seq)).toEqual(Array.from({ length: last }, (_, i) => i + 1));
    expect((await scanned(ranges[1]!)).map((f) => f.seq)).toEqual([last - 3, last - 2]);
    expect((await scanned(ranges[3]!)).length).toBeGreaterThanOrEqual(2);
    expect(await scanned({ subject: 'skein.evt.nobody.>' })).toEqual([]);
    let visits = 0;
    await expect(
      log.scan({}, () => {
        visits++;
        throw new Error('visitor failed');
      }),
    ).rejects.toThrow('visitor failed');
    expect(visits).toBe(1);
  });

  it('keeps terminal output in its own stream', async () => {
    const before = await log.lastSeq('events');
    const out = {
      ...fact('terminal.output.received'),
      data: {
        terminalId: 't1',
        offset: 0,
        bytes: 5,
        data: 'hello',
        plainText: 'hello',
        sequences: [],
        sequenceCount: 0,
        isInteractive: false,
      },
    };
    const r = await log.append({ stream: 'output', subject: 'skein.out.main.t1', fact: out });
    expect(r.seq).toBe(1);
    expect(await log.lastSeq('events')).toBe(before);
    const read = await collect(log.read({ stream: 'output' }));
    expect(read.map((f) => f.id)).toEqual([out.id]);
  });

  it('keeps every acknowledged fact across a reopen, with dedupe and subject sequences intact', async () => {
    const before = await collect(log.read());
    const reopened = await harness.open();
    expect(await collect(reopened.read())).toEqual(before);
    const last = before.at(-1)!;
    expect(
      await reopened.append({
        stream: 'events',
        subject: last.subject,
        fact: { ...last, seq: undefined } as unknown as Fact,
      }),
    ).toMatchObject({
      seq: last.seq,
      duplicate: true,
    });
  });
});

describe('jsonl log: crash safety', () => {
  it('cuts a torn last line on open and goes on appending', async () => {
    const dir = tempDir('skein-torn-');
    try {
      const log = await JsonlLog.open({ dir: dir.path });
      const f = fact();
      await log.append({ stream: 'events', subject: 'skein.evt.main.agent.t', fact: f });
      await log.close();
      appendFileSync(join(dir.path, 'events.jsonl'), '{"seq":2,"subject":"skein.evt.main.agent.t","fact":{"id":"to');
      const reopened = await JsonlLog.open({ dir: dir.path });
      expect((await collect(reopened.read())).map((x) => x.id)).toEqual([f.id]);
      const r = await reopened.append({
        stream: 'events',
        subject: 'skein.evt.main.agent.t',
        fact: fact(),
        expectedLastSubjectSeq: 1,
      });
      expect(r).toMatchObject({ seq: 2, duplicate: false });
      await reopened.close();
      const lines = readFileSync(join(dir.path, 'events.jsonl'), 'utf8').trim().split('\n');
      expect(lines.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 2]);
    } finally {
      dir.dispose();
    }
  });

  it('publishes each fact on the embedded bus only after it is written', async () => {
    const dir = tempDir('skein-pub-');
    const bus = new EmbeddedBus();
    const seen: string[] = [];
    bus.subscribe('skein.evt.>', (msg) => {
      const lines = readFileSync(join(dir.path, 'events.jsonl'), 'utf8');
      seen.push(lines.includes(msg.subject) ? 'written' : 'early');
    });
    const log = await JsonlLog.open({ dir: dir.path, bus });
    await log.append({ stream: 'events', subject: 'skein.evt.main.agent.pub', fact: fact() });
    await bus.flush();
    await log.close();
    dir.dispose();
    expect(seen).toEqual(['written']);
  });
});
