/**
 * The reply cache's bounds: by count (`repliesKept`) and by bytes (`REPLY_BYTES`), oldest first; a retryable
 * failure is forgotten once it settles.
 */
import { pino } from 'pino';
import { CommandMemory, REPLY_BYTES, type Outcome } from '../../../infra/kernel/command-memory.ts';

const settled = (bytes: number, retryable = false): Promise<Outcome> =>
  Promise.resolve({ bytes: new Uint8Array(bytes), retryable });
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('CommandMemory replies', () => {
  it('keeps at most about REPLY_BYTES, forgetting the oldest first', async () => {
    const memory = new CommandMemory(2_000, pino({ level: 'silent' }));
    const size = REPLY_BYTES / 4 + 1;
    for (let i = 0; i < 6; i++) memory.remember(`k${i}`, settled(size));
    await tick();
    expect(memory.replyBytes).toBe(3 * size);
    expect(['k0', 'k1', 'k2'].map((k) => memory.reply(k))).toEqual([undefined, undefined, undefined]);
    for (const k of ['k3', 'k4', 'k5']) expect(memory.reply(k)).toBeDefined();
  });

  it('keeps at most repliesKept, and forgets a retryable failure', async () => {
    const memory = new CommandMemory(2, pino({ level: 'silent' }));
    memory.remember('a', settled(10));
    memory.remember('b', settled(20));
    memory.remember('c', settled(30));
    memory.remember('d', settled(40, true));
    await tick();
    expect(memory.reply('a')).toBeUndefined();
    expect(memory.reply('b')).toBeUndefined();
    expect(memory.reply('c')).toBeDefined();
    expect(memory.reply('d')).toBeUndefined();
    expect(memory.replyBytes).toBe(30);
  });
});
