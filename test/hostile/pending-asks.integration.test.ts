import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import type { Reply } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, attack, reportAttacks } from './support.ts';

/** Asks the hog sends at once; every one past the limit must be refused. */
const ASKS = Number(process.env['SKEIN_PENDING_ASKS'] ?? 200);
const LIMIT = 8;

let rt: TestRuntime;
/** Each agent connects with its own socket token, as its process would. */
const sockets = agentSockets(() => rt);
const as = sockets.as;

type Pending = { requestId: string; agentId: string };
async function pending(): Promise<Pending[]> {
  return ok(await rt.call('permission.pending', {}))['requests'] as Pending[];
}

beforeAll(async () => {
  rt = await startTestRuntime({
    mode: 'embedded',
    // Writes of ask* wait for a person's answer.
    policy: { default: 'allow', tools: { write_file: { always_confirm: [{ pattern: '^ask' }] } } },
    flags: { domains: { permission: { maxPendingPerAgent: LIMIT } } },
  });
  ok(await rt.call('agent.spawn', { label: 'hog', agentId: 'hog' }));
  ok(await rt.call('agent.spawn', { label: 'other', agentId: 'other' }));
}, 60_000);
afterAll(async () => {
  await sockets.closeAll();
  await rt?.dispose();
});
reportAttacks('pending-asks');

describe('hostile: asks a person must answer, sent without end', { timeout: 180_000 }, () => {
  attack(
    'ask-flood',
    `${ASKS} concurrent file.write under a confirm rule: at most ${LIMIT} pending`,
    async () => {
      const hog = await as('hog');
      const rssBefore = process.memoryUsage().rss;
      const replies: Reply[] = [];
      // The hog waits as long as it likes (its waitMs), so nothing withdraws its asks before the timeout.
      const calls = Array.from({ length: ASKS }, (_, i) =>
        call(hog, 'hog', 'file.write', { path: `ask-${i}.txt`, content: 'x' }, { timeoutMs: 600_000 }).then(
          (r) => void replies.push(r),
          () => undefined, // the runtime closed under it (a failed run)
        ),
      );
      // Every ask is either pending or answered (refused) by now.
      await vi.waitFor(
        async () => {
          const mine = (await pending()).filter((p) => p.agentId === 'hog');
          expect(mine.length + replies.length).toBe(ASKS);
        },
        { timeout: 120_000, interval: 100 },
      );
      const held = (await pending()).filter((p) => p.agentId === 'hog');
      const rssGrowth = process.memoryUsage().rss - rssBefore;
      console.log(
        `ask-flood: ${held.length} of ${ASKS} asks pending, host RSS +${(rssGrowth / 2 ** 20).toFixed(0)} MiB`,
      );
      // Canary: more of one agent's asks held than domains.permission.maxPendingPerAgent.
      expect(held.length).toBe(LIMIT);
      expect(replies).toHaveLength(ASKS - LIMIT);
      for (const r of replies) {
        expect(r).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
        if (!r.ok) expect(r.error.message).toContain(`domains.permission.maxPendingPerAgent = ${LIMIT}`);
      }
      // The limit is per agent: another agent's ask still reaches the person.
      const other = await as('other');
      const theirs = call(other, 'other', 'file.write', { path: 'ask-other.txt', content: 'y' }, { timeoutMs: 60_000 });
      await vi.waitFor(async () => expect((await pending()).some((p) => p.agentId === 'other')).toBe(true), {
        timeout: 30_000,
        interval: 50,
      });
      // An answered ask frees its slot: the hog asks again and is held, not refused.
      ok(await rt.call('permission.decide', { requestId: held[0]!.requestId, decision: 'deny_once' }));
      const again = call(hog, 'hog', 'file.write', { path: 'ask-again.txt', content: 'z' }, { timeoutMs: 60_000 });
      await vi.waitFor(async () => expect((await pending()).filter((p) => p.agentId === 'hog')).toHaveLength(LIMIT), {
        timeout: 30_000,
        interval: 50,
      });
      // Settle the rest so the calls end with the test.
      for (const p of await pending())
        await rt.call('permission.decide', { requestId: p.requestId, decision: 'deny_once' });
      await Promise.all([...calls, theirs, again]);
    },
    180_000,
  );
});
