import { describe, expect, it } from 'vitest';
import { CappedLog } from '../../../infra/kernel/capped-log.ts';
import { memoryLogger } from '../../support/log-sink.ts';

const WINDOW_MS = 80;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('CappedLog', () => {
  it('writes a sender its share, then reports the rest in one line once the window ends, by itself', async () => {
    const { logger, lines } = memoryLogger('warn');
    const log = new CappedLog(logger, 'thing refused', 'agentId', { perWindow: 2, windowMs: WINDOW_MS, maxKeys: 8 });
    for (let i = 0; i < 7; i++) log.warn('a1', { i });
    log.warn('a2', { i: 100 });
    expect(lines.map((l) => [l['msg'], l['i']])).toEqual([
      ['thing refused', 0],
      ['thing refused', 1],
      ['thing refused', 100],
    ]);
    // Nobody writes again: the timer reports the count after the window.
    await sleep(WINDOW_MS * 3);
    expect(lines.slice(3)).toEqual([
      expect.objectContaining({
        level: 40,
        agentId: 'a1',
        notLogged: 5,
        msg: 'thing refused: 5 more from a1 not logged (at most 2 a sender every 0.08 s)',
      }),
    ]);
    // A new window writes again, and close reports what waits without a timer.
    for (let i = 0; i < 4; i++) log.warn('a1', { i });
    log.close();
    expect(lines.slice(4).map((l) => l['msg'])).toEqual([
      'thing refused',
      'thing refused',
      'thing refused: 2 more from a1 not logged (at most 2 a sender every 0.08 s)',
    ]);
    await sleep(WINDOW_MS * 2);
    expect(lines).toHaveLength(7);
  });
});
