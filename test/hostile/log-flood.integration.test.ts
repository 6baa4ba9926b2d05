/**
 * An agent repeats what the runtime refuses, to fill the operator's log: every refused command and every
 * refused socket client was a warn line (17,000 refusals and 10.9 MB of log a second from one agent, measured
 * before capped-log.ts). Now each sender writes at most REFUSALS_LOGGED.perWindow lines a window, and the rest
 * are counted in one line. Each refused request quotes its own number, so the lines past the cap are canaries:
 * they must never reach the log. Another agent's refusal is still logged, and the count is exact.
 */
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { REFUSALS_LOGGED } from '../../infra/kernel/capped-log.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { attack, canary, type Canary, reportAttacks } from './support.ts';

const FLOOD = 3_000;
const CAP = REFUSALS_LOGGED.perWindow;
let rt: TestRuntime;
let c: Canary;
let stopped = false;

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded', logLevel: 'warn' });
  c = canary();
  ok(await rt.call('agent.spawn', { label: 'flooder', agentId: 'flooder' }));
  ok(await rt.call('agent.spawn', { label: 'bystander', agentId: 'bystander' }));
}, 60_000);
afterAll(async () => {
  c?.dispose();
  if (!stopped) await rt?.dispose();
});
reportAttacks('log-flood');

const lines = (msg: string, agentId?: string) =>
  rt.logs.filter((l) => l['msg'] === msg && (agentId === undefined || String(l['subject']).includes(`.${agentId}.`)));

/** The key of refused request `i`: its number and the canary, quoted by the refusal. */
const key = (i: number) => `n${i}x${c.marker}`;

describe('hostile: an agent floods the operator log with refusals', () => {
  attack(
    'log-flood',
    `${FLOOD} refused commands write ${CAP} lines; the count of the rest is exact; others still log`,
    async () => {
      const logBefore = JSON.stringify(rt.logs).length;
      for (let i = 0; i < FLOOD; i += 100) {
        const batch = Array.from({ length: 100 }, (_, j) =>
          rt.call('terminal.open', { [key(i + j)]: 1 }, { agentId: 'flooder' }),
        );
        for (const reply of await Promise.all(batch)) expect(reply.ok).toBe(false);
      }
      // Every refusal still answered the sender; the log took CAP of them.
      const written = lines('command refused', 'flooder');
      expect(written).toHaveLength(CAP);
      const logged = JSON.stringify(rt.logs).slice(logBefore);
      expect(logged.length).toBeLessThan(CAP * 2_000);
      expect(logged).not.toContain(key(FLOOD - 1));
      expect(logged).not.toContain(key(CAP));
      // The flood buries nobody: another agent's first refusal is written.
      const reply = await rt.call('terminal.open', { [`bystander${c.marker}`]: 1 }, { agentId: 'bystander' });
      expect(reply.ok).toBe(false);
      expect(lines('command refused', 'bystander')).toHaveLength(1);
      // The host is not slowed by its log: it answers at once.
      ok(await rt.call('runtime.ping'));
    },
  );

  attack('log-flood', 'a client refused at the socket again and again writes the same capped lines', async () => {
    const sock = join(rt.dir, 'data', 'skein.sock');
    // 200 refusals, 50 at a time; each client hangs up at its error.
    for (let i = 0; i < 200; i += 50) {
      await Promise.all(
        Array.from(
          { length: 50 },
          (_, j) =>
            new Promise<void>((resolve) => {
              const s = createConnection(sock);
              s.on('error', () => resolve());
              s.on('close', () => resolve());
              s.on('data', () => s.destroy());
              s.on('connect', () => s.write(`${JSON.stringify({ op: 'hello', token: `bad-${i + j}-${c.marker}` })}\n`));
            }),
        ),
      );
    }
    const refused = rt.logs.filter((l) => l['msg'] === 'socket client refused');
    expect(refused).toHaveLength(CAP);
    ok(await rt.call('runtime.ping'));
  });

  attack('log-flood', 'what was not logged is counted in one line per sender when the runtime stops', async () => {
    stopped = true;
    await rt.dispose();
    const counts = rt.logs.filter((l) => String(l['msg']).startsWith('command refused: '));
    expect(counts).toEqual([expect.objectContaining({ agentId: 'flooder', notLogged: FLOOD - CAP })]);
    expect(String(counts[0]!['msg'])).toContain(`${FLOOD - CAP} more from flooder not logged`);
    const sockets = rt.logs.filter((l) => String(l['msg']).startsWith('socket client refused: '));
    expect(sockets).toEqual([expect.objectContaining({ client: 'unauthenticated', notLogged: 200 - CAP })]);
  });
});
