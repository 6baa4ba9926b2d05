/**
 * The embedded data dir lives outside the workspace by default (issue 11, hole 11): `skein up` with no
 * `--data` puts log, socket and runtime.json under `$XDG_STATE_HOME/skein/<workspace id>`, owner-only, says
 * so in its banner, and the client commands run from the workspace find it by the same rule.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultDataDir, workspaceId } from '../../infra/kernel/data-dir.ts';
import { isInside } from '../../machines/common/confine.ts';
import { cleanEnv, type LongRunning, runCli, startCli } from '../support/cli.ts';

describe('default data dir (real skein up --embedded, real CLI)', () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'skein-datadir-')));
  const workspace = join(dir, 'ws');
  const state = join(dir, 'state');
  const env = cleanEnv({ XDG_STATE_HOME: state });
  const data = join(state, 'skein', workspaceId(workspace));
  let up: LongRunning;

  beforeAll(async () => {
    mkdirSync(join(workspace, '.skein'), { recursive: true });
    writeFileSync(join(workspace, '.skein', 'policy.json'), JSON.stringify({ default: 'allow' }));
    up = startCli(['up', '--embedded'], { cwd: workspace, env });
    await up.waitFor(/stop:/);
  }, 30_000);
  afterAll(async () => {
    if (up.child.exitCode === null) {
      up.child.kill('SIGTERM');
      await up.exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('puts log, socket and runtime.json outside the workspace, owner-only, and names it in the banner', () => {
    expect(up.stdout()).toContain(`data dir ${data}`);
    expect(isInside(workspace, data)).toBe(false);
    expect(existsSync(join(workspace, '.skein', 'data'))).toBe(false);
    expect(readdirSync(data).sort()).toEqual(expect.arrayContaining(['events.jsonl', 'runtime.json', 'skein.sock']));
    expect(statSync(data).mode & 0o777).toBe(0o700);
    expect(statSync(join(data, 'skein.sock')).mode & 0o777).toBe(0o600);
    expect(statSync(join(data, 'runtime.json')).mode & 0o777).toBe(0o600);
  });

  it('status, call and replay run from the workspace find the runtime by the same rule', async () => {
    const status = await runCli(['status'], { cwd: workspace, env });
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/embedded/);
    const call = await runCli(['call', 'runtime.ping'], { cwd: workspace, env });
    expect(call.stdout).toMatch(/pong/);
    const replay = await runCli(['replay'], { cwd: workspace, env });
    expect(replay.code).toBe(0);
    expect(replay.stdout).toMatch(/agent\.spawned/);
  });

  it('status and call run from a subdirectory of the workspace walk up to the runtime serving it', async () => {
    const sub = join(workspace, 'src', 'deep');
    mkdirSync(sub, { recursive: true });
    const status = await runCli(['status'], { cwd: sub, env });
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/embedded/);
    const call = await runCli(['call', 'runtime.ping'], { cwd: sub, env });
    expect(call.stdout).toMatch(/pong/);
  });

  it('a directory outside any served workspace still finds no runtime, and --data overrides the walk', async () => {
    const outside = join(dir, 'outside');
    mkdirSync(outside, { recursive: true });
    const none = await runCli(['status'], { cwd: outside, env });
    expect(none.code).not.toBe(0);
    const sub = join(workspace, 'src');
    const forced = await runCli(['status', '--data', join(dir, 'nowhere')], { cwd: sub, env });
    expect(forced.code).not.toBe(0);
    expect(forced.stdout).not.toMatch(/embedded/);
  });

  it('--data still overrides the rule', async () => {
    const elsewhere = await runCli(['status', '--data', join(dir, 'nowhere')], { cwd: workspace, env });
    expect(elsewhere.code).not.toBe(0);
  });

  it('differs per workspace, and falls back to ~/.local/state', () => {
    expect(workspaceId(workspace)).toMatch(/^ws-[0-9a-f]{12}$/);
    expect(workspaceId(join(dir, 'other', 'ws'))).not.toBe(workspaceId(workspace));
    expect(defaultDataDir(workspace, { HOME: '/home/u' })).toBe(
      join('/home/u/.local/state/skein', workspaceId(workspace)),
    );
    expect(defaultDataDir(workspace, { HOME: '/home/u', XDG_STATE_HOME: 'relative' })).toMatch(/^\/home\/u\/\.local/);
  });
});
