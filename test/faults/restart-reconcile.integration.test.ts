/**
 * SIGKILL of a real `skein up --embedded` (`--unhandled-rejections=strict`) with work in flight: a terminal
 * running a command, a worker agent, a streaming edit left open, a permission request waiting. The next start
 * reconciles the log with what survived: the terminal is `terminal.lost`, the worker agent failed, the edit
 * `edit.abandoned`, the request denied with `host_restarted` (and the caller's retry of that command id gets
 * that denial, not a grant that does nothing); a retried write gets its original reply; the live digest equals
 * a replay of the file.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoredFact } from '../../schemas/index.ts';
import { AGGREGATES } from '../../infra/kernel/domains.ts';
import { replay } from '../../infra/kernel/replay.ts';
import { call } from '../../infra/transport/client.ts';
import { readJsonlFile } from '../../infra/transport/jsonl-log.ts';
import type { SocketBus } from '../../infra/transport/socket-bus.ts';
import { ok } from '../support/replies.ts';
import { operatorSocket } from '../support/socket.ts';
import { startHost, type HostProcess } from './fault-harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'skein-fault-restart-'));
const dataDir = join(dir, 'data');
const policy = { default: 'allow', tools: { write_file: { always_confirm: [{ pattern: '^ask/' }] } } };
let host: HostProcess | undefined;
let bus: SocketBus | undefined;

afterAll(async () => {
  await bus?.close();
  await host?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function facts(): Promise<StoredFact[]> {
  const out: StoredFact[] = [];
  for await (const f of readJsonlFile(join(dataDir, 'events.jsonl'))) out.push(f);
  return out;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const found = await probe();
    if (found !== undefined) return found;
    await sleep(100);
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('restart after SIGKILL reconciles what died with the host (embedded)', () => {
  it('closes lost terminals, fails worker agents, abandons open edits, denies pending requests', async () => {
    host = await startHost({ dir, mode: 'embedded', dataDir, policy });
    bus = await operatorSocket(dataDir);
    const c = (type: string, data: unknown, id?: string) =>
      call(bus!, 'main', type, data, { timeoutMs: 15_000, ...(id ? { id } : {}) });

    const written = ok(await c('file.write', { path: 'done.txt', content: 'done\n' }, 'write-done'));
    const { terminalId } = ok(await c('terminal.open', {}));
    const running = ok(await c('terminal.exec', { terminalId, command: 'sleep 600', yieldMs: 200 }));
    expect(running['status']).toBe('running');
    ok(await c('agent.spawn', { label: 'w', agentId: 'w', worker: { command: 'sleep', args: ['600'] } }));
    await until('the worker running', async () => {
      const got = await c('agent.get', {}).then(() => call(bus!, 'w', 'agent.get', {}, { timeoutMs: 5_000 }));
      return got.ok && got['status'] === 'running' ? true : undefined;
    });
    const { editId } = ok(await c('edit.begin', { path: 'stream.txt', mode: 'write' }));
    ok(await c('edit.input', { editId, chunk: '{"path":"stream.txt","content":"half' }));
    // Waits for a human: left pending in the log when the host dies.
    const asked = c('file.write', { path: 'ask/x.txt', content: 'x' }, 'ask-1').catch((err: Error) => err);
    const requestId = await until('the request pending', async () => {
      const pending = await c('permission.pending', {});
      const requests = pending.ok ? (pending['requests'] as Array<{ requestId: string }>) : [];
      return requests[0]?.requestId;
    });

    host.child.kill('SIGKILL');
    await host.exited;
    await bus.close();
    await asked;

    host = await startHost({ dir, mode: 'embedded', dataDir, policy });
    bus = await operatorSocket(dataDir);
    const after = await facts();
    const find = (type: string, pick: (d: Record<string, unknown>) => boolean) =>
      after.filter((f) => f.type === type && pick(f.data as Record<string, unknown>));

    expect(find('terminal.lost', (d) => d['terminalId'] === terminalId).map((f) => f.data)).toEqual([
      { terminalId, reason: 'host_restarted', commandId: running['commandId'], queued: [] },
    ]);
    const failed = find('agent.failed', (d) => d['agentId'] === 'w');
    expect(failed).toHaveLength(1);
    expect(String((failed[0]!.data as { error: string }).error)).toMatch(/^host_restarted: the worker process ended/);
    expect(find('edit.abandoned', (d) => d['editId'] === editId).map((f) => f.data)).toEqual([
      {
        editId,
        path: join(dir, 'ws', 'stream.txt'),
        reason: 'host_restarted',
        disk: 'not_written',
        diskHash: null,
        recorded: false,
        tempFilesRemoved: 0,
      },
    ]);
    const denied = find('permission.denied', (d) => d['requestId'] === requestId);
    expect(denied.map((f) => (f.data as { by: string }).by)).toEqual(['cancelled']);

    const c2 = (type: string, data: unknown, id?: string, agentId = 'main') =>
      call(bus!, agentId, type, data, { timeoutMs: 15_000, ...(id ? { id } : {}) });
    // The caller retrying its command gets the denial; approving now is "already decided", and nothing is written.
    const retried = await c2('file.write', { path: 'ask/x.txt', content: 'x' }, 'ask-1');
    expect(retried).toMatchObject({
      ok: false,
      error: { code: 'permission_denied', message: expect.stringMatching(/host_restarted/) },
    });
    const approve = ok(await c2('permission.decide', { requestId, decision: 'allow_once' }));
    expect(approve).toMatchObject({ outcome: 'denied', alreadyDecided: true });
    expect(existsSync(join(dir, 'ws', 'ask', 'x.txt'))).toBe(false);
    // A write acknowledged before the crash: its retry gets its reply, rebuilt from the log.
    const again = ok(await c2('file.write', { path: 'done.txt', content: 'done\n' }, 'write-done'));
    expect({ ...again, message: undefined }).toEqual({ ...written, message: undefined });
    // State after reconciliation: the agent failed, the terminal closed, the live digest equals a replay.
    expect(ok(await c2('agent.get', {}, undefined, 'w'))['status']).toBe('failed');
    const terminals = ok(await c2('terminal.list', {}))['terminals'] as Array<{ terminalId: string }>;
    expect(terminals.map((t) => t.terminalId)).not.toContain(terminalId);
    const status = ok(await c2('runtime.status', {}));
    expect((await replay(readJsonlFile(join(dataDir, 'events.jsonl')), AGGREGATES)).digest).toBe(status['digest']);
    expect(host.alive()).toBe(true);
  }, 120_000);
});
