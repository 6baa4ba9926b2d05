/**
 * Input typed faster than a program reads it. node-pty's write to the PTY spun on the host's thread until the
 * kernel took every byte: an agent typing 200 KB into its own slow reader froze every agent's commands until
 * that reader had read most of it (minutes). Now a write takes what the kernel takes and queues the rest, held
 * to `domains.terminal.maxPendingInputBytes`; the queue dies with its terminal (a PTY descriptor reused by the
 * next terminal never gets the old input).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { call } from '../../infra/transport/client.ts';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { agentSockets, attack, reportAttacks, ALL_BUT_TOUCH_POLICY } from './support.ts';

const LIMIT = 256 * 1024;
const CANARY = 'UNREAD-INPUT-CANARY';
/** 200 lines of 1,000 bytes: past what the kernel buffers (~68 KB), under the limit. */
const flood = Array.from({ length: 200 }, (_, i) => `${CANARY}-${i}-${'y'.repeat(970)}`.slice(0, 999)).join('\n');

let rt: TestRuntime;
const sockets = agentSockets(() => rt);
const as = sockets.as;

beforeAll(async () => {
  rt = await startTestRuntime({
    mode: 'embedded',
    // Input is what is attacked here, not the gate: every line typed is allowed.
    // (`touch` is denied as a command: the canary of input that reaches the prompt unjudged.)
    policy: ALL_BUT_TOUCH_POLICY,
    flags: { domains: { terminal: { maxPendingInputBytes: LIMIT } } },
  });
  ok(await rt.call('agent.spawn', { label: 'typist', agentId: 'typist' }));
  ok(await rt.call('agent.spawn', { label: 'bystander', agentId: 'bystander' }));
}, 60_000);
afterAll(async () => {
  await sockets.closeAll();
  await rt?.dispose();
});
reportAttacks('input-stall');

/** Types `data` in calls of at most 50 lines (the gate judges at most 65,536 characters of input at once). */
async function typeAll(agentId: string, terminalId: string, data: string): Promise<number> {
  const agent = await as(agentId);
  const all = data.split('\n');
  let bytes = 0;
  for (let i = 0; i < all.length; i += 50) {
    const part = `${all.slice(i, i + 50).join('\n')}\n`;
    const r = ok(await call(agent, agentId, 'terminal.write', { terminalId, data: part }, { timeoutMs: 30_000 }));
    bytes += r['bytes'] as number;
  }
  return bytes;
}

/** A terminal of `agentId` running a reader that takes one line every 0.2 s, counting them in `count`. */
async function slowReader(agentId: string, count: string): Promise<string> {
  const agent = await as(agentId);
  const { terminalId } = ok(await call(agent, agentId, 'terminal.open', {}, { timeoutMs: 30_000 })) as {
    terminalId: string;
  };
  const command = `while read -r l; do echo . >> ${count}; sleep 0.2; done`;
  expect(await call(agent, agentId, 'terminal.exec', { terminalId, command, yieldMs: 0 })).toMatchObject({
    ok: true,
    status: 'running',
  });
  return terminalId;
}

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').length - 1;

