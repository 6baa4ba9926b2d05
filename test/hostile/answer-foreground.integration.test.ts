/**
 * Input approved for one program never reaches another, live: a real terminal, a policy that asks about every
 * write, a person answering "allow once". The agent writes a shell line while python3 holds the terminal, so
 * the ask shows it as input to python3; python exits before the person answers, and on the code before the
 * gate looked again after the answer, the approved line went to bash, which ran it (the canary file).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../support/replies.ts';
import { startTestRuntime, type TestRuntime } from '../support/runtime.ts';

type Ask = { requestId: string; input: string; detail?: string };

describe('hostile: an answer applies to the program the ask named', () => {
  let rt: TestRuntime;
  let terminalId: string;

  beforeAll(async () => {
    rt = await startTestRuntime({
      mode: 'embedded',
      policy: { default: 'allow', tools: { terminal_input: { default: 'confirm' } } },
    });
    terminalId = String(ok(await rt.call('terminal.open', {}))['terminalId']);
  }, 60_000);
  afterAll(async () => {
    await rt?.dispose();
  });

  const pendingAsk = async () => {
    const r = await rt.call('permission.pending');
    return r.ok ? (r['requests'] as Ask[])[0] : undefined;
  };
  /**
   * Starts `command` and waits for `marker` in the terminal's output (made by the program, so it has exec'd:
   * a forked shell not yet exec'd reads as "bash"). The marker is printed as two halves joined, so the echo of
   * the typed line never matches.
   */
  const started = async (command: string, marker: string) => {
    ok(await rt.call('terminal.exec', { terminalId, command, yieldMs: 300, timeoutMs: 120_000 }));
    await expect
      .poll(async () => String(ok(await rt.call('terminal.read', { terminalId, cursor: 0 }))['output']), {
        timeout: 20_000,
      })
      .toContain(marker);
  };
  /**
   * A python prelude that prints the marker `UP-<n>`, waits for the file `go-<n>` (made by `cue`), and makes
   * `went-<n>` as it goes on: what it does next happens at a moment the test chose, on a machine of any speed.
   */
  const gate = (n: number) =>
    `import os, time\nprint("UP" + "-${n}", flush=True)\n` +
    `while not os.path.exists("go-${n}"): time.sleep(0.02)\nopen("went-${n}", "w").close()\n`;
  /** Lets gate `n` go on, and waits `settle` ms past the moment it did (for an exit or an exec to be done). */
  const cue = async (n: number, settle = 1_000) => {
    writeFileSync(join(rt.workspace, `go-${n}`), '');
    await expect.poll(() => existsSync(join(rt.workspace, `went-${n}`)), { timeout: 20_000 }).toBe(true);
    await new Promise((r) => setTimeout(r, settle));
  };
  const foregroundIsPrompt = async () => {
    // The probe's ask, if any, says what the terminal runs: withdraw it at once (deny) either way.
    return (await rt.call('terminal.exec', { terminalId, command: 'true', timeoutMs: 10_000 })).ok;
  };

  it('a line approved as input to python3 is not written once bash reads the terminal', async () => {
    const canary = join(rt.workspace, 'CANARY-foreground');
    writeFileSync(join(rt.workspace, 'e.py'), gate(1));
    await started('python3 e.py', 'UP-1');
    const write = rt.call('terminal.write', { terminalId, data: `touch ${canary}\n` });
    let ask: Ask | undefined;
    for (const started = Date.now(); !ask && Date.now() - started < 10_000; ) {
      ask = await pendingAsk();
      if (!ask) await new Promise((r) => setTimeout(r, 25));
    }
    // The person reads: input to python3.
    expect(ask?.detail).toContain('read by: "python3"\nshell directory: ');
    // python3 exits before they answer; bash is at its prompt again.
    await cue(1);
    ok(await rt.call('permission.decide', { requestId: ask!.requestId, decision: 'allow_once' }));
    const reply = await write;
    expect(reply).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    if (!reply.ok) expect(reply.error.message).toContain('now runs the shell prompt');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(existsSync(canary)).toBe(false);
    expect(await foregroundIsPrompt()).toBe(true);
  });

  it('an answer for the program still running is written', async () => {
    await started(`sh -c 'echo UP""-2; exec cat > echoed.txt'`, 'UP-2');
    const write = rt.call('terminal.write', { terminalId, data: 'kept line\n' });
    let ask: Ask | undefined;
    for (const started = Date.now(); !ask && Date.now() - started < 10_000; ) {
      ask = await pendingAsk();
      if (!ask) await new Promise((r) => setTimeout(r, 25));
    }
    expect(ask?.detail).toContain('read by: "cat"\n');
    ok(await rt.call('permission.decide', { requestId: ask!.requestId, decision: 'allow_once' }));
    ok(await write);
    // cat writes each line as it reads it. Read first, interrupted after: a SIGINT from the tty flushes the
    // tty's input queue, so one sent as the reply came could drop the line before cat read it (CI, 5 Dec).
    const echoed = join(rt.workspace, 'echoed.txt');
    await expect.poll(() => existsSync(echoed) && readFileSync(echoed, 'utf8')).toBe('kept line\n');
    await rt.call('terminal.signal', { terminalId, signal: 'SIGINT' });
  });

  /** Writes `data`, answering its ask "allow once" after `beforeAnswer` ran; returns the reply. */
  async function writeAnswered(data: string, beforeAnswer: () => Promise<void> = async () => {}) {
    const write = rt.call('terminal.write', { terminalId, data }, { timeoutMs: 60_000 });
    let ask: Ask | undefined;
    for (const started = Date.now(); !ask && Date.now() - started < 10_000; ) {
      ask = await pendingAsk();
      if (!ask) await new Promise((r) => setTimeout(r, 25));
    }
    await beforeAnswer();
    if (ask) ok(await rt.call('permission.decide', { requestId: ask.requestId, decision: 'allow_once' }));
    return { reply: await write, ask };
  }

  it('a program of the same name, exec-ed in its place, is not the one approved', async () => {
    // A review helper's attack: a script waits, then execs a copy of bash it named python3.
    const canary = join(rt.workspace, 'CANARY-same-name');
    ok(await rt.call('terminal.exec', { terminalId, command: 'cp /bin/bash ./python3', timeoutMs: 10_000 }));
    writeFileSync(
      join(rt.workspace, 's.py'),
      `${gate(3)}os.execv("./python3", ["python3", "--norc", "--noprofile", "--noediting"])\n`,
    );
    await started('/usr/bin/python3 s.py', 'UP-3');
    const { reply, ask } = await writeAnswered(`touch ${canary}\n`, () => cue(3));
    expect(ask?.detail).toContain('read by: "python3"\nshell directory: ');
    expect(reply).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    if (!reply.ok) expect(reply.error.message).toContain('other processes (as "python3")');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(existsSync(canary)).toBe(false);
    // Leave the bash copy: its exit is one more ask, answered.
    await writeAnswered('exit\n');
  });

  it('a child the approved program forks to read the terminal is not the program approved', async () => {
    // A review helper's attack: python3 waits, then runs bash on /dev/stdin in its own process group.
    const canary = join(rt.workspace, 'CANARY-forked');
    writeFileSync(
      join(rt.workspace, 'f.py'),
      `${gate(5)}import subprocess\n` + 'subprocess.call(["/bin/bash", "/dev/stdin"])\n',
    );
    await started('/usr/bin/python3 f.py', 'UP-5');
    const { reply } = await writeAnswered(`touch ${canary}\n`, () => cue(5, 1_500));
    expect(reply).toMatchObject({ ok: false, error: { code: 'permission_denied' } });
    await new Promise((r) => setTimeout(r, 1_000));
    expect(existsSync(canary)).toBe(false);
    // The forked bash still reads the terminal: end it (Ctrl-D), and python3 with it.
    await writeAnswered('\u0004');
  });

  it('the same REPL back at its prompt (its line mode changed) still gets the line approved for it', async () => {
    await started(`/usr/bin/python3 -q -i -c "print('UP' + '-4')"`, 'UP-4');
    ok((await writeAnswered('import time; time.sleep(3)\n')).reply);
    await new Promise((r) => setTimeout(r, 300));
    // Typed ahead while the REPL sleeps (line mode); answered once it reads keys again (readline, raw mode).
    const { reply, ask } = await writeAnswered('print(6 * 7)\n', () => new Promise((r) => setTimeout(r, 4_000)));
    expect(ask?.detail).toContain('read by: "python3"\nshell directory: ');
    ok(reply);
    await expect
      .poll(async () => String(ok(await rt.call('terminal.read', { terminalId, cursor: 0 }))['output']), {
        timeout: 10_000,
      })
      .toMatch(/^42\r?$/m);
    await writeAnswered('exit()\n');
  });
});
