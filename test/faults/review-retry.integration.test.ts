/**
 * A review command sent again with its id after a restart (a client whose reply was lost) is never run twice.
 * Review facts carried no command id, so the restarted host did not know the id: a retried reject rejected
 * again and reverted the user's undo-reject since, and a retried undo-reject ran again too (durability review,
 * issue 15's session). The retry is now answered `in_doubt`, naming what to re-read, and changes nothing.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import type { SocketBus } from '../../infra/transport/socket-bus.ts';
import { operatorSocket } from '../support/socket.ts';
import { startHost, type HostProcess } from './fault-harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'skein-fault-review-retry-'));
let host: HostProcess | undefined;
let bus: SocketBus | undefined;

afterAll(async () => {
  await bus?.close();
  await host?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a review command retried after a restart', () => {
  it('is answered in_doubt and not run again: the undo since stays', async () => {
    const dataDir = join(dir, 'data');
    const file = join(dir, 'ws', 'a.txt');
    const start = async () => {
      host = await startHost({ dir, mode: 'embedded', dataDir });
      bus = await operatorSocket(dataDir);
    };
    await start();
    const run = (type: string, id: string, data: unknown = {}) =>
      call(bus!, 'main', type, data, { id, timeoutMs: 10_000 });
    writeFileSync(file, 'base\n');
    expect((await run('file.write', 'w-1', { path: 'a.txt', content: 'AGENT\n' })).ok).toBe(true);
    expect((await run('review.reject', 'rej-1')).ok).toBe(true);
    expect((await run('review.undo-reject', 'undo-1')).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('AGENT\n');

    await bus!.close();
    await host!.stop();
    await start();
    for (const [type, id] of [
      ['review.reject', 'rej-1'],
      ['review.undo-reject', 'undo-1'],
    ] as const) {
      const again = await run(type, id);
      expect(again.ok, `${type} ${id}`).toBe(false);
      if (!again.ok) {
        expect(again.error.code).toBe('in_doubt');
        expect(again.error.message).toContain(`command id '${id}' was already handled`);
      }
    }
    expect(readFileSync(file, 'utf8')).toBe('AGENT\n');
    // A new id runs: the reject is there to be made.
    expect((await run('review.reject', 'rej-2')).ok).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('base\n');
  }, 120_000);
});
