/**
 * Real PTYs: resize, full-screen programs on the headless screen, input
 * awaited, control keys and signals, pause/resume, teardown of stubborn
 * children, limits and bad input.
 */
import { existsSync, stat, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { isAlive, readStat } from '../../../actors/terminal/terminal-proc.ts';
import { terminalHarness } from '../../support/terminal-harness.ts';

let h: ReturnType<typeof terminalHarness>;
beforeEach(() => {
  h = terminalHarness({ interruptGraceMs: 300, closeGraceMs: 300, inputQuietMs: 200, pollMs: 50 });
});
afterEach(async () => {
  await h.dispose();
});

const A = 'a1';
/** How long to wait for a program in a terminal to draw (vitest's default, 1 s, is short on a loaded machine). */
const PROCESS_WAIT = { timeout: 10_000 };
const screenOf = async (terminalId: string) => (await h.manager.read(A, { terminalId, screen: true })).screen!;

describe('TerminalManager: resize and full-screen programs', () => {
  it('resizes the pty (stty size sees it), the screen, and records terminal.resized', async () => {
    const { terminalId } = await h.open(A, { cols: 100, rows: 30 });
    expect((await h.manager.exec(A, { terminalId, command: 'stty size' })).output).toBe('30 100\n');
    expect(await h.manager.resize(A, { terminalId, cols: 120, rows: 40 })).toEqual({ terminalId, cols: 120, rows: 40 });
    expect((await h.manager.exec(A, { terminalId, command: 'stty size' })).output).toBe('40 120\n');
    expect(await screenOf(terminalId)).toMatchObject({ cols: 120, rows: 40 });
    expect(h.factsOf(terminalId).find((f) => f.type === 'terminal.resized')!.data).toMatchObject({
      cols: 120,
      rows: 40,
    });
  });

  it('shows less on the alternate screen and quits it with "q"', async () => {
    const { terminalId } = await h.open();
    writeFileSync(join(h.workspace, 'f.txt'), Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join('\n'));
    const r = await h.manager.exec(A, { terminalId, command: 'less f.txt', yieldMs: 300 });
    expect(r.status === 'running' || r.status === 'input_required').toBe(true);
    await vi.waitFor(async () => {
      const s = await screenOf(terminalId);
      expect(s.buffer).toBe('alternate');
      expect(s.lines.slice(0, 3)).toEqual(['row 1', 'row 2', 'row 3']);
    }, PROCESS_WAIT);
    await h.manager.write(A, { terminalId, data: 'q' });
    const done = await h.manager.wait(A, { terminalId });
    expect(done).toMatchObject({ status: 'exited', exitCode: 0 });
    expect((await screenOf(terminalId)).buffer).toBe('normal');
    expect(
      h.output.some(
        (f) =>
          f.data.terminalId === terminalId &&
          f.data.sequences.some((s: { kind: string }) => s.kind === 'alt-screen-on'),
      ),
    ).toBe(true);
  });

  it('runs vi, shows the file, and quits with :q!', async () => {
    const { terminalId } = await h.open();
    writeFileSync(join(h.workspace, 'v.txt'), 'hello from vi\n');
    await h.manager.exec(A, { terminalId, command: 'vi -u NONE -N v.txt', yieldMs: 300 });
    await vi.waitFor(async () => {
      const s = await screenOf(terminalId);
      expect(s.lines[0]).toBe('hello from vi');
      expect(s.lines[1]).toMatch(/^~/);
    }, PROCESS_WAIT);
    await h.manager.write(A, { terminalId, data: '\x1b:q!\r' });
    expect(await h.manager.wait(A, { terminalId })).toMatchObject({ status: 'exited', exitCode: 0 });
  });
});

describe('TerminalManager: waiting for input', () => {
  it('reports input_required for read -p, with the prompt line, and finishes after the answer', async () => {
    const { terminalId } = await h.open();
    const r = await h.manager.exec(A, { terminalId, command: "read -p 'Continue? [Y/n] ' ans; echo answer=$ans" });
    expect(r).toMatchObject({ status: 'input_required', prompt: 'Continue? [Y/n]', exitCode: null });
    expect(
      h
        .factsOf(terminalId)
        .filter((f) => f.type === 'terminal.input.awaited')
        .map((f) => f.data.prompt),
    ).toEqual(['Continue? [Y/n]']);
    expect(await h.manager.write(A, { terminalId, data: 'y\n' })).toEqual({ terminalId, bytes: 2 });
    expect(await h.manager.wait(A, { terminalId })).toMatchObject({
      status: 'exited',
      output: 'Continue? [Y/n] y\nanswer=y\n',
    });
  });

  it('detects a password prompt in a child process and keeps a secret answer out of the log', async () => {
    const { terminalId } = await h.open();
    const r = await h.manager.exec(A, {
      terminalId,
      command: `bash -c "read -s -p 'Password: ' pw; echo; echo len=\\\${#pw}"`,
    });
    expect(r).toMatchObject({ status: 'input_required', prompt: 'Password:' });
    await h.manager.write(A, { terminalId, data: 'hunter2\n', secret: true });
    expect(await h.manager.wait(A, { terminalId })).toMatchObject({ status: 'exited', output: 'Password: \nlen=7\n' });
    expect(h.factsOf(terminalId).find((f) => f.type === 'terminal.input.written')!.data).toEqual({
      terminalId,
      bytes: 8,
      data: null,
    });
  });

  it('keeps input to a no-echo prompt out of the log even without secret: true', async () => {
    const { terminalId } = await h.open();
    const r = await h.manager.exec(A, {
      terminalId,
      command: `bash -c "read -s -p 'Token: ' t; echo; echo got=\\\${#t}"`,
    });
    expect(r).toMatchObject({ status: 'input_required', prompt: 'Token:' });
    await h.manager.write(A, { terminalId, data: 's3cr3t\n' });
    expect(await h.manager.wait(A, { terminalId })).toMatchObject({ status: 'exited', output: 'Token: \ngot=6\n' });
    const written = h.factsOf(terminalId).filter((f) => f.type === 'terminal.input.written');
    expect(written.map((f) => f.data)).toEqual([{ terminalId, bytes: 7, data: null }]);
    // Echo on again at the prompt: ordinary input is recorded.
    await h.manager.write(A, { terminalId, data: 'x' });
    expect(
      h
        .factsOf(terminalId)
        .filter((f) => f.type === 'terminal.input.written')
        .at(-1)!.data,
    ).toEqual({ terminalId, bytes: 1, data: 'x' });
  });
});

describe('TerminalManager: waiting for input on /dev/tty', () => {
  it('detects a prompt read from /dev/tty while stdin is a pipe (like git asking for a password)', async () => {
    const { terminalId } = await h.open();
    const r = await h.manager.exec(A, {
      terminalId,
      command: `echo data | bash -c "exec 3</dev/tty; read -u 3 -p 'Username: ' u; echo user=\\$u"`,
    });
    expect(r).toMatchObject({ status: 'input_required', prompt: 'Username:' });
    await h.manager.write(A, { terminalId, data: 'me\n' });
    expect((await h.manager.wait(A, { terminalId })).output).toBe('Username: me\nuser=me\n');
  });

  it('takes the prompt the reader wrote before it blocked, even when the host reads it late (busy host)', async () => {
    const { terminalId } = await h.open();
    const reply = h.manager.exec(A, {
      terminalId,
      command: `sleep 0.4; bash -c "exec 3</dev/tty; read -u 3 -p 'Username: ' u; echo user=\\$u"`,
    });
    await sleep(150);
    // The host's thread held from an I/O callback while the command prints its prompt and blocks: the next turn's
    // timers (the input poll) come before the read of that prompt. CI saw this under load: the prompt given was
    // the echoed command line.
    await new Promise<void>((resolve) =>
      stat('/', () => {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1_200);
        resolve();
      }),
    );
    expect(await reply).toMatchObject({ status: 'input_required', prompt: 'Username:' });
    const awaited = h.factsOf(terminalId).filter((f) => f.type === 'terminal.input.awaited');
    expect(awaited.map((f) => (f.data as { prompt: string }).prompt)).toEqual(['Username:']);
    await h.manager.write(A, { terminalId, data: 'me\n' });
    expect((await h.manager.wait(A, { terminalId })).output).toBe('Username: me\nuser=me\n');
  });
});

