/**
 * Regressions from a review of the host and its wiring: each test pins a
 * hole that was found and closed (impersonating the human, a sub-agent
 * widening its own policy, command-id collisions, a wedged aggregate after a
 * re-sent id, another agent finishing someone's streaming edit, tools used
 * after cancel, two parents spawning one id, shutdown hanging on a prompt,
 * a failed start leaving things behind).
 */
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../infra/kernel/config.ts';
import { startRuntime } from '../../../infra/kernel/runtime.ts';
import { memoryLogger } from '../../support/log-sink.ts';
import { ok } from '../../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../../support/runtime.ts';
import { tempDir } from '../../support/temp-dir.ts';

describe('hardening (embedded)', () => {
  let rt: TestRuntime;
  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      flags: { limits: { commandCacheSize: 16 } },
      policy: { default: 'allow', tools: { write_file: { always_confirm: [{ pattern: '^ask/' }] } } },
    });
    mkdirSync(join(rt.workspace, 'ask'));
    ok(await rt.call('agent.spawn', { label: 'a', agentId: 'a' }));
    ok(
      await rt.call('agent.spawn', {
        label: 'b',
        agentId: 'b',
        policy: { tools: { write_file: { always_deny: [{ pattern: '^secret' }] } } },
      }),
    );
  });
  afterAll(async () => rt?.dispose());

  it('refuses the agent id "user" (the human who answers permission requests)', async () => {
    expect(await rt.call('agent.spawn', { label: 'u', agentId: 'user' })).toMatchObject({
      ok: false,
      error: { code: 'invalid_message', message: expect.stringMatching(/'user' is reserved/) },
    });
  });

  it('does not let a sub-agent replace the policy layer its parent gave it', async () => {
    const widened = await rt.call('policy.set', { layer: 'agent', policy: { default: 'allow' } }, { agentId: 'b' });
    expect(widened).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    expect(await rt.call('file.write', { path: 'secret.txt', content: 'x' }, { agentId: 'b' })).toMatchObject({
      ok: false,
      error: { code: 'permission_denied' },
    });
    // Its parent may change it.
    ok(
      await rt.call('policy.set', {
        layer: 'agent',
        agentId: 'b',
        policy: { tools: { write_file: { always_deny: [{ pattern: '^secret' }, { pattern: '^private' }] } } },
      }),
    );
  });

  it("keeps command ids per agent: one agent's id never answers another's command", async () => {
    const mine = ok(await rt.call('agent.get', {}, { agentId: 'a', id: 'same-id' }));
    const theirs = ok(await rt.call('agent.get', {}, { agentId: 'b', id: 'same-id' }));
    expect([mine['agentId'], theirs['agentId']]).toEqual(['a', 'b']);
  });

  it('answers a command id re-sent after its reply was forgotten from the log, never running it twice', async () => {
    const first = ok(
      await rt.call('file.write', { path: 'once.txt', content: '1' }, { agentId: 'a', id: 'write-once' }),
    );
    ok(await rt.call('agent.spawn', { label: 'k', agentId: 'k' }, { agentId: 'a', id: 'spawn-once' }));
    const deny = { path: 'secret.txt', content: 'x' };
    const denied = await rt.call('file.write', deny, { agentId: 'b', id: 'denied-once' });
    expect(denied).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    for (let i = 0; i < 20; i++) ok(await rt.call('agent.get', {}, { agentId: 'a', id: `filler-${i}` }));
    const again = ok(
      await rt.call('file.write', { path: 'once.txt', content: '2' }, { agentId: 'a', id: 'write-once' }),
    );
    // The reply rebuilt from edit.applied: the same fields, a message saying where it came from.
    const { message, ...rest } = first;
    expect(again).toMatchObject(rest);
    expect(again['message']).toMatch(/already applied; the reply is rebuilt from the log/);
    expect(String(message)).toMatch(/^Created once.txt/);
    expect(readFileSync(join(rt.workspace, 'once.txt'), 'utf8')).toBe('1');
    // A denial is the answer it had.
    expect(await rt.call('file.write', deny, { agentId: 'b', id: 'denied-once' })).toEqual(denied);
    // A command whose reply cannot be rebuilt: in_doubt, naming its facts, not retryable, not run again.
    const doubt = await rt.call('agent.spawn', { label: 'k', agentId: 'k' }, { agentId: 'a', id: 'spawn-once' });
    expect(doubt).toMatchObject({
      ok: false,
      error: {
        code: 'in_doubt',
        retryable: false,
        message: expect.stringMatching(/agent.spawned on skein.evt.a.agent.k.*re-read the state it changed/),
      },
    });
    ok(await rt.call('file.write', { path: 'once.txt', content: '3' }, { agentId: 'a' }));
  });

  it("does not let another agent finish or cancel someone's streaming edit", async () => {
    const { editId } = ok(await rt.call('edit.begin', { path: 'stream.txt', mode: 'write' }, { agentId: 'a' }));
    ok(await rt.call('edit.input', { editId, chunk: '{"path":"stream.txt","content":"hello\\n"}' }, { agentId: 'a' }));
    expect(await rt.call('edit.finish', { editId }, { agentId: 'b' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
    expect(await rt.call('edit.cancel', { editId }, { agentId: 'b' })).toMatchObject({
      ok: false,
      error: { code: 'not_found' },
    });
    ok(await rt.call('edit.finish', { editId }, { agentId: 'a' }));
    const files = ok(await rt.call('review.list', {}, { agentId: 'a' }))['files'] as Array<{ path: string }>;
    expect(files.map((f) => f.path)).toContain(join(rt.workspace, 'stream.txt'));
  });

  it('refuses tool calls from a cancelled agent', async () => {
    ok(await rt.call('agent.spawn', { label: 'c', agentId: 'c' }));
    ok(await rt.call('agent.cancel', { agentId: 'c' }));
    expect(await rt.call('file.write', { path: 'late.txt', content: 'x' }, { agentId: 'c' })).toMatchObject({
      ok: false,
      error: { code: 'permission_denied', message: expect.stringMatching(/'c' is cancelled/) },
    });
    expect(existsSync(join(rt.workspace, 'late.txt'))).toBe(false);
  });

  it('lets only one of two parents spawning the same id at once have it', async () => {
    const replies = await Promise.all([
      rt.call('agent.spawn', { label: 'x', agentId: 'twin' }, { agentId: 'a' }),
      rt.call('agent.spawn', { label: 'x', agentId: 'twin' }, { agentId: 'b' }),
    ]);
    expect(replies.filter((r) => r.ok)).toHaveLength(1);
    expect(replies.filter((r) => !r.ok)).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ code: 'conflict' }) }),
    ]);
  });

  it(
    "judges a terminal's starting environment like the exports " +
      'it amounts to (PATH=evil would run any allowed name)',
    async () => {
      const strict = await startTestRuntime({
        mode: 'embedded',
        policy: { default: 'confirm', tools: { terminal: { always_allow: [{ pattern: '^git\\s+status(\\s|$)' }] } } },
      });
      try {
        const open = strict.call('terminal.open', { env: { PATH: '/tmp/evil:/usr/bin:/bin' } });
        let requests: Array<{ requestId: string; input: string; tool: string }> = [];
        await expect
          .poll(async () => (requests = ok(await strict.call('permission.pending', {}))['requests']).length, {
            timeout: 10_000,
          })
          .toBe(1);
        expect(requests[0]).toMatchObject({ tool: 'terminal', input: 'export PATH=/tmp/evil:/usr/bin:/bin' });
        ok(await strict.call('permission.decide', { requestId: requests[0]!.requestId, decision: 'deny_once' }));
        expect(await open).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
        // Without env nothing needs judging.
        ok(await strict.call('terminal.open', {}));
      } finally {
        await strict.dispose();
      }
    },
  );

  it(
    'judges a command typed over several writes as the line ' +
      'the shell runs, and an exec never runs typed leftovers',
    async () => {
      const strict = await startTestRuntime({
        mode: 'embedded',
        policy: { default: 'allow', tools: { terminal: { always_deny: [{ pattern: '^touch\\b' }] } } },
      });
      try {
        const { terminalId } = ok(await strict.call('terminal.open', {}));
        const target = join(strict.workspace, 'split.txt');
        // Typed without Enter: nothing runs yet, so nothing to judge.
        ok(await strict.call('terminal.write', { terminalId, data: `touch ${target}` }));
        // Enter completes the line: it is judged as "touch …" and denied.
        expect(await strict.call('terminal.write', { terminalId, data: '\n' })).toMatchObject({
          ok: false,
          error: { code: 'permission_denied' },
        });
        // Backspacing a harmless word into a denied one is seen too.
        ok(await strict.call('terminal.write', { terminalId, data: '\x15tou' }));
        expect(await strict.call('terminal.write', { terminalId, data: `ch ${target}\r` })).toMatchObject({
          ok: false,
          error: { code: 'permission_denied' },
        });
        // What an allowed exec types replaces the pending line instead of running after it.
        ok(await strict.call('terminal.write', { terminalId, data: `\x15touch ${target}; ` }));
        expect(ok(await strict.call('terminal.exec', { terminalId, command: 'echo fine' }))).toMatchObject({
          status: 'exited',
          exitCode: 0,
        });
        expect(existsSync(target)).toBe(false);
      } finally {
        await strict.dispose();
      }
    },
  );

  describe('second review', () => {
    let strict: TestRuntime;
    beforeAll(async () => {
      strict = await startTestRuntime({
        mode: 'embedded',
        policy: {
          default: 'confirm',
          tools: {
            terminal: {
              always_allow: [
                { pattern: '^git\\s+status(\\s|$)' },
                { pattern: '^ls\\b' },
                { pattern: '^echo\\b' },
                { pattern: '^sleep\\b' },
              ],
              always_deny: [{ pattern: '^rm\\b' }],
            },
            write_file: { always_allow: [{ pattern: '^src/' }] },
            spawn_agent: { default: 'allow' },
          },
        },
      });
      mkdirSync(join(strict.workspace, 'src'));
      mkdirSync(join(strict.workspace, 'b'));
      ok(await strict.call('agent.spawn', { label: 'b', agentId: 'b', workspace: 'b' }));
    });
    afterAll(async () => strict?.dispose());

    it('refuses commands hidden in [[ ]] / [ ] operands that bash evaluates', async () => {
      const { terminalId } = ok(await strict.call('terminal.open', {}));
      const marker = join(strict.workspace, 'hidden.txt');
      for (const command of [`ls; [[ 'a[$(touch ${marker})]' -eq 0 ]]`, `ls && [ -v 'a[$(touch ${marker})]' ]`]) {
        expect(await strict.call('terminal.exec', { terminalId, command })).toMatchObject({
          ok: false,
          error: { code: 'permission_denied' },
        });
      }
      expect(existsSync(marker)).toBe(false);
    });

    it('refuses a here-doc whose delimiter bash and the parser would end at different lines', async () => {
      const { terminalId } = ok(await strict.call('terminal.open', {}));
      const marker = join(strict.workspace, 'heredoc.txt');
      const command = `ls >/dev/null <<E"O"F\nEOF\ntouch ${marker}\nE"O"F`;
      expect(await strict.call('terminal.exec', { terminalId, command })).toMatchObject({
        ok: false,
        error: { code: 'permission_denied' },
      });
      expect(existsSync(marker)).toBe(false);
    });

    it('judges lines typed ahead while an allowed command runs as shell input', async () => {
      const { terminalId } = ok(await strict.call('terminal.open', {}));
      expect(ok(await strict.call('terminal.exec', { terminalId, command: 'sleep 2', yieldMs: 100 }))['status']).toBe(
        'running',
      );
      const marker = join(strict.workspace, 'ahead.txt');
      const ahead = strict.call('terminal.write', { terminalId, data: `touch ${marker}\n` });
      let requests: Array<{ requestId: string; tool: string }> = [];
      await expect
        .poll(async () => (requests = ok(await strict.call('permission.pending', {}))['requests']).length, {
          timeout: 10_000,
        })
        .toBe(1);
      ok(await strict.call('permission.decide', { requestId: requests[0]!.requestId, decision: 'deny_once' }));
      expect(await ahead).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
      await strict.call('terminal.wait', { terminalId, timeoutMs: 10_000 });
      expect(existsSync(marker)).toBe(false);
    });

    it('refuses to finish a streamed write whose directory became a symlink out of the workspace', async () => {
      const outside = join(strict.dir, 'outside');
      mkdirSync(outside);
      const { editId } = ok(await strict.call('edit.begin', { path: 'src/evil.txt', mode: 'write' }));
      renameSync(join(strict.workspace, 'src'), join(strict.workspace, 'src.old'));
      symlinkSync(outside, join(strict.workspace, 'src'));
      ok(await strict.call('edit.input', { editId, chunk: '{"path":"src/evil.txt","content":"x"}' }));
      expect(await strict.call('edit.finish', { editId })).toMatchObject({
        ok: false,
        // Judged again at finish (the gate's walk), or caught by the finish's own resolve.
        error: {
          code: 'permission_denied',
          message: expect.stringMatching(/outside the agent's workspace|no longer resolves/),
        },
      });
      expect(existsSync(join(outside, 'evil.txt'))).toBe(false);
    });

    it("keeps a sub-agent's terminals inside its workspace and its shell a system one", async () => {
      expect(await strict.call('terminal.open', { cwd: '..' }, { agentId: 'b' })).toMatchObject({
        ok: false,
        error: { code: 'permission_denied', message: expect.stringMatching(/outside the agent's workspace/) },
      });
      expect(await strict.call('terminal.open', { cwd: '/' }, { agentId: 'b' })).toMatchObject({
        ok: false,
        error: { code: 'permission_denied' },
      });
      expect(await strict.call('terminal.open', { shell: './bash' }, { agentId: 'b' })).toMatchObject({
        ok: false,
        error: { code: 'permission_denied' },
      });
      ok(await strict.call('terminal.open', {}, { agentId: 'b' }));
    });
  });

  it('stops within seconds while a permission prompt is pending', async () => {
    const other = await startTestRuntime({ mode: 'embedded', policy: { default: 'confirm' } });
    const pending = other.call('file.write', { path: 'x.txt', content: 'x' }).catch(() => undefined);
    await expect
      .poll(async () => (ok(await other.call('permission.pending', {}))['requests'] as unknown[]).length, {
        timeout: 10_000,
      })
      .toBe(1);
    const t0 = Date.now();
    await other.dispose();
    expect(Date.now() - t0).toBeLessThan(8_000);
    void pending;
  });

  it('leaves nothing behind when start-up fails (a broken project policy)', async () => {
    const dir = tempDir('skein-badstart-');
    try {
      const workspace = join(dir.path, 'ws');
      mkdirSync(join(workspace, '.skein'), { recursive: true });
      writeFileSync(
        join(workspace, '.skein', 'policy.json'),
        JSON.stringify({ tools: { terminal: { always_allow: [{ patern: 'x' }] } } }),
      );
      const config = loadConfig({
        cwd: dir.path,
        env: {},
        flags: {
          mode: 'embedded',
          dataDir: join(dir.path, 'data'),
          workspace,
          logLevel: 'silent',
          domains: { permission: { globalPolicy: join(dir.path, 'none.json') } },
        },
      });
      await expect(startRuntime(config, memoryLogger('silent').logger)).rejects.toThrow(/patern|policy/);
      expect(existsSync(join(dir.path, 'data', 'skein.sock'))).toBe(false);
      expect(existsSync(join(dir.path, 'data', 'runtime.json'))).toBe(false);
    } finally {
      dir.dispose();
    }
  });
});
