/**
 * Issue 11, hole 14: the children limit counts live children only. A parent that spawned and cancelled
 * (or saw finish) as many children as the limit can spawn again, also after a restart; the refusal says
 * which limit was hit and which config key raises it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';
import { ok } from '../../support/replies.ts';

const LIMIT = 3;

describe('spawn limits count live children only', () => {
  let dir: string;
  let rt: TestRuntime | undefined;
  const start = async () =>
    (rt = await startTestRuntime({ mode: 'embedded', dir, flags: { domains: { agents: { maxChildren: LIMIT } } } }));
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'skein-spawn-limit-'));
  });
  afterAll(async () => {
    await rt?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses the child over the limit, naming the limit and the key that raises it', async () => {
    const r = await start();
    for (let i = 0; i < LIMIT; i++) ok(await r.call('agent.spawn', { label: `live ${i}`, agentId: `live${i}` }));
    const refused = await r.call('agent.spawn', { label: 'one too many' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'limit_exceeded' } });
    const message = refused.ok ? '' : refused.error.message;
    expect(message).toContain(`already has ${LIMIT} live (unfinished) children`);
    expect(message).toContain(`domains.agents.maxChildren = ${LIMIT}`);
    expect(message).toMatch(/raise domains\.agents\.maxChildren/);
  });

  // The issue: 64 spawns and 64 cancels, and main could never spawn again.
  it('lets a parent spawn again once children are cancelled or completed', async () => {
    const r = rt!;
    ok(await r.call('agent.cancel', { agentId: 'live0' }));
    ok(await r.call('agent.complete', { result: 'done' }, { agentId: 'live1' }));
    ok(await r.call('agent.spawn', { label: 'after cancel', agentId: 'again0' }));
    ok(await r.call('agent.spawn', { label: 'after complete', agentId: 'again1' }));
    expect(await r.call('agent.spawn', { label: 'over' })).toMatchObject({
      ok: false,
      error: { code: 'limit_exceeded' },
    });
    for (let round = 0; round < 3; round++) {
      for (const id of ['live2', 'again0', 'again1', `r${round - 1}a`, `r${round - 1}b`, `r${round - 1}c`]) {
        await r.call('agent.cancel', { agentId: id });
      }
      for (const x of ['a', 'b', 'c'])
        ok(await r.call('agent.spawn', { label: `round ${round}`, agentId: `r${round}${x}` }));
    }
  });

  it('still counts only live children after a restart', async () => {
    await rt!.dispose();
    const r = await start();
    expect(await r.call('agent.spawn', { label: 'over after restart' })).toMatchObject({
      ok: false,
      error: { code: 'limit_exceeded' },
    });
    for (const x of ['a', 'b', 'c']) ok(await r.call('agent.cancel', { agentId: `r2${x}` }));
    for (let i = 0; i < LIMIT; i++) ok(await r.call('agent.spawn', { label: `post restart ${i}` }));
  });
});
