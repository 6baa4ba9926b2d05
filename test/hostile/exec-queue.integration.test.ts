/**
 * An agent holding its own socket token starts a long command in its terminal, then sends `terminal.exec`
 * again and again with `yieldMs: 0`: each reply comes back at once (`queued`) and each command waits in the
 * terminal's queue (its text, up to 100 KB, in the host's memory, and a `terminal.command.queued` fact) for
 * the one before. Nothing drains it but the long command's end: without a count limit, one agent queues
 * without bound. The canary: more commands queued than the limit.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { mintSocketToken, socketKey } from '../../infra/transport/auth/socket-tokens.ts';
import { call } from '../../infra/transport/client.ts';
import type { Reply } from '../../infra/transport/codec.ts';
import { SocketBus } from '../../infra/transport/socket-bus.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { attack, reportAttacks } from './support.ts';

/** Commands the hog queues at once; every one past the limit must be refused. */
const EXECS = 300;
const LIMIT = 8;

let rt: TestRuntime;
const buses: SocketBus[] = [];

async function as(agentId: string): Promise<SocketBus> {
  const token = mintSocketToken(socketKey(join(rt.dir, 'data')), { kind: 'agent', agentId });
  const bus = await SocketBus.connect(rt.info.socketPath!, { token });
  buses.push(bus);
  return bus;
}

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded', flags: { domains: { terminal: { maxQueuedPerTerminal: LIMIT } } } });
  ok(await rt.call('agent.spawn', { label: 'hog', agentId: 'hog' }));
}, 60_000);
afterAll(async () => {
  for (const b of buses) await b.close().catch(() => undefined);
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
