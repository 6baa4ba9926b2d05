/**
 * @module
 * Waits, in a live test, for a condition the system reaches by itself (a retry, a late record, a command's end),
 * polling; fails naming what it waited for.
 */
import { setTimeout as sleep } from 'node:timers/promises';

export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}
