/**
 * `skein approvals --watch` (issue 14, friction: approvals a person can answer), as real processes: an
 * embedded runtime started by `skein up`, agent calls through `skein call`, and the watcher reading its
 * answers from stdin (no TTY: one JSON line per ask). It shows the exact command, a write's content and a
 * spawn's task and policy with the exact rule "always" would learn; `y` lets the command run, `a` learns the
 * narrow rule (that file only: a sibling path still asks), `n` denies; EOF and Ctrl-C end it quietly.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn as spawnPty } from '@lydell/node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, runCli, SKEIN_BIN, startEmbeddedCli, type EmbeddedRun } from '../../support/cli.ts';

type AskLine = {
  requestId: string;
  agentId: string;
  tool: string;
  input: string;
  detail?: string;
  always: string | null;
};

let run: EmbeddedRun;

function watcher(): {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
} {
  const child = spawn(process.execPath, [SKEIN_BIN, 'approvals', '--watch', '--data', run.data], { env: cleanEnv() });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exited };
}

/** The asks the watcher printed so far (its JSON lines). */
function asksOf(out: string): AskLine[] {
  return out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as AskLine);
}

async function nextAsk(w: ReturnType<typeof watcher>, seen: number): Promise<AskLine> {
  await expect.poll(() => asksOf(w.out()).length, { timeout: 20_000 }).toBeGreaterThan(seen);
  return asksOf(w.out())[seen]!;
}

const call = async (type: string, body: unknown) => {
  const r = await runCli([
    'call',
    type,
    JSON.stringify(body),
    '--agent',
    'main',
    '--data',
    run.data,
    '--timeout',
    '60000',
  ]);
  return JSON.parse(r.stdout) as Record<string, unknown> & { ok: boolean };
};

beforeAll(async () => {
  run = await startEmbeddedCli({
    policy: {
      default: 'allow',
      tools: {
        terminal: { always_confirm: [{ pattern: '^touch\\b' }] },
        write_file: { default: 'confirm' },
        spawn_agent: { default: 'confirm' },
      },
    },
    prepare: (ws) => mkdirSync(join(ws, 'src')),
  });
}, 60_000);
afterAll(async () => run?.dispose());

describe('skein approvals --watch (real processes, answers on stdin)', () => {
  it('answers y, a and n as asks arrive; "always" learns the exact path and a sibling still asks', async () => {
    const w = watcher();
    const { terminalId } = await call('terminal.open', {});

    const exec = call('terminal.exec', { terminalId, command: 'touch ran.txt' });
    const first = await nextAsk(w, 0);
    expect(first).toMatchObject({
      agentId: 'main',
      tool: 'terminal',
      input: 'touch ran.txt',
      always: '(?-i)^touch ran\\.txt$',
    });
    expect(existsSync(join(run.workspace, 'ran.txt'))).toBe(false);
    w.child.stdin.write('y\n');
    expect(await exec).toMatchObject({ ok: true, status: 'exited', exitCode: 0 });
    expect(existsSync(join(run.workspace, 'ran.txt'))).toBe(true);

    const write = call('file.write', { path: 'src/a.txt', content: 'first line\nsecond line\n' });
    const second = await nextAsk(w, 1);
    expect(second).toMatchObject({
      tool: 'write_file',
      input: 'src/a.txt',
      detail: 'first line\nsecond line\n',
      always: '(?-i)^src/a\\.txt$',
    });
    w.child.stdin.write('a\n');
    expect(await write).toMatchObject({ ok: true });
    const policy = JSON.parse(readFileSync(join(run.workspace, '.skein', 'policy.json'), 'utf8'));
    expect(policy.tools.write_file.always_allow).toEqual([{ pattern: '(?-i)^src/a\\.txt$' }]);

    // The learned rule covers that file only: writing it again runs at once, a sibling asks.
    expect(await call('file.write', { path: 'src/a.txt', content: 'again\n' })).toMatchObject({ ok: true });
    const sibling = call('file.write', { path: 'src/b.txt', content: 'sibling\n' });
    const third = await nextAsk(w, 2);
    expect(third).toMatchObject({ tool: 'write_file', input: 'src/b.txt', always: '(?-i)^src/b\\.txt$' });
    w.child.stdin.write('what\nn\n');
    expect(await sibling).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(existsSync(join(run.workspace, 'src', 'b.txt'))).toBe(false);
    expect(w.out()).toMatch(/answer y \(allow once\), n \(deny\) or a \(always\), not "what"/);
    expect(asksOf(w.out())).toHaveLength(3);

    const spawned = call('agent.spawn', {
      label: 'helper',
      task: 'rename the helpers',
      policy: { tools: { terminal: { default: 'deny' } } },
    });
    const fourth = await nextAsk(w, 3);
    expect(fourth.tool).toBe('spawn_agent');
    expect(fourth.detail).toContain('task:\n  rename the helpers');
    expect(fourth.detail).toContain('"default": "deny"');
    w.child.stdin.write('n\n');
    expect(await spawned).toMatchObject({ ok: false, error: { code: 'permission_denied' } });

    w.child.stdin.end();
    expect(await w.exited).toBe(0);
    expect(w.err()).toBe('');
  }, 120_000);

  it('Ctrl-C while an ask waits for its answer exits quietly, leaving the request pending', async () => {
    const w = watcher();
    const { terminalId } = await call('terminal.open', {});
    const exec = call('terminal.exec', { terminalId, command: 'touch interrupted.txt' });
    const ask = await nextAsk(w, 0);
    w.child.kill('SIGINT');
    expect(await w.exited).toBe(0);
    expect(w.err()).toBe('');
    expect((await runCli(['deny', ask.requestId, '--data', run.data])).stdout).toMatch(/denied by user/);
    expect(await exec).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(existsSync(join(run.workspace, 'interrupted.txt'))).toBe(false);
  }, 60_000);

  it('on a real TTY: shows the ask as a block, prompts y / n / a, and Ctrl-C exits quietly', async () => {
    const pty = spawnPty(process.execPath, [SKEIN_BIN, 'approvals', '--watch', '--data', run.data], {
      cols: 200,
      rows: 50,
      env: cleanEnv() as Record<string, string>,
    });
    let screen = '';
    pty.onData((d) => (screen += d));
    const exited = new Promise<number>((resolve) => pty.onExit(({ exitCode }) => resolve(exitCode)));
    await expect.poll(() => screen, { timeout: 20_000 }).toContain('watching permission requests for main');
    const { terminalId } = await call('terminal.open', {});
    const exec = call('terminal.exec', { terminalId, command: 'touch on-tty.txt' });
    await expect.poll(() => screen, { timeout: 20_000 }).toContain('allow? [y]es / [n]o / [a]lways > ');
    expect(screen).toContain('  command:\r\n    │ touch on-tty.txt\r\n');
    expect(screen).toContain('  always would learn: terminal.always_allow "(?-i)^touch on-tty\\\\.txt$"');
    pty.write('y\r');
    expect(await exec).toMatchObject({ ok: true, status: 'exited', exitCode: 0 });
    expect(existsSync(join(run.workspace, 'on-tty.txt'))).toBe(true);
    await expect.poll(() => screen, { timeout: 10_000 }).toMatch(/: granted by user/);
    pty.write('\x03');
    expect(await exited).toBe(0);
    expect(screen).not.toMatch(/Error|at .*\.ts:\d+/);
  }, 60_000);
});