describe('hostile: input a program does not read', { timeout: 120_000 }, () => {
  attack('input-stall', 'input left unwritten when its program exits never runs at the prompt', async () => {
    const typist = await as('typist');
    const { terminalId } = ok(await call(typist, 'typist', 'terminal.open', {}, { timeoutMs: 30_000 })) as {
      terminalId: string;
    };
    // Key mode: the kernel holds what it takes, and the rest waits in the host until the program exits (6 s: a
    // loaded machine judges the four writes of 45 KB in seconds, and they must all reach sleep, not the prompt).
    const command = 'stty -icanon; echo keys; sleep 6; stty icanon';
    ok(await call(typist, 'typist', 'terminal.exec', { terminalId, command, yieldMs: 0 }));
    // Written once the terminal reads keys: judged as input to `sleep`, which reads none of it.
    await expect
      .poll(async () => {
        const r = await call(typist, 'typist', 'terminal.read', { terminalId, cursor: 0 });
        return r.ok && /^keys/m.test(String(r['output']));
      })
      .toBe(true);
    const canary = join(rt.workspace, 'ran-at-prompt');
    const line = `touch ${canary}; ${'#'.repeat(900)}`;
    const lines = Array.from({ length: 200 }, () => line).join('\n');
    await typeAll('typist', terminalId, lines);
    const next = { terminalId, command: 'echo clean-run', timeoutMs: 20_000 };
    const r = ok(await call(typist, 'typist', 'terminal.exec', next, { timeoutMs: 30_000 }));
    expect(r['output']).toContain('clean-run');
    await new Promise((res) => setTimeout(res, 500));
    // Canary: a line typed for the program ran at the shell's prompt, unjudged (touch is denied).
    expect(existsSync(canary)).toBe(false);
    ok(await call(typist, 'typist', 'terminal.close', { terminalId }));
  });

  attack('input-stall', "200 KB typed into a slow reader stalls no one else's commands", async () => {
    const count = join(rt.workspace, 'read-count');
    const terminalId = await slowReader('typist', count);
    const typist = await as('typist');
    const written = typeAll('typist', terminalId, flood);
    // Another agent's command runs while the reader has read only a few of the 200 lines.
    const bystander = await as('bystander');
    const open = ok(await call(bystander, 'bystander', 'terminal.open', {}, { timeoutMs: 15_000 }));
    const echo = { terminalId: open['terminalId'], command: 'echo alive', timeoutMs: 15_000 };
    const r = await call(bystander, 'bystander', 'terminal.exec', echo, { timeoutMs: 15_000 });
    expect(r).toMatchObject({ ok: true, exitCode: 0 });
    expect(await written).toBe(flood.length + 1);
    // Canary: the host's thread waited for the reader (it had read most of the lines by then).
    expect(lines(count)).toBeLessThan(50);
    ok(await call(typist, 'typist', 'terminal.close', { terminalId }));
  });

  attack('input-stall', `more unread input than maxPendingInputBytes (${LIMIT}) is refused`, async () => {
    const typist = await as('typist');
    const { terminalId } = ok(await call(typist, 'typist', 'terminal.open', {}, { timeoutMs: 30_000 })) as {
      terminalId: string;
    };
    // Reads nothing at all until interrupted.
    const command = 'sleep 600';
    ok(await call(typist, 'typist', 'terminal.exec', { terminalId, command, yieldMs: 0 }));
    const chunk = `${'z'.repeat(4000)}\n`.repeat(8); // 32 KB a call
    const replies = [];
    for (let i = 0; i < 24; i++) {
      replies.push(await call(typist, 'typist', 'terminal.write', { terminalId, data: chunk }, { timeoutMs: 30_000 }));
    }
    const taken = replies.filter((r) => r.ok).length;
    // Canary: more than the limit plus what the kernel holds was taken into memory.
    expect(taken * chunk.length).toBeLessThanOrEqual(LIMIT + 80 * 1024);
    const refused = replies.filter((r) => !r.ok);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
      expect(!r.ok && r.error.message).toContain(`domains.terminal.maxPendingInputBytes = ${LIMIT}`);
    }
    ok(await call(typist, 'typist', 'terminal.close', { terminalId }));
  });

  attack(
    'input-stall',
    "input left unread when its terminal closes never reaches the next terminal's program",
    async () => {
      const count = join(rt.workspace, 'read-count-2');
      const first = await slowReader('typist', count);
      const typist = await as('typist');
      await typeAll('typist', first, flood);
      ok(await call(typist, 'typist', 'terminal.close', { terminalId: first }));
      // The next terminals likely get the same descriptor number: each records whatever reaches its input.
      const got = join(rt.workspace, 'next-input');
      const opened = [];
      for (let i = 0; i < 3; i++) {
        const { terminalId } = ok(await call(typist, 'typist', 'terminal.open', {}, { timeoutMs: 30_000 })) as {
          terminalId: string;
        };
        const exec = { terminalId, command: `timeout 2 cat >> ${got}; true`, timeoutMs: 10_000 };
        opened.push(call(typist, 'typist', 'terminal.exec', exec, { timeoutMs: 20_000 }));
      }
      for (const r of await Promise.all(opened)) expect(r).toMatchObject({ ok: true });
      let text = '';
      try {
        text = readFileSync(got, 'utf8');
      } catch {
        // Nothing reached any of them: the file was never written.
      }
      expect(text).not.toContain(CANARY);
    },
  );
});
