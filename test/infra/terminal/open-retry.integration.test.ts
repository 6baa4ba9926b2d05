/**
 * A retried `terminal.open` (same command id, after a lost reply or a host restart) never opens a second
 * terminal: it gets the first reply, rebuilt from `terminal.opened` while that terminal is open, or
 * `in_doubt` naming it once it is gone. Real hosts (embedded, and a private nats-server), real PTYs.
 * Issue 13: "Idempotent retries across crashes".
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredFact } from '../../../schemas/index.ts';
import { ok } from '../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';
import { tempDir } from '../../support/temp-dir.ts';

async function facts(rt: TestRuntime, type: string): Promise<StoredFact[]> {
  const out: StoredFact[] = [];
  for await (const f of rt.log.read()) if (f.type === type) out.push(f);
  return out;
}

async function openIds(rt: TestRuntime): Promise<string[]> {
  const listed = ok(await rt.call('terminal.list', {}))['terminals'] as Array<{ terminalId: string }>;
  return listed.map((t) => t.terminalId);
}

const running: TestRuntime[] = [];
const dirs: Array<{ dispose(): void }> = [];
afterEach(async () => {
  for (const rt of running.splice(0)) await rt.dispose();
  for (const d of dirs.splice(0)) d.dispose();
});

async function start(mode: 'embedded' | 'private', dir: string): Promise<TestRuntime> {
  const rt = await startTestRuntime({ mode, dir, flags: { limits: { commandCacheSize: 16 } } });
  running.push(rt);
  return rt;
}

describe.each(['embedded', 'private'] as const)('terminal.open retried with the same id (%s)', (mode) => {
  it('answers concurrent and later repeats with the first terminal, also once the reply cache forgot it', async () => {
    const dir = tempDir('skein-open-retry-');
    dirs.push(dir);
    const rt = await start(mode, dir.path);
    const [a, b] = await Promise.all([
      rt.call('terminal.open', { cols: 70 }, { id: 'open-1' }),
      rt.call('terminal.open', { cols: 70 }, { id: 'open-1' }),
    ]);
    const first = ok(a);
    expect(ok(b)).toEqual(first);
    // Past the reply cache (16 commands): the reply is rebuilt from terminal.opened.
    for (let i = 0; i < 20; i++) ok(await rt.call('agent.get', {}, { id: `filler-${i}` }));
    expect(ok(await rt.call('terminal.open', { cols: 70 }, { id: 'open-1' }))).toEqual(first);
    const opened = await facts(rt, 'terminal.opened');
    expect(opened.map((f) => [f.data, f.causationId])).toEqual([
      [expect.objectContaining({ terminalId: first['terminalId'], cols: 70 }), 'open-1'],
    ]);
    expect(await openIds(rt)).toEqual([first['terminalId']]);
    // The terminal it names is the live one.
    const r = ok(await rt.call('terminal.exec', { terminalId: first['terminalId'], command: 'echo still-one' }));
    expect(r['output']).toBe('still-one\n');
  });

  it('answers a repeat after a host restart with in_doubt naming the lost terminal, opening nothing', async () => {
    const dir = tempDir('skein-open-retry-');
    dirs.push(dir);
    const before = await start(mode, dir.path);
    const first = ok(await before.call('terminal.open', {}, { id: 'open-r' }));
    await before.stop();
    running.splice(running.indexOf(before), 1);

    const after = await start(mode, dir.path);
    const retried = await after.call('terminal.open', {}, { id: 'open-r' });
    expect(retried).toMatchObject({
      ok: false,
      error: {
        code: 'in_doubt',
        retryable: false,
        message: expect.stringContaining(
          `command id 'open-r' already opened terminal '${first['terminalId']}', which is closed now`,
        ),
        details: { terminalId: first['terminalId'] },
      },
    });
    expect(await openIds(after)).toEqual([]);
    expect((await facts(after, 'terminal.opened')).map((f) => f.data)).toEqual([
      expect.objectContaining({ terminalId: first['terminalId'] }),
    ]);
    // A new id opens a new terminal as usual.
    const fresh = ok(await after.call('terminal.open', {}, { id: 'open-r2' }));
    expect(fresh['terminalId']).not.toBe(first['terminalId']);
  });
});