describe('TerminalManager: control keys, signals, pause', () => {
  it('interrupts with Ctrl-C written as input', async () => {
    const { terminalId } = await h.open();
    expect((await h.manager.exec(A, { terminalId, command: 'sleep 30', yieldMs: 100 })).status).toBe('running');
    await h.manager.write(A, { terminalId, data: '\u0003' });
    expect(await h.manager.wait(A, { terminalId })).toMatchObject({
      status: 'exited',
      exitCode: 130,
      signal: 'SIGINT',
    });
  });

  it('signals the foreground process group', async () => {
    const { terminalId } = await h.open();
    await h.manager.exec(A, { terminalId, command: 'sleep 30', yieldMs: 100 });
    const sent = await h.manager.signal(A, { terminalId, signal: 'TERM' });
    expect(sent.signal).toBe('SIGTERM');
    expect(readStat(sent.pgid)?.comm ?? 'gone').toMatch(/sleep|gone/);
    expect(await h.manager.wait(A, { terminalId })).toMatchObject({ exitCode: 143, signal: 'SIGTERM' });
    expect(h.types(terminalId)).toContain('terminal.signalled');
  });

  it('pauses (SIGSTOP) and resumes (SIGCONT) the running command; the shell does not take it over', async () => {
    const { terminalId } = await h.open();
    await h.manager.exec(A, {
      terminalId,
      // Ticks until the test makes the file `stop`: it cannot end before the pause however slow the machine.
      command: 'i=0; until [ -e stop ]; do i=$((i+1)); echo tick $i; sleep 0.05; done; echo ended',
      yieldMs: 100,
    });
    const paused = await h.manager.pauseAll(A);
    expect(paused.terminalIds).toEqual([terminalId]);
    const pgid = h.factsOf(terminalId).find((f) => f.type === 'terminal.paused')!.data.pgid;
    const shellPid = h.manager.get(terminalId)!.shellPid;
    expect(readStat(shellPid)?.state).toBe('T');
    // The named group is stopped; it is a zombie only if its `sleep` ended in the instant between the
    // shell's stop and the group's (the stopped shell cannot reap it); it is never gone.
    expect(['T', 'Z']).toContain(readStat(pgid)?.state);
    // Nothing more is printed while paused: once what was already printed has been read (the output the same
    // over 150 ms), it stays the same.
    let before = h.rawOutput(terminalId);
    for (let settled = false, t0 = Date.now(); !settled && Date.now() - t0 < 5_000; ) {
      await new Promise((r) => setTimeout(r, 150));
      settled = h.rawOutput(terminalId) === before;
      before = h.rawOutput(terminalId);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(h.rawOutput(terminalId)).toBe(before);
    const ticks = (out: string) => Math.max(0, ...[...out.matchAll(/tick (\d+)/g)].map((m) => Number(m[1])));
    expect((await h.manager.resumeAll(A)).terminalIds).toEqual([terminalId]);
    // Resumed, it ticks on; then it is told to end.
    await expect.poll(() => ticks(h.rawOutput(terminalId)), { timeout: 10_000 }).toBeGreaterThan(ticks(before));
    writeFileSync(join(h.workspace, 'stop'), '');
    const done = await h.manager.wait(A, { terminalId });
    expect(done).toMatchObject({ status: 'exited', exitCode: 0 });
    expect(done.output).toContain('ended');
    expect(h.types(terminalId)).toEqual(expect.arrayContaining(['terminal.paused', 'terminal.resumed']));
  });
  it('pauses a loop of short-lived jobs: the group it names is the one it stopped, never a gone one', async () => {
    const { terminalId } = await h.open();
    // Each /bin/true is a job of its own, living well under a millisecond: the foreground group changes
    // hundreds of times a second, so a group read before the shell stops is usually gone by the SIGSTOP.
    await h.manager.exec(A, { terminalId, command: 'while [ ! -e stop ]; do /bin/true; done', yieldMs: 100 });
    const shellPid = h.manager.get(terminalId)!.shellPid;
    for (let round = 0; round < 10; round++) {
      expect((await h.manager.pauseAll(A)).terminalIds).toEqual([terminalId]);
      const pgid = h
        .factsOf(terminalId)
        .filter((f) => f.type === 'terminal.paused')
        .at(-1)!.data.pgid;
      expect(readStat(shellPid)?.state).toBe('T');
      expect(['T', 'Z']).toContain(readStat(pgid)?.state);
      expect((await h.manager.resumeAll(A)).terminalIds).toEqual([terminalId]);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Still running after ten pauses: it ends when asked (a Ctrl-C can be lost by bash between jobs).
    writeFileSync(join(h.workspace, 'stop'), '');
    expect(await h.manager.wait(A, { terminalId })).toMatchObject({ status: 'exited', exitCode: 0 });
  });
});

describe('TerminalManager: teardown and limits', () => {
  it('kills a child that ignores HUP and TERM on close, leaving no process or zombie', async () => {
    const { terminalId, pid } = await h.open();
    await h.manager.exec(A, { terminalId, command: `(trap '' HUP TERM; exec sleep 1000) & echo bg=$!` });
    await h.manager.exec(A, {
      terminalId,
      command: `bash -c "trap '' HUP TERM INT; echo tra''pped; sleep 1000"`,
      yieldMs: 100,
    });
    // Closed only once the traps are set: on a loaded machine the HUP came first and ended it (exit 129).
    const trapped = async () => expect((await screenOf(terminalId)).lines.join('\n')).toContain('trapped');
    await vi.waitFor(trapped, PROCESS_WAIT);
    const members = h.manager.get(terminalId)!.members();
    expect(members.length).toBeGreaterThanOrEqual(3);
    const closed = await h.manager.close(A, { terminalId });
    expect(closed.terminalId).toBe(terminalId);
    await vi.waitFor(() => expect([pid, ...members].filter((p) => readStat(p) !== undefined)).toEqual([]));
    expect(members.every((p) => !isAlive(p))).toBe(true);
    const last = h.factsOf(terminalId).at(-1)!;
    expect(last).toMatchObject({ type: 'terminal.closed', data: { terminalId, reason: 'requested' } });
    // The stubborn foreground command was SIGKILLed while the shell lived, so its status was recorded.
    expect(
      h
        .factsOf(terminalId)
        .filter((f) => f.type === 'terminal.command.finished')
        .at(-1)!.data,
    ).toMatchObject({ commandId: 'c-2', exitCode: 137, signal: 'SIGKILL' });
    await expect(h.manager.exec(A, { terminalId, command: 'true' })).rejects.toThrow(
      `Terminal '${terminalId}' is closed; open a new one with terminal.open.`,
    );
  });

  it("records the shell exiting by itself as closed (exited) and closes all of an agent's terminals", async () => {
    const t1 = await h.open();
    await expect(h.manager.exec(A, { terminalId: t1.terminalId, command: 'exit 4' })).rejects.toThrow(
      /did not finish: terminal exited/,
    );
    await vi.waitFor(() =>
      expect(h.factsOf(t1.terminalId).at(-1)).toMatchObject({
        type: 'terminal.closed',
        data: { exitCode: 4, reason: 'exited' },
      }),
    );
    const t2 = await h.open('a2');
    const t3 = await h.open('a2');
    expect((await h.manager.closeAllForAgent('a2')).sort()).toEqual([t2.terminalId, t3.terminalId].sort());
    expect(h.manager.size).toBe(0);
  });

  it('refuses beyond maxPerAgent/maxPerHost and closes idle terminals', async () => {
    const small = terminalHarness({ maxPerAgent: 1, maxPerHost: 2, idleTimeoutMs: 400 });
    try {
      const t = await small.open('x');
      await expect(small.open('x')).rejects.toThrow(
        "Agent 'x' already has 1 terminals (maxPerAgent 1); close one with terminal.close first.",
      );
      await small.open('y');
      await expect(small.open('z')).rejects.toThrow(
        'This host already runs 2 terminals (maxPerHost 2); close some or use another host.',
      );
      await vi.waitFor(
        () =>
          expect(small.factsOf(t.terminalId).at(-1)).toMatchObject({
            type: 'terminal.closed',
            data: { reason: 'idle' },
          }),
        { timeout: 5000 },
      );
    } finally {
      await small.dispose();
    }
  });

  it('applies prlimit memory limits to the shell', async () => {
    const limited = terminalHarness({ memoryLimitBytes: 512 * 1024 * 1024 });
    try {
      const { terminalId } = await limited.open();
      expect((await limited.manager.exec(A, { terminalId, command: 'ulimit -v' })).output).toBe(`${512 * 1024}\n`);
    } finally {
      await limited.dispose();
    }
  });
});

describe('TerminalManager: bad input', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['zero cols', { cols: 0 }, /Invalid terminal\.open data \(cols: Too small: expected number to be >=2\)/],
    ['negative rows', { rows: -3 }, /rows: Too small/],
    ['huge cols', { cols: 100000 }, /cols: Too big: expected number to be <=1000/],
    [
      'missing cwd',
      { cwd: '/nonexistent/dir' },
      /cwd '\/nonexistent\/dir' does not exist; create it first or pass an existing directory\./,
    ],
    ['cwd that is a file', { cwd: '/etc/hostname' }, /cwd '\/etc\/hostname' is not a directory; pass a directory\./],
    ['env with a number', { env: { N: 1 } }, /env\.N: Invalid input: expected string, received number/],
    ['shell not found', { shell: 'no-such-shell' }, /Shell 'no-such-shell' was not found on PATH/],
    ['unsupported shell', { shell: 'dash' }, /Shell 'dash' has no skein shell integration \(supported: bash\)/],
  ];
  it.each(cases)('refuses terminal.open with %s, and leaks no PTY', async (_name, data, message) => {
    await expect(h.open(A, data)).rejects.toThrow(message);
    expect(h.manager.size).toBe(0);
    expect(h.facts).toEqual([]);
  });

  it('refuses bad commands on a terminal with clear errors', async () => {
    const { terminalId } = await h.open();
    await expect(h.manager.exec(A, { terminalId: 't-nope', command: 'ls' })).rejects.toThrow(
      "Terminal 't-nope' does not exist on this host",
    );
    await expect(h.manager.exec('other', { terminalId, command: 'ls' })).rejects.toMatchObject({
      code: 'permission_denied',
    });
    await expect(h.manager.write(A, { terminalId, data: 42 })).rejects.toThrow(
      /data: Invalid input: expected string, received number/,
    );
    await expect(h.manager.signal(A, { terminalId, signal: 'SIGFOO' })).rejects.toThrow(
      "Signal 'SIGFOO' is not supported; use one of SIGINT",
    );
    await expect(h.manager.exec(A, { terminalId, command: 'ls', timeoutMs: 10 * 3600_000 })).rejects.toThrow(
      "timeoutMs '36000000' is beyond the maximum of 3600000 ms",
    );
    await expect(h.manager.resize(A, { terminalId, cols: 5000, rows: 10 })).rejects.toThrow(/cols: Too big/);
    await expect(h.manager.exec(A, { terminalId, command: 'ls', resources: ['gpu'] })).rejects.toThrow(
      "Resource 'gpu' is not declared; use one of: (none configured).",
    );
    await expect(h.manager.wait(A, { terminalId })).rejects.toThrow(
      `Terminal '${terminalId}' has run no command; start one with terminal.exec.`,
    );
    expect((await h.manager.exec(A, { terminalId, command: 'echo fine' })).output).toBe('fine\n');
    expect(existsSync(h.workspace)).toBe(true);
  });
});
