/**
 * The queue of changes whose records the log refused: each is recorded once, in the order the changes were made,
 * also when one is added while a retry is under way (a second retry started then recorded one twice, on the
 * code before); a retry that fails waits and tries again; a stopped queue tries no more.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { UnrecordedChanges } from '../../../infra/review/unrecorded.ts';

const logger = pino({ level: 'silent' });

describe('UnrecordedChanges', () => {
  it('records each change once, in order, also one added while a retry is under way', async () => {
    const queue = new UnrecordedChanges({ logger, minDelayMs: 10, maxDelayMs: 20 });
    const recorded: string[] = [];
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // a: refused once, then its record hangs until the gate opens (a slow log).
    queue.add(
      {
        paths: ['a'],
        record: async () => {
          if (++calls === 1) throw new Error('log down');
          await gate;
          recorded.push('a');
        },
      },
      new Error('log down'),
    );
    queue.add({ paths: ['b'], record: async () => void recorded.push('b') }, new Error('log down'));
    const end = Date.now() + 2_000;
    while (calls < 2 && Date.now() < end) await sleep(5);
    expect(calls).toBe(2);
    // Added while a's record runs: its timer fires during that record and must not start a second retry.
    queue.add({ paths: ['c'], record: async () => void recorded.push('c') }, new Error('log down'));
    await sleep(100);
    release();
    while (queue.size > 0 && Date.now() < end) await sleep(5);
    await queue.settled();
    await sleep(50);
    expect(recorded).toEqual(['a', 'b', 'c']);
    expect(calls).toBe(2);
    queue.stop();
  });

  it('stops retrying when stopped', async () => {
    const queue = new UnrecordedChanges({ logger, minDelayMs: 10 });
    let tries = 0;
    queue.add(
      {
        paths: ['x'],
        record: async () => {
          tries++;
          throw new Error('log down');
        },
      },
      new Error('log down'),
    );
    await sleep(50);
    queue.stop();
    const seen = tries;
    expect(seen).toBeGreaterThan(0);
    await sleep(100);
    expect(tries).toBe(seen);
  });
});
