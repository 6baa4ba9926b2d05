/**
 * An agent holding its own socket token opens streaming edits (`edit.begin`) and never finishes them. Each
 * open edit of an existing file holds that file in the host's memory (up to `domains.edit.maxFileBytes`,
 * 8 MiB by default), and nothing ends an idle one but the agent's own end: without a count limit, one agent
 * grows the host without bound. The canaries: more open edits than the limit, and the host's RSS following
 * the number of begins.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import type { Reply } from '../../infra/transport/codec.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, attack, reportAttacks } from './support.ts';

const FILE_BYTES = 4 * 1024 * 1024;
/** Begins the hog sends at once; every one past the limit must be refused. */
const BEGINS = 64;
const LIMIT = 8;

let rt: TestRuntime;
/** Each agent connects with its own socket token, as its process would. */
const sockets = agentSockets(() => rt);
const as = sockets.as;

beforeAll(async () => {
  rt = await startTestRuntime({ mode: 'embedded', flags: { domains: { edit: { maxOpenPerAgent: LIMIT } } } });
  // An agent makes such a file with one shell command; written here to keep the attack about edits.
  writeFileSync(join(rt.workspace, 'big.txt'), `${'x'.repeat(99)}\n`.repeat(FILE_BYTES / 100));
  ok(await rt.call('agent.spawn', { label: 'hog', agentId: 'hog' }));
  ok(await rt.call('agent.spawn', { label: 'other', agentId: 'other' }));
}, 60_000);
afterAll(async () => {
  await sockets.closeAll();
  await rt?.dispose();
});
reportAttacks('edit-sessions');

describe('hostile: streaming edits left open', { timeout: 120_000 }, () => {
  attack(
    'edit-hog',
    `${BEGINS} concurrent edit.begin of a ${FILE_BYTES >> 20} MiB file: at most ${LIMIT} open`,
    async () => {
      const hog = await as('hog');
      // Begins that fail (no such file) hold no slot afterwards.
      for (let i = 0; i < LIMIT; i++) {
        const missing = await call(hog, 'hog', 'edit.begin', { path: 'missing.txt' }, { timeoutMs: 30_000 });
        expect(missing).toMatchObject({ ok: false, error: { code: 'not_found' } });
      }
      const rssBefore = process.memoryUsage().rss;
      const replies: Reply[] = await Promise.all(
        Array.from({ length: BEGINS }, () =>
          call(hog, 'hog', 'edit.begin', { path: 'big.txt' }, { timeoutMs: 60_000 }),
        ),
      );
      const opened = replies.filter((r) => r.ok);
      const rssGrowth = process.memoryUsage().rss - rssBefore;
      console.log(
        `edit-hog: ${opened.length} of ${BEGINS} begins open, host RSS +${(rssGrowth / 2 ** 20).toFixed(0)} MiB`,
      );
      // Canary: more open edits than domains.edit.maxOpenPerAgent.
      expect(opened.length).toBe(LIMIT);
      for (const r of replies) {
        if (!r.ok) {
          expect(r.error.code).toBe('limit_exceeded');
          expect(r.error.message).toContain(`domains.edit.maxOpenPerAgent = ${LIMIT}`);
        }
      }
      // Canary: the host's memory follows the begins (each open edit holds the file, 4 MiB or more).
      expect(rssGrowth).toBeLessThan((LIMIT + 24) * FILE_BYTES);
      // The limit is per agent: another agent still edits, and a finished edit frees its slot.
      const other = await as('other');
      const theirs = await call(other, 'other', 'edit.begin', { path: 'big.txt' }, { timeoutMs: 30_000 });
      expect(theirs.ok).toBe(true);
      const first = opened[0] as Reply & { ok: true };
      ok(await call(hog, 'hog', 'edit.cancel', { editId: first['editId'] }, { timeoutMs: 30_000 }));
      ok(await call(hog, 'hog', 'edit.begin', { path: 'big.txt' }, { timeoutMs: 30_000 }));
    },
    120_000,
  );
});

describe('hostile: many agents each within their own limit', { timeout: 120_000 }, () => {
  const PER_HOST = 12;
  const AGENTS = 5;
  let many: TestRuntime;
  const manySockets = agentSockets(() => many);
  beforeAll(async () => {
    many = await startTestRuntime({
      mode: 'embedded',
      flags: { domains: { edit: { maxOpenPerAgent: LIMIT, maxOpenPerHost: PER_HOST } } },
    });
    writeFileSync(join(many.workspace, 'big.txt'), `${'x'.repeat(99)}\n`.repeat(FILE_BYTES / 100));
    for (let a = 0; a < AGENTS; a++) ok(await many.call('agent.spawn', { label: `a${a}`, agentId: `a${a}` }));
  }, 60_000);
  afterAll(async () => {
    await manySockets.closeAll();
    await many?.dispose();
  });

  attack(
    'edit-hog',
    `${AGENTS} agents × ${LIMIT} concurrent edit.begin: at most ${PER_HOST} open on the host`,
    async () => {
      const agents = await Promise.all(Array.from({ length: AGENTS }, (_, a) => manySockets.as(`a${a}`)));
      const replies: Reply[] = await Promise.all(
        agents.flatMap((socket, a) =>
          Array.from({ length: LIMIT }, () =>
            call(socket, `a${a}`, 'edit.begin', { path: 'big.txt' }, { timeoutMs: 60_000 }),
          ),
        ),
      );
      // Canary: more open edits on the host than domains.edit.maxOpenPerHost (40 on the old code).
      const opened = replies.filter((r) => r.ok);
      expect(opened.length).toBe(PER_HOST);
      for (const r of replies) {
        if (!r.ok) {
          expect(r.error.code).toBe('limit_exceeded');
          expect(r.error.message).toContain(`domains.edit.maxOpenPerHost = ${PER_HOST}`);
        }
      }
      // A slot given back by any agent is free for any other.
      const first = replies.findIndex((r) => r.ok);
      const owner = Math.floor(first / LIMIT);
      const editId = (replies[first] as Reply & { ok: true })['editId'];
      ok(await call(agents[owner]!, `a${owner}`, 'edit.cancel', { editId }, { timeoutMs: 30_000 }));
      const refusedAgent = replies.findIndex((r) => !r.ok);
      const other = Math.floor(refusedAgent / LIMIT);
      ok(await call(agents[other]!, `a${other}`, 'edit.begin', { path: 'big.txt' }, { timeoutMs: 30_000 }));
    },
    120_000,
  );
});
