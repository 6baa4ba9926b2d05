/**
 * The web console's users are recorded with the process that handed them out, so that a console killed or crashed
 * (which never revoked them: valid for 12 hours) has them revoked by the next console or broker start.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Authority } from '../../../../infra/transport/auth/authority.ts';
import { ownerGone, pidAlive, processOwner } from '../../../../infra/transport/auth/process-owner.ts';

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
    expect(a.orphanedConsoleUsers(() => true)).toEqual([userPub]);
    // Recorded on disk before it was handed out: a second process (the next `skein ui`) sees it.
    const other = Authority.open(a.dir)!;
    expect(other.orphanedConsoleUsers((c) => c.pid === process.pid)).toEqual([userPub]);
    await other.revokeUsers([userPub]);
    expect(a.orphanedConsoleUsers(() => true)).toEqual([]);
  });

  it('an expired one is dropped from the record, not revoked', async () => {
    const a = authority();
    await a.browserCreds(-1);
    expect(a.orphanedConsoleUsers(() => true)).toEqual([]);
  });

  it('pidAlive: this process runs, a reaped child does not', async () => {
    expect(pidAlive(process.pid)).toBe(true);
    const { spawnSync } = await import('node:child_process');
    const child = spawnSync('true');
    expect(pidAlive(child.pid!)).toBe(false);
  });

  // Review: a pid alone misled both ways. In a container the next console often has the dead one's pid (nothing
  // was revoked); a start in another pid namespace saw a live console as gone.
  it('an owner is gone when its pid now names another process, a zombie or nothing; not when unjudgeable', () => {
    const me = processOwner()!;
    expect(me.split('|')).toHaveLength(4);
    expect(ownerGone(process.pid, me)).toBe(false);
    const [ns, boot, pid, start] = me.split('|');
    // The same pid, started at another time: the pid was reused.
    expect(ownerGone(process.pid, `${ns}|${boot}|${pid}|${Number(start) + 1}`)).toBe(true);
    // Another pid namespace or boot cannot be judged from here: left to its expiry.
    expect(ownerGone(process.pid, `pid:[1]|${boot}|${pid}|${Number(start) + 1}`)).toBe(false);
    expect(ownerGone(process.pid, `${ns}|another-boot|${pid}|${Number(start) + 1}`)).toBe(false);
    expect(ownerGone(2 ** 22 + 17, `${ns}|${boot}|${2 ** 22 + 17}|1`)).toBe(true);
  });

  it('concurrent changes of keys.json from two processes keep every one of them', async () => {
    const a = authority();
    const { spawn } = await import('node:child_process');
    const module = new URL('../../../../infra/transport/auth/authority.ts', import.meta.url).pathname;
    const script = (kind: string) =>
      `const { Authority } = await import(${JSON.stringify(module)});` +
      `const a = Authority.open(${JSON.stringify(a.dir)});` +
      `for (let i = 0; i < 30; i++) ${kind === 'agent' ? 'await a.mintAgent(`x${i}`)' : 'await a.browserCreds()'};`;
    const run = (kind: string) =>
      new Promise<number | null>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(kind)], {
          stdio: ['ignore', 'ignore', 'inherit'],
        });
        child.on('exit', resolve);
      });
    expect(await Promise.all([run('agent'), run('console')])).toEqual([0, 0]);
    // Every user either process minted is recorded (before: invalid JSON, or users dropped).
    const after = Authority.open(a.dir)!;
    expect(after.agentsWithCreds()).toHaveLength(30);
    expect(after.orphanedConsoleUsers(() => true)).toHaveLength(30);
  });

  // CI: a runtime SIGKILLed while it changed keys.json left keys.lock behind, and the next start waited 5 s on it
  // and failed ("held by another skein process").
  it('a lock left by a process that has ended is taken over at once', async () => {
    const a = authority();
    const { spawnSync } = await import('node:child_process');
    const dead = spawnSync('true').pid!;
    writeFileSync(join(a.dir, 'keys.lock'), `${dead}\n`);
    const t0 = Date.now();
    await a.mintAgent('after-crash');
    expect(Date.now() - t0).toBeLessThan(2_000);
    expect(a.agentsWithCreds()).toContain('after-crash');
    expect(existsSync(join(a.dir, 'keys.lock'))).toBe(false);
  });
});
