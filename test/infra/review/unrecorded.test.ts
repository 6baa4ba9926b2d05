/**
 * The queue of changes whose records the log refused: a path's changes are recorded once each, in the order they
 * were made, under the path's lock, also when one is added while a retry is under way (a second retry started
 * then recorded one twice, on the code before); `flush` records them ahead of a new record of the path and fails
 * while the log refuses; a path that keeps failing does not hold up another; a closed queue tries no more.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { PathLock } from '../../../actors/review/action-log-files.ts';
import { UnrecordedChanges } from '../../../infra/review/unrecorded.ts';

const logger = pino({ level: 'silent' });

function queue(options: { minDelayMs?: number; maxDelayMs?: number } = {}) {
  const lock = new PathLock();
  const q = new UnrecordedChanges({ logger, withLock: (p, fn) => lock.withLock(p, fn), ...options });
  return { q, lock };
}

async function until(check: () => boolean, ms = 2_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(5);
}

describe('UnrecordedChanges', () => {
  it('records each change once, in order, also one added while a retry is under way', async () => {
    const { q, lock } = queue({ minDelayMs: 10, maxDelayMs: 20 });
    const recorded: string[] = [];
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const held: boolean[] = [];
    // a: refused once, then its record hangs until the gate opens (a slow log).
    q.add(
      {
        path: '/w/a',
        agentId: 'main',
        record: async () => {
          held.push(lock.isLocked('/w/a'));
          if (++calls === 1) throw new Error('log down');
          await gate;
          recorded.push('a1');
        },
      },
      new Error('log down'),
    );
    q.add({ path: '/w/a', agentId: 'main', record: async () => void recorded.push('a2') }, new Error('log down'));
    await until(() => calls >= 2);
    expect(calls).toBe(2);
    // Added while a's record runs: its timer fires during that record and must not start a second retry.
    q.add({ path: '/w/b', agentId: 'main', record: async () => void recorded.push('b') }, new Error('log down'));
    await sleep(100);
    release();
    await until(() => q.size === 0);
    await sleep(50);
    expect(recorded).toEqual(['a1', 'a2', 'b']);
    expect(calls).toBe(2);
    expect(held).toEqual([true, true]);
    await q.close();
  });

  it('flush records a path first, and fails while the log refuses it', async () => {
    const { q, lock } = queue({ minDelayMs: 60_000 });
    let logUp = false;
    const recorded: string[] = [];
    q.add(
      {
        path: '/w/a',
        agentId: 'main',
        record: async () => {
          if (!logUp) throw new Error('log down');
          recorded.push('a');
        },
      },
      new Error('log down'),
    );
    await expect(lock.withLock(['/w/a'], () => q.flush(['/w/a']))).rejects.toThrow(/earlier changes to \/w\/a/);
    await q.flush(['/w/other']); // nothing waits for it
    logUp = true;
    await lock.withLock(['/w/a'], () => q.flush(['/w/a']));
    expect(recorded).toEqual(['a']);
    expect(q.size).toBe(0);
    await q.close();
  });

  it('a path that keeps failing does not hold up another, and a closed queue tries no more', async () => {
    const { q } = queue({ minDelayMs: 10, maxDelayMs: 20 });
    let tries = 0;
    const recorded: string[] = [];
    q.add(
      {
        path: '/w/stuck',
        agentId: 'main',
        record: async () => {
          tries++;
          throw new Error('log refuses this one');
        },
      },
      new Error('log down'),
    );
    q.add({ path: '/w/fine', agentId: 'main', record: async () => void recorded.push('fine') }, new Error('log down'));
    await until(() => recorded.length === 1);
    expect(recorded).toEqual(['fine']);
    await q.close();
    const seen = tries;
    expect(seen).toBeGreaterThan(0);
    await sleep(100);
    expect(tries).toBe(seen);
    expect(q.size).toBe(1);
  });

  it("a review's flushAll records only the paths holding its agents' changes", async () => {
    const { q } = queue({ minDelayMs: 60_000 });
    const recorded: string[] = [];
    const change = (path: string, agentId: string) => ({
      path,
      agentId,
      record: async () => void recorded.push(`${agentId}:${path}`),
    });
    q.add(change('/w/a', 'kid'), new Error('log down'));
    q.add(change('/w/b', 'stranger'), new Error('log down'));
    q.add(change('/w/c', 'stranger'), new Error('log down'));
    q.add(change('/w/c', 'kid'), new Error('log down'));
    await q.flushAll((agentId) => agentId === 'kid');
    // c holds a stranger's change before the kid's: recorded too, in order.
    expect(recorded).toEqual(['kid:/w/a', 'stranger:/w/c', 'kid:/w/c']);
    expect(q.size).toBe(1);
    await q.close();
  });

  it('close tries once more before the log closes (the log may be back before the next retry was due)', async () => {
    const { q } = queue({ minDelayMs: 60_000 });
    let logUp = false;
    const recorded: string[] = [];
    const record = async () => {
      if (!logUp) throw new Error('log down');
      recorded.push('a');
    };
    q.add({ path: '/w/a', agentId: 'main', record }, new Error('log down'));
    logUp = true;
    await q.close();
    expect(recorded).toEqual(['a']);
    expect(q.size).toBe(0);
    q.add({ path: '/w/b', agentId: 'main', record }, new Error('late'));
    expect(q.size).toBe(0); // after close: logged as never recorded, not kept
  });

  it('close stays within its bound when the log hangs; a refused path does not stop the others', async () => {
    const { q } = queue({ minDelayMs: 60_000 });
    const recorded: string[] = [];
    q.add({ path: '/w/hung', agentId: 'main', record: () => new Promise<void>(() => {}) }, new Error('log down'));
    q.add({ path: '/w/ok', agentId: 'main', record: async () => void recorded.push('ok') }, new Error('log down'));
    const started = Date.now();
    await q.close(200);
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(recorded).toEqual([]); // behind the hung one, within the bound
    const { q: q2 } = queue({ minDelayMs: 60_000 });
    const refuse = async () => {
      throw new Error('still refused');
    };
    q2.add({ path: '/w/refused', agentId: 'main', record: refuse }, new Error('log down'));
    q2.add({ path: '/w/ok', agentId: 'main', record: async () => void recorded.push('ok') }, new Error('log down'));
    await q2.close(1_000);
    expect(recorded).toEqual(['ok']);
  });
});
