/**
 * A finished child frees its parent's slot (`domains.agents.maxChildren` counts live children only), so it
 * must not keep what it held either: an agent that starts long commands in its terminals and then calls
 * `agent.complete` (or `agent.fail`) would otherwise leave them running, and a parent limited to one child
 * runs a new child's worth of processes on every round, past `maxChildren × maxPerAgent`. The canary is a
 * process count over that bound (each round's commands are `sleep` with an argument no other process has).
 * Nor may a request it left pending act once approved after its end: the canary is the file it asked to write.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import { firstPending, ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, attack, reportAttacks } from './support.ts';

const MAX_CHILDREN = 1;
const PER_AGENT = 2;
const ROUNDS = 3;
/** A sleep length no other process on the machine uses, so pgrep counts only ours. */
const MARK = `${900 + (process.pid % 97)}.${Date.now() % 100_000}`;

let rt: TestRuntime;
/** Each agent connects with its own socket token, as its process would. */
const sockets = agentSockets(() => rt);
const as = sockets.as;

/** Processes running our marked sleep. */
function sleepers(): number {
  try {
    return execFileSync('pgrep', ['-f', `^sleep ${MARK}$`], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean).length;
  } catch {
    return 0; // pgrep exits 1 when nothing matches
  }
}

beforeAll(async () => {
  rt = await startTestRuntime({
    mode: 'embedded',
    // Writes of late* wait for the parent's answer.
    policy: { default: 'allow', tools: { write_file: { always_confirm: [{ pattern: '^late' }] } } },
    flags: {
      domains: {
        agents: { maxChildren: MAX_CHILDREN },
        terminal: { maxPerAgent: PER_AGENT },
      },
    },
  });
  ok(await rt.call('agent.spawn', { label: 'parent', agentId: 'parent' }));
}, 60_000);
afterAll(async () => {
  await sockets.closeAll();
  await rt?.dispose();
});
reportAttacks('finished-agents');

