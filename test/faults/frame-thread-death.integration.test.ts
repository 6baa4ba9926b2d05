/**
 * A client's frame thread dies while it decodes a big reply (issue 13): the call that reply answered fails at
 * once with a retryable error that says the reply was lost, instead of waiting for its timeout (it waited the
 * whole timeout before), and the connection reads on: a later big reply is decoded on a new thread and a small
 * one at once. The worker really dies (test/support/dying-frame-worker.mjs exits its thread on a payload
 * holding "die-here"); the runtime, its socket and the files are real.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import { requireSocketToken } from '../../infra/transport/auth/socket-tokens.ts';
import { ReplyLostError, SocketBus } from '../../infra/transport/socket-bus.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

const DYING_WORKER = new URL('../support/dying-frame-worker.mjs', import.meta.url);

let rt: TestRuntime;
let bus: SocketBus;
beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded' });
  const data = join(rt.dir, 'data');
  bus = await SocketBus.connect(join(data, 'skein.sock'), {
    token: requireSocketToken(data, {}),
    frameWorker: DYING_WORKER,
  });
}, 60_000);
afterAll(async () => {
  await bus?.close();
  await rt?.dispose();
});

/** 1,000 lines of 1,000 characters: a read of it is a reply frame well over the 512 KiB off-thread size. */
const body = (tag: string) =>
  `${Array.from({ length: 1_000 }, (_, i) => `${tag} ${i} ${'q'.repeat(990)}`).join('\n')}\n`;

describe('a client whose frame thread dies', () => {
  it('fails the call whose reply was lost at once, and reads later frames', async () => {
    const doomed = `die-here\n${body('doomed')}`;
    const fine = body('fine');
    for (const [path, content] of [
      ['doomed.txt', doomed],
      ['fine.txt', fine],
    ]) {
      const w = await rt.call('file.write', { path, content });
      expect(w.ok, JSON.stringify(w).slice(0, 300)).toBe(true);
    }

    const started = performance.now();
    const lost = await call(bus, 'main', 'file.read', { path: 'doomed.txt' }, { timeoutMs: 20_000 }).then(
      () => undefined,
      (err: unknown) => err,
    );
    const failedAfter = performance.now() - started;
    expect(lost).toBeInstanceOf(ReplyLostError);
    expect(lost).toMatchObject({ code: 'unavailable', retryable: true });
    expect((lost as Error).message).toMatch(
      /^the reply on 'skein\.cmd\.main\.file\.read' was lost: a \d+-byte res frame/,
    );
    expect((lost as Error).message).toContain('the thread decoding it died (worker thread exited with code 3)');
    expect(failedAfter).toBeLessThan(5_000);

    const again = await call(bus, 'main', 'file.read', { path: 'fine.txt' }, { timeoutMs: 20_000 });
    expect(again).toMatchObject({ ok: true, content: fine });
    expect((await call(bus, 'main', 'runtime.ping', {}, { timeoutMs: 5_000 })).ok).toBe(true);
    console.log(`frame thread death: the lost reply failed after ${failedAfter.toFixed(0)} ms`);
  }, 60_000);
});
