/**
 * The web console's users are recorded with the process that handed them out, so that a console killed or crashed
 * (which never revoked them: valid for 12 hours) has them revoked by the next console or broker start.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Authority, pidAlive } from '../../../../infra/transport/auth/authority.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function authority(): Authority {
  const dir = mkdtempSync(join(tmpdir(), 'skein-console-users-'));
  dirs.push(dir);
  return Authority.openOrCreate(join(dir, 'auth'));
}

describe('console users', () => {
  it("are orphaned once their process is gone, until revoked; another process's view agrees", async () => {
    const a = authority();
    const { userPub } = await a.browserCreds();
    expect(a.orphanedConsoleUsers()).toEqual([]);
    expect(a.orphanedConsoleUsers(() => false)).toEqual([userPub]);
    // Recorded on disk before it was handed out: a second process (the next `skein ui`) sees it.
    const other = Authority.open(a.dir)!;
    expect(other.orphanedConsoleUsers((pid) => pid !== process.pid)).toEqual([userPub]);
    await other.revokeUsers([userPub]);
    expect(a.orphanedConsoleUsers(() => false)).toEqual([]);
  });

  it('an expired one is dropped from the record, not revoked', async () => {
    const a = authority();
    await a.browserCreds(-1);
    expect(a.orphanedConsoleUsers(() => false)).toEqual([]);
  });

  it('pidAlive: this process runs, a reaped child does not', async () => {
    expect(pidAlive(process.pid)).toBe(true);
    const { spawnSync } = await import('node:child_process');
    const child = spawnSync('true');
    expect(pidAlive(child.pid!)).toBe(false);
  });
});