describe('hostile: a finished agent leaves work running', { timeout: 120_000 }, () => {
  for (const end of ['agent.complete', 'agent.fail'] as const) {
    attack(
      'finished-holds',
      `${ROUNDS} children each start ${PER_AGENT} long commands, then ${end}`,
      async () => {
        const parent = await as('parent');
        for (let round = 0; round < ROUNDS; round++) {
          const childId = `${end.slice(6)}-${round}`;
          ok(await call(parent, 'parent', 'agent.spawn', { label: childId, agentId: childId }, { timeoutMs: 30_000 }));
          const child = await as(childId);
          const edit = await call(child, childId, 'edit.begin', { path: 'left-open.txt', mode: 'write' });
          expect(edit.ok).toBe(true);
          for (let t = 0; t < PER_AGENT; t++) {
            const open = await call(child, childId, 'terminal.open', {}, { timeoutMs: 30_000 });
            expect(open.ok).toBe(true);
            const terminalId = open.ok ? open['terminalId'] : '';
            const run = await call(child, childId, 'terminal.exec', {
              terminalId,
              command: `sleep ${MARK}`,
              yieldMs: 0,
            });
            expect(run).toMatchObject({ ok: true, status: 'running' });
          }
          // The child's connection is revoked as it finishes (a race with the reply): it ends through the host.
          await child.close();
          const done = await rt.call(end, end === 'agent.complete' ? { result: 'done' } : { error: 'gave up' }, {
            agentId: childId,
          });
          expect(done.ok).toBe(true);
          // Its streaming edit was cancelled with it (the file it held in memory let go).
          const editId = edit.ok ? edit['editId'] : '';
          let cancelled = false;
          await rt.log.scan({ stream: 'events' }, (f) => {
            const d = f.data as { editId?: string; code?: string };
            if (f.type === 'edit.failed' && d.editId === editId && d.code === 'cancelled') cancelled = true;
          });
          expect(cancelled, `round ${round}: edit ${editId} cancelled`).toBe(true);
          // Canary: more processes running than the parent's live children could hold.
          const running = sleepers();
          expect(running, `round ${round}: marked sleeps running`).toBeLessThanOrEqual(MAX_CHILDREN * PER_AGENT);
        }
      },
      120_000,
    );
  }

  attack('finished-holds', 'a write still waiting for approval when its agent completes never runs', async () => {
    ok(await rt.call('agent.spawn', { label: 'asker', agentId: 'asker' }, { agentId: 'parent' }));
    const asker = await as('asker');
    const canary = join(rt.workspace, 'late-canary.txt');
    const write = call(asker, 'asker', 'file.write', { path: 'late-canary.txt', content: 'after the end' }).catch(
      (err: Error) => err,
    );
    let requestId = '';
    for (let i = 0; i < 400 && !requestId; i++) {
      const pending = ok(await rt.call('permission.pending', {}));
      requestId = (pending['requests'] as Array<{ requestId: string }>)[0]?.requestId ?? '';
      if (!requestId) await new Promise((r) => setTimeout(r, 25));
    }
    expect(requestId).not.toBe('');
    await asker.close();
    ok(await rt.call('agent.complete', { result: 'done' }, { agentId: 'asker' }));
    const decided = await rt.call('permission.decide', { requestId, decision: 'allow_once' });
    expect(decided).toMatchObject({ ok: true, outcome: 'denied', by: 'cancelled', alreadyDecided: true });
    await write;
    // Canary: the finished agent's write ran on the late approval.
    expect(existsSync(canary)).toBe(false);
  });

  attack('finished-acts', 'a finished agent answers no ask, sets no policy, cancels or pauses nothing', async () => {
    ok(await rt.call('agent.spawn', { label: 'done', agentId: 'done' }, { agentId: 'parent' }));
    ok(await rt.call('agent.spawn', { label: 'kid', agentId: 'kid' }, { agentId: 'done' }));
    ok(await rt.call('file.write', { path: 'kid-keeps.txt', content: 'kept\n' }, { agentId: 'kid' }));
    // As a client that still holds done's subject after its end: networked mode without per-agent credentials
    // (README, Known limits; the socket and the broker revoke a finished agent's own).
    const done = (type: string, data: unknown) => rt.call(type, data, { agentId: 'done' });
    ok(await done('agent.complete', { result: 'finished' }));
    const ask = rt.call(
      'file.write',
      { path: 'late-kid.txt', content: 'approved by the finished' },
      { agentId: 'kid' },
    );
    const requestId = await firstPending(rt);
    const tries = {
      'permission.decide': { requestId, decision: 'allow_once' },
      'policy.set': { layer: 'agent', agentId: 'kid', policy: { default: 'allow' } },
      'agent.cancel': { agentId: 'kid' },
      'terminal.pause-all': {},
    };
    for (const [type, data] of Object.entries(tries)) {
      const r = await done(type, data);
      expect(r, type).toMatchObject({ ok: false, error: { code: 'invalid_state' } });
      expect(!r.ok && r.error.message, type).toContain(
        `agent 'done' has finished (completed) and may no longer ${type}`,
      );
    }
    // It still reads, and its log is still reviewed on its subjects (people and the root's host do that).
    expect(await done('agent.tree', {})).toMatchObject({ ok: true });
    expect(await done('review.list', {})).toMatchObject({ ok: true });
    expect(await done('review.accept', { paths: [join(rt.workspace, 'kid-keeps.txt')] })).toMatchObject({ ok: true });
    // Canaries: the kid runs, its file is there, its ask waits for someone who may answer.
    expect(ok(await rt.call('agent.get', {}, { agentId: 'kid' }))).toMatchObject({ status: 'running' });
    expect(existsSync(join(rt.workspace, 'kid-keeps.txt'))).toBe(true);
    expect(existsSync(join(rt.workspace, 'late-kid.txt'))).toBe(false);
    ok(await rt.call('permission.decide', { requestId, decision: 'deny_once' }, { agentId: 'parent' }));
    expect(await ask).toMatchObject({ ok: false });
  });
});
