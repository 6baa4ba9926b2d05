import { describe, expect, it } from 'vitest';
import { KeyedLock } from '../../../infra/kernel/keyed-lock.ts';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('KeyedLock', () => {
  it('starts work on a free key within the call, so appends made in one turn leave together', () => {
    const lock = new KeyedLock();
    const started: string[] = [];
    void lock.run('a', async () => void started.push('a'));
    void lock.run('b', async () => void started.push('b'));
    expect(started).toEqual(['a', 'b']);
  });

  it('runs work on one key one at a time, in arrival order, even when an earlier one fails', async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    const first = gate();
    const one = lock.run('k', async () => {
      order.push('1 start');
      await first.opened;
      order.push('1 end');
      throw new Error('first failed');
    });
    const two = lock.run('k', async () => void order.push('2'));
    const three = lock.run('k', async () => void order.push('3'));
    expect(order).toEqual(['1 start']);
    first.open();
    await expect(one).rejects.toThrow('first failed');
    await Promise.all([two, three]);
    expect(order).toEqual(['1 start', '1 end', '2', '3']);
  });

  it('turns a synchronous throw into a rejection and frees the key', async () => {
    const lock = new KeyedLock();
    const bad = (() => {
      throw new Error('sync');
    }) as unknown as () => Promise<void>;
    await expect(lock.run('k', bad)).rejects.toThrow('sync');
    await expect(lock.run('k', async () => 7)).resolves.toBe(7);
    await Promise.resolve();
    expect(lock.size).toBe(0);
  });
});
