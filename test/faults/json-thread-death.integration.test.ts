/**
 * The host's JSON thread dies while it parses a big file.write (issue 13): the payload was moved to it, not
 * copied, so it is gone with the thread. The command fails at once with a retryable `unavailable` that says so;
 * nothing of it happened (no fact caused by it in the log, no file on disk); the next big command gets a new
 * thread and is written. The worker really dies (test/support/dying-json-worker.mjs exits its thread on a payload
 * holding "die-here"); the runtime, its socket (whose big frames hand their payload over) and the files are real.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import { OFF_THREAD_BYTES } from '../../infra/transport/json-thread.ts';
import type { SocketBus } from '../../infra/transport/socket-bus.ts';
import type { StoredFact } from '../../schemas/index.ts';
import { operatorSocket } from '../support/socket.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

let rt: TestRuntime;
let bus: SocketBus;
beforeAll(async () => {
  rt = await startTestRuntime({
    mode: 'embedded',
    flags: { limits: { maxPayloadBytes: 8 * 1024 * 1024 } },
    jsonWorker: new URL('../support/dying-json-worker.mjs', import.meta.url),
  });
  bus = await operatorSocket(join(rt.dir, 'data'));
}, 60_000);
afterAll(async () => {
  await bus?.close();
  await rt?.dispose();
});

/** Lines past the JSON thread's threshold, so the payload is parsed there. */
const big = (tag: string) => `${tag} ${'z'.repeat(60)}\n`.repeat(Math.ceil((OFF_THREAD_BYTES * 1.5) / 64));

async function factsCausedBy(id: string): Promise<string[]> {
  const types: string[] = [];
  for await (const fact of rt.log.read() as AsyncIterable<StoredFact>) {
    if (fact.causationId === id) types.push(fact.type);
  }
  return types;
}

describe('a host whose JSON thread dies mid-parse', () => {
  it('fails that command as retryable, records and writes nothing of it, and writes the next', async () => {
    const write = (id: string, path: string, content: string) =>
      call(bus, 'main', 'file.write', { path, content }, { id, timeoutMs: 60_000 });

    const lost = await write('doomed-1', 'doomed.txt', `die-here\n${big('doomed')}`);
    expect(lost).toMatchObject({ ok: false, error: { code: 'unavailable', retryable: true } });
    expect((lost as { error: { message: string } }).error.message).toMatch(
      new RegExp(
        "^the JSON thread stopped while it parsed this command's \\d+-byte payload, which was lost with it " +
          '\\(worker thread exited with code 3\\); nothing of the command was done: send it again$',
      ),
    );
    expect(await factsCausedBy('doomed-1')).toEqual([]);
    expect(existsSync(join(rt.workspace, 'doomed.txt'))).toBe(false);

    const fine = big('fine');
    const ok = await write('fine-1', 'fine.txt', fine);
    expect(ok.ok, JSON.stringify(ok).slice(0, 300)).toBe(true);
    expect(readFileSync(join(rt.workspace, 'fine.txt'), 'utf8')).toBe(fine);
    expect(await factsCausedBy('fine-1')).toEqual(expect.arrayContaining(['edit.writing', 'edit.applied']));
  }, 120_000);
});
