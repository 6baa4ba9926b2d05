import { afterAll, beforeAll, describe, expect } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import type { Reply } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, attack, reportAttacks } from './support.ts';

/** Commands the hog queues at once; every one past the limit must be refused. */
const EXECS = 300;
const LIMIT = 8;

let rt: TestRuntime;
/** Each agent connects with its own socket token, as its process would. */
const sockets = agentSockets(() => rt);
const as = sockets.as;

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded', flags: { domains: { terminal: { maxQueuedPerTerminal: LIMIT } } } });
  ok(await rt.call('agent.spawn', { label: 'hog', agentId: 'hog' }));
}, 60_000);
afterAll(async () => {
  await sockets.closeAll();
  await rt?.dispose();
});
reportAttacks('exec-queue');

describe('hostile: commands queued without end', { timeout: 120_000 }, () => {
  attack(
    'exec-queue',
    `${EXECS} terminal.exec behind a long command: at most ${LIMIT} queued`,
    async () => {
      const hog = await as('hog');
      const open = ok(await call(hog, 'hog', 'terminal.open', {}, { timeoutMs: 30_000 }));
      const terminalId = open['terminalId'] as string;
      // The long command holds the terminal; everything after it queues.
      const long = await call(hog, 'hog', 'terminal.exec', { terminalId, command: 'sleep 600', yieldMs: 0 });
      expect(long).toMatchObject({ ok: true, status: 'running' });
      const replies: Reply[] = await Promise.all(
        Array.from({ length: EXECS }, (_, i) =>
          call(hog, 'hog', 'terminal.exec', { terminalId, command: `true ${i}`, yieldMs: 0 }, { timeoutMs: 60_000 }),
        ),
      );
      const queued = replies.filter((r) => r.ok);
      console.log(`exec-queue: ${queued.length} of ${EXECS} commands queued`);
      // Canary: more commands queued on one terminal than domains.terminal.maxQueuedPerTerminal.
      expect(queued).toHaveLength(LIMIT);
      for (const r of queued) expect(r).toMatchObject({ ok: true, status: 'queued' });
      for (const r of replies) {
        if (r.ok) continue;
        expect(r.error.code).toBe('limit_exceeded');
        expect(r.error.message).toContain(`domains.terminal.maxQueuedPerTerminal = ${LIMIT}`);
      }
      // Once the queue drains, the terminal takes commands again.
      ok(await call(hog, 'hog', 'terminal.signal', { terminalId, signal: 'SIGINT' }));
      const last = queued.at(-1) as Reply & { ok: true };
      const wait = { terminalId, commandId: last['commandId'], timeoutMs: 30_000 };
      expect(await call(hog, 'hog', 'terminal.wait', wait, { timeoutMs: 60_000 })).toMatchObject({ status: 'exited' });
      const after = await call(
        hog,
        'hog',
        'terminal.exec',
        { terminalId, command: 'echo drained' },
        { timeoutMs: 60_000 },
      );
      expect(after).toMatchObject({ ok: true, status: 'exited', exitCode: 0 });
    },
    120_000,
  );
});
