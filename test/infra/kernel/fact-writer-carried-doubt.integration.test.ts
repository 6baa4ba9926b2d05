/**
 * The fact writer re-reads an action log in doubt before it appends a fact that carries records into it (an
 * edit's, a shell's), without taking that log's lock (a shell record carries into its own subject, whose lock it
 * holds). Appends on that log may run meanwhile, under its lock. Two races the third review found (probes by
 * its helper): a re-read that ended after an append there was marked in doubt again cleared that doubt, so the
 * late fact was never read and the next append failed as a conflict (A); and a fact sent early there, found by
 * the re-read before its answer, was folded twice (B). Both must leave live state equal to a replay.
 * A real JSONL log; only answers are lost, or late, and one read is slow.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { Fold } from '../../../machines/kernel/projection.ts';
import { AGGREGATES } from '../../../infra/kernel/domains.ts';
import { FactWriter } from '../../../infra/kernel/fact-writer.ts';
import { digestOf } from '../../../infra/kernel/digest.ts';
import { replayLog } from '../../../infra/kernel/replay.ts';
import type { AppendRequest, EventLog, ReadOptions } from '../../../infra/transport/event-log.ts';
import { JsonlLog } from '../../../infra/transport/jsonl-log.ts';
import type { AgentId, StoredFact } from '../../../schemas/index.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { editAppliedCarrying, overLog } from '../../support/fact-writer.ts';

const C = 'skein.evt.main.action-log.main';
/** An action-log fact on C (`main`'s log), one per n. */
const main = { agentId: 'main' as AgentId };
const files = (n: number) => ({
  type: 'action-log.files.updated',
  data: { agentId: 'main', by: 'main', cause: 'reject', files: [{ path: `/w/f${n}.txt`, entry: null }] },
});
let edits = 0;
/** An edit.applied (on its own subject) carrying one record into C. */
const applied = () =>
  editAppliedCarrying(`e-c${++edits}`, [
    { type: 'action-log.files.updated', data: { agentId: 'main', by: 'main', cause: 'change', files: [] } },
  ]);

type Hooks = {
  append?: (r: AppendRequest) => { before?: number; after?: number; throwAfter?: boolean } | undefined;
  read?: (o: ReadOptions) => Promise<void> | undefined;
};
function wrap(real: JsonlLog, h: Hooks): EventLog {
  return overLog(real, {
    async append(r) {
      const f = h.append?.(r);
      const result = await real.append(r);
      if (f?.after) await sleep(f.after);
      if (f?.throwAfter) throw new Error('TimeoutError: timeout');
      return result;
    },
    read(o = {}) {
      const gate = h.read?.(o);
      if (!gate) return real.read(o);
      // The read's end is fixed when it starts (as JsonlLog/JetStream do), then it is slow to deliver.
      const it = real.read(o)[Symbol.asyncIterator]();
      const first = it.next();
      return {
        async *[Symbol.asyncIterator]() {
          await gate;
          let n = await first;
          while (!n.done) {
            yield n.value;
            n = await it.next();
          }
        },
      };
    },
  });
}

const dirs: Array<{ dispose(): void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.dispose();
});

async function setup(h: Hooks) {
  const dir = tempDir('skein-late3-');
  dirs.push(dir);
  const real = await JsonlLog.open({ dir: dir.path });
  const { logger, lines } = memoryLogger('warn');
  const fold = new Fold(AGGREGATES);
  const w = new FactWriter({ log: wrap(real, h), fold, logger, hostId: 'h', retries: 0, retryDelayMs: 1 });
  const heard = new Map<string, number>();
  w.onFact((f) => heard.set(f.id, (heard.get(f.id) ?? 0) + 1));
  const settle = (p: Promise<StoredFact>) =>
    p.then(
      (s) => `ok seq ${s.seq}`,
      (e: Error) => `${e.name}: ${e.message.slice(0, 90)}`,
    );
  const logged = async () => {
    const out: string[] = [];
    for await (const f of real.read())
      out.push(`${f.seq}:${f.type}:${f.id}:${f.subject === C ? 'C' : f.subject.split('.').slice(3).join('.')}`);
    return out;
  };
  return { real, w, fold, heard, settle, logged, lines };
}

describe('fact writer: a carrier re-reads an action log in doubt without its lock', () => {
  it('a re-read that ends after an append there was marked in doubt again leaves that doubt', async () => {
    let gateOpen!: () => void;
    const gate = new Promise<void>((r) => (gateOpen = r));
    let slowReads = 0;
    let armed = false;
    const t = await setup({
      append: (r) => (r.fact.id === 'F1' || r.fact.id === 'F2' ? { throwAfter: true } : undefined),
      read: (o) => (armed && o.subject === C && slowReads++ === 0 ? gate : undefined),
    });
    expect(await t.settle(t.w.write(files(0), { ...main, id: 'F0' }))).toMatch(/^ok/);
    expect(await t.settle(t.w.write(files(1), { ...main, id: 'F1' }))).toMatch(/AppendFailedError/);
    armed = true;
    // The carrier's re-read of C starts, and is slow; meanwhile F2 is appended on C and its answer lost.
    const x1 = t.settle(t.w.write(applied(), { ...main, id: 'X1' }));
    await sleep(20);
    const f2 = t.settle(t.w.write(files(2), { ...main, id: 'F2' }));
    // F2 failed in doubt while the carrier's re-read was still reading: only then does that read end.
    expect(await f2).toMatch(/AppendFailedError/);
    gateOpen();
    expect(await x1).toMatch(/^ok/);
    await sleep(1_500); // the background re-read (after 500 ms) folds F2 while C is still in doubt
    expect(t.heard.get('F2')).toBe(1);
    expect(digestOf(t.fold)).toBe((await replayLog(t.real, AGGREGATES)).digest);
    expect(await t.settle(t.w.write(files(3), { ...main, id: 'F3' }))).toMatch(/^ok/);
    await t.real.close();
  }, 20_000);

  it('a fact sent early there, found by the re-read before its answer, is folded once', async () => {
    const t = await setup({
      append: (r) =>
        r.fact.id === 'F1' ? { after: 30, throwAfter: true } : r.fact.id === 'F2' ? { after: 400 } : undefined,
    });
    expect(await t.settle(t.w.write(files(0), { ...main, id: 'F0' }))).toMatch(/^ok/);
    const f1 = t.settle(t.w.write(files(1), { ...main, id: 'F1' }));
    const f2 = t.settle(t.w.write(files(2), { ...main, id: 'F2' })); // sent early, behind F1
    expect(await f1).toMatch(/AppendFailedError/); // in doubt; F2 is stored, its answer not in for 400 ms
    const x1 = t.settle(t.w.write(applied(), { ...main, id: 'X1' }));
    expect(await f2).toMatch(/^ok/);
    expect(await x1).toMatch(/^ok/);
    for (const [id, n] of t.heard) expect(`${id} ${n}`).toBe(`${id} 1`);
    expect(t.w.facts).toBe((await t.logged()).length);
    expect(digestOf(t.fold)).toBe((await replayLog(t.real, AGGREGATES)).digest);
    expect(await t.settle(t.w.write(files(3), { ...main, id: 'F3' }))).toMatch(/^ok/);
    await t.real.close();
  }, 20_000);
});
