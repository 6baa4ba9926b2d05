/**
 * A terminal open starts its cgroup join's grace period early (`warmJoin`, join-cost.ts), live with the per-agent
 * limits on: only once its leaves are made. A refused open (a missing cwd, an unknown shell) makes no write, so a
 * loop of refused opens cannot make the runtime take the kernel's cgroup locks (a grace period each) for nothing.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TerminalManager } from '../../../actors/terminal/terminal-manager.ts';
import { createLogger } from '../../../infra/kernel/log.ts';
import { ownCgroup } from '../../hostile/cgroup-support.ts';

const writable = ownCgroup('pids').ok && ownCgroup('memory').ok;

describe.skipIf(!writable)("a terminal open's early grace period", () => {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'skein-warm-')));
  const manager = new TerminalManager({
    config: {},
    log: createLogger({ level: 'silent' }),
    emit: async () => undefined,
    emitOutput: async () => undefined,
  });
  afterAll(async () => {
    await manager.shutdown();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('is started by an open that makes its leaves, and by no refused open', async () => {
    expect(manager.cgroups).toBeDefined();
    let warmed = 0;
    const warm = manager.cgroups!.warmJoin.bind(manager.cgroups);
    manager.cgroups!.warmJoin = (...args) => {
      warmed++;
      warm(...args);
    };
    for (let i = 0; i < 5; i++) {
      await expect(manager.open('a1', { cwd: join(workspace, 'missing') }, { workspace })).rejects.toThrow();
      await expect(manager.open('a1', { cwd: workspace, shell: 'no-such-shell' }, { workspace })).rejects.toThrow();
    }
    expect(warmed).toBe(0);
    const { terminalId } = await manager.open('a1', { cwd: workspace }, { workspace });
    expect(warmed).toBe(1);
    await manager.close('a1', { terminalId, graceMs: 0 });
  });
});
