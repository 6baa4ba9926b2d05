import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import type { Reply } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, attack, reportAttacks } from './support.ts';

/** Waits the hog sends at once; every one past the limit must be refused at once. */
const CALLS = 1000;
const LIMIT = 64;
/** How long each wait holds its slot (the command runs on): long enough for the refusals to come first. */
const WAIT_MS = 10_000;

let rt: TestRuntime;
/** Each agent connects with its own socket token, as its process would. */
const sockets = agentSockets(() => rt);
const as = sockets.as;

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded', flags: { limits: { maxInFlightPerAgent: LIMIT } } });
  ok(await rt.call('agent.spawn', { label: 'hog', agentId: 'hog' }));
  ok(await rt.call('agent.spawn', { label: 'other', agentId: 'other' }));
}, 60_000);
afterAll(async () => {
  await sockets.closeAll();
  await rt?.dispose();
});
reportAttacks('in-flight');

describe('hostile: commands in progress without end', { timeout: 120_000 }, () => {
  attack(
    'in-flight',
    `${CALLS} terminal.wait at once on a long command: at most ${LIMIT} in progress`,
    async () => {
      const hog = await as('hog');
      const terminalId = ok(await call(hog, 'hog', 'terminal.open', {}, { timeoutMs: 30_000 }))['terminalId'];
      ok(await call(hog, 'hog', 'terminal.exec', { terminalId, command: 'sleep 600', yieldMs: 0 }));
      const replies: Reply[] = [];
      const waits = Array.from({ length: CALLS }, () =>
        call(hog, 'hog', 'terminal.wait', { terminalId, timeoutMs: WAIT_MS }, { timeoutMs: 120_000 }).then(
          (r) => void replies.push(r),
          () => undefined, // the runtime closed under it (a failed run)
        ),
      );
      const refused = () => replies.filter((r) => !r.ok);
      // Canary: every wait past the limit is taken and held instead of refused.
      await vi.waitFor(() => expect(refused()).toHaveLength(CALLS - LIMIT), { timeout: 30_000, interval: 50 });
      for (const r of refused()) {
        expect(r).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
        if (!r.ok) expect(r.error.message).toContain(`limits.maxInFlightPerAgent = ${LIMIT}`);
      }
      // The limit is per agent: another agent's call is served meanwhile.
      const other = await as('other');
      expect(await call(other, 'other', 'terminal.list', {}, { timeoutMs: 30_000 })).toMatchObject({ ok: true });
      // Once the waits reply (their own timeout: the command still runs), their slots are free again.
      await Promise.all(waits);
      expect(replies.filter((r) => r.ok)).toHaveLength(LIMIT);
      ok(await call(hog, 'hog', 'terminal.signal', { terminalId, signal: 'SIGINT' }));
      expect(await call(hog, 'hog', 'terminal.exec', { terminalId, command: 'true' })).toMatchObject({ ok: true });
    },
    120_000,
  );
});
