/**
 * The embedded log under a full disk and a damaged tail: a short or failed write is never acknowledged,
 * a torn or glued last line is cut and reported on open (never fatal), a full disk is a retryable
 * `unavailable` naming the data dir, and appends work again by themselves once space returns. The disk
 * is a real 1 MiB tmpfs (skipped, with the reason printed, where it cannot be mounted).
 */
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Fact, StoredFact } from '../../../schemas/index.ts';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import { RuntimeError } from '../../../schemas/index.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { mountTmpfs } from '../../support/tmpfs.ts';

let n = 0;
function fact(pad = 0): Fact {
  n++;
  return {
    id: `f-${n}`,
    type: 'agent.spawned',
    at: new Date().toISOString(),
    agentId: 'main' as Fact['agentId'],
    data: {
      agentId: `a${n}`,
      parentId: 'main',
      label: `l${n}${'x'.repeat(pad)}`,
      workspace: '/w',
      depth: 1,
      task: null,
      hasPolicy: false,
      worker: null,
    },
  };
}

async function ids(log: JsonlLog): Promise<string[]> {
  const out: StoredFact[] = [];
  for await (const f of log.read()) out.push(f);
  return out.map((f) => f.id);
}

const line = (seq: number, f: Fact) => JSON.stringify({ seq, subject: `skein.evt.main.agent.${f.id}`, fact: f });

describe('jsonl log: damaged tail on open', () => {
  it('cuts a glued last line (half a fact + a whole one), keeps the whole one, and reports it', async () => {
    const dir = tempDir('skein-glued-');
    try {
      const [a, b, c] = [fact(), fact(), fact()];
      const half = line(2, b).slice(0, 40);
      writeFileSync(join(dir.path, 'events.jsonl'), `${line(1, a)}\n${half}${line(3, c)}\n`);
      const { logger, lines } = memoryLogger('warn');
      const log = await JsonlLog.open({ dir: dir.path, log: logger });
      expect(await ids(log)).toEqual([a.id, c.id]);
      const next = fact();
      expect(await log.append({ stream: 'events', subject: 'skein.evt.main.agent.n', fact: next })).toMatchObject({
        seq: 4,
        duplicate: false,
      });
      await log.close();
      const stored = readFileSync(join(dir.path, 'events.jsonl'), 'utf8').trim().split('\n');
      expect(stored.map((l) => (JSON.parse(l) as { seq: number }).seq)).toEqual([1, 3, 4]);
      expect(lines.map((l) => l.msg)).toContain(
        'damaged tail of the event log cut off (never acknowledged: a crash or a full disk mid-write)',
      );
    } finally {
      dir.dispose();
    }
  });

  it('cuts a last line that is only half a fact even when it ends with a newline', async () => {
    const dir = tempDir('skein-half-');
    try {
      const a = fact();
      writeFileSync(join(dir.path, 'events.jsonl'), `${line(1, a)}\n`);
      appendFileSync(join(dir.path, 'events.jsonl'), `${line(2, fact()).slice(0, 70)}\n`);
      const { logger, lines } = memoryLogger('warn');
      const log = await JsonlLog.open({ dir: dir.path, log: logger });
      expect(await ids(log)).toEqual([a.id]);
      expect(await log.lastSeq()).toBe(1);
      await log.close();
      expect(lines).toHaveLength(1);
    } finally {
      dir.dispose();
    }
  });
});

const disk = mountTmpfs(1024 * 1024);
const skip = typeof disk === 'string' ? disk : undefined;
if (skip) console.warn(`skipping the disk-full log tests: ${skip}`);
afterAll(() => {
  if (typeof disk !== 'string') disk.dispose();
});

describe.skipIf(skip !== undefined)('jsonl log: full disk (1 MiB tmpfs)', () => {
  it('acknowledges nothing it could not write whole, says unavailable, and recovers when space returns', async () => {
    if (typeof disk === 'string') return;
    const dataDir = join(disk.path, 'data');
    const { logger, lines } = memoryLogger('info');
    const log = await JsonlLog.open({ dir: dataDir, log: logger });
    const acked: string[] = [];
    await log.append({ stream: 'events', subject: 'skein.evt.main.agent.first', fact: fact() }).then((r) => {
      expect(r.seq).toBe(1);
    });
    acked.push(`f-${n}`);
    disk.fill(6_000);
    // A batch bigger than what is left: the write is short, then fails; nothing of it may be acked.
    const batch = Array.from({ length: 40 }, () => fact(400));
    const results = await Promise.allSettled(
      batch.map((f) => log.append({ stream: 'events', subject: `skein.evt.main.agent.${f.id}`, fact: f })),
    );
    for (const [i, r] of results.entries()) if (r.status === 'fulfilled') acked.push(batch[i]!.id);
    const refused = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
    expect(refused.length).toBeGreaterThan(0);
    for (const err of refused) {
      expect(err).toBeInstanceOf(RuntimeError);
      expect((err as RuntimeError).code).toBe('unavailable');
      expect((err as RuntimeError).retryable).toBe(true);
      expect((err as Error).message).toContain(dataDir);
    }
    // The file holds exactly what was acknowledged: every line whole, no glue.
    const onDisk = () =>
      readFileSync(join(dataDir, 'events.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { fact: { id: string } }).fact.id);
    expect(onDisk()).toEqual(acked);
    // Still full: a second failure is refused the same way, and logged once only.
    await expect(
      log.append({ stream: 'events', subject: 'skein.evt.main.agent.again', fact: fact(20_000) }),
    ).rejects.toMatchObject({ code: 'unavailable' });
    disk.free();
    const after = fact();
    const r = await log.append({ stream: 'events', subject: 'skein.evt.main.agent.after', fact: after });
    expect(r.duplicate).toBe(false);
    acked.push(after.id);
    await log.close();
    expect(onDisk()).toEqual(acked);
    const reopened = await JsonlLog.open({ dir: dataDir, log: logger });
    expect(await ids(reopened)).toEqual(acked);
    await reopened.close();
    const messages = lines.map((l) => l.msg);
    expect(messages.filter((m) => String(m).startsWith('event log write failed'))).toHaveLength(1);
    expect(messages).toContain('event log writable again');
    expect(messages.filter((m) => String(m).includes('damaged'))).toEqual([]);
  });
});
