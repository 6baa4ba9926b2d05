/**
 * Real PTYs through TerminalManager: lifecycle, exec (exit codes, signals,
 * yield/wait, timeout, queueing), output (tail never lost, paging), isolation,
 * fd hygiene and screen replay. No NATS: facts are recorded in memory.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { initialTransition, transition } from 'xstate';
import { renderScreen, type ScreenHistoryItem } from '../../../actors/terminal/terminal-screen.ts';
import { PLAIN_CHUNK_BYTES } from '../../../actors/terminal/terminal-output.ts';
import { terminalAggregate } from '../../../machines/terminal/terminal.ts';
import { terminalHarness } from '../../support/terminal-harness.ts';

let h: ReturnType<typeof terminalHarness>;
beforeEach(() => {
  h = terminalHarness({ interruptGraceMs: 300, closeGraceMs: 300 });
});
afterEach(async () => {
  await h.dispose();
});

const A = 'a1';

describe('TerminalManager: open and exec', () => {
  it('opens a bash in the workspace at 80x24 and reports the first prompt as terminal.opened', async () => {
    const o = await h.open();
    expect(o).toMatchObject({ cwd: h.workspace, cols: 80, rows: 24, sandbox: false });
    expect(o.tty).toMatch(/^\/dev\/pts\/\d+$/);
    expect(h.factsOf(o.terminalId)).toEqual([
      {
        type: 'terminal.opened',
        agentId: A,
        data: {
          terminalId: o.terminalId,
          agentId: A,
          pid: o.pid,
          tty: o.tty,
          cwd: h.workspace,
          cols: 80,
          rows: 24,
          shell: o.shell,
          sandbox: false,
        },
      },
    ]);
    const r = await h.manager.exec(A, {
      terminalId: o.terminalId,
      command: 'stty size; echo $TERM $PAGER $GIT_PAGER $SKEIN_TERMINAL_ID',
    });
    expect(r.output).toBe(`24 80\nxterm-256color cat cat ${o.terminalId}\n`);
  });

  it('reports exit codes, non-zero ones and deaths by signal, with one started/finished pair each', async () => {
    const { terminalId } = await h.open();
    const ok = await h.manager.exec(A, { terminalId, command: 'echo hi' });
    expect(ok).toMatchObject({
      status: 'exited',
      exitCode: 0,
      signal: null,
      output: 'hi\n',
      truncated: false,
      cwd: h.workspace,
    });
    expect((await h.manager.exec(A, { terminalId, command: '(exit 7)' })).exitCode).toBe(7);
    const killed = await h.manager.exec(A, { terminalId, command: "sh -c 'kill -TERM $$'" });
    expect(killed).toMatchObject({ status: 'exited', exitCode: 143, signal: 'SIGTERM' });
    const facts = h.factsOf(terminalId).slice(1);
    expect(facts.map((f) => [f.type, f.data.commandId, f.data.exitCode])).toEqual([
      ['terminal.command.started', 'c-1', undefined],
      ['terminal.command.finished', 'c-1', 0],
      ['terminal.command.started', 'c-2', undefined],
      ['terminal.command.finished', 'c-2', 7],
      ['terminal.command.started', 'c-3', undefined],
      ['terminal.command.finished', 'c-3', 143],
    ]);
    expect(facts[5]!.data).toMatchObject({ signal: 'SIGTERM', cwd: h.workspace, timedOut: false });
    // The aggregate machine folds the live facts into the terminal's state.
    let [snap] = initialTransition(terminalAggregate);
    for (const f of h.factsOf(terminalId)) [snap] = transition(terminalAggregate, snap, f);
    expect(snap.value).toBe('idle');
    expect(snap.context).toMatchObject({
      terminalId,
      agentId: A,
      commandsStarted: 3,
      commandsFinished: 3,
      commandsFailed: 2,
      lastExitCode: 143,
      cwd: h.workspace,
    });
  });

  it('never loses the tail of a 200 KB burst followed by an immediate exit (50 runs)', async () => {
    const { terminalId } = await h.open();
    const incomplete: number[] = [];
    for (let i = 0; i < 50; i++) {
      const r = await h.manager.exec(A, {
        terminalId,
        command: "head -c 200000 /dev/zero | tr '\\0' A; printf END",
        maxBytes: 1024 * 1024,
      });
      if (r.output !== `${'A'.repeat(200_000)}END` || r.exitCode !== 0) incomplete.push(i);
    }
    expect(incomplete).toEqual([]);
    // The output stream holds every byte too, in order, at the offsets it claims.
    const chunks = h.output.filter((f) => f.data.terminalId === terminalId);
    let offset = 0;
    for (const c of chunks) {
      expect(c.data.offset).toBe(offset);
      offset += c.data.bytes;
      expect(c.data.bytes).toBeLessThanOrEqual(PLAIN_CHUNK_BYTES);
    }
    expect(h.rawOutput(terminalId).split('AEND').length).toBe(51);
  });

  it('yields with status running, then wait returns the whole output when it exits', async () => {
    const { terminalId } = await h.open();
    // The command waits for a file the test makes: the yield comes while it runs however slow the machine is.
    const command = 'echo start; until [ -e go ]; do sleep 0.05; done; echo done';
    const first = await h.manager.exec(A, { terminalId, command, yieldMs: 1_500 });
    expect(first).toMatchObject({ status: 'running', exitCode: null, commandId: 'c-1' });
    expect(first.output).toBe('start\n');
    const still = await h.manager.wait(A, { terminalId, timeoutMs: 0 });
    expect(still.status).toBe('running');
    writeFileSync(join(h.workspace, 'go'), '');
    const done = await h.manager.wait(A, { terminalId, commandId: 'c-1' });
    expect(done).toMatchObject({ status: 'exited', exitCode: 0, output: 'start\ndone\n' });
  });

  it('interrupts at the timeout with SIGINT, and the terminal stays usable', async () => {
    const { terminalId } = await h.open();
    const r = await h.manager.exec(A, { terminalId, command: 'sleep 30', timeoutMs: 200 });
    expect(r).toMatchObject({ status: 'timeout', exitCode: 130, signal: 'SIGINT' });
    const types = h.types(terminalId);
    expect(types.slice(-3)).toEqual([
      'terminal.command.started',
      'terminal.command.interrupted',
      'terminal.command.finished',
    ]);
    expect(h.factsOf(terminalId).at(-1)!.data).toMatchObject({ timedOut: true, exitCode: 130 });
    expect(await h.manager.exec(A, { terminalId, command: 'echo still here' })).toMatchObject({
      status: 'exited',
      output: 'still here\n',
    });
  });

  it('escalates to SIGKILL when the command ignores SIGINT', async () => {
    const { terminalId } = await h.open();
    // 2 s: a SIGINT before the inner bash has set its trap would end it at once (130, one interrupt).
    const r = await h.manager.exec(A, { terminalId, command: `bash -c "trap '' INT; sleep 30"`, timeoutMs: 2_000 });
    expect(r).toMatchObject({ status: 'timeout', exitCode: 137, signal: 'SIGKILL' });
    expect(
      h
        .factsOf(terminalId)
        .filter((f) => f.type === 'terminal.command.interrupted')
        .map((f) => f.data.signal),
    ).toEqual(['SIGINT', 'SIGKILL']);
    expect((await h.manager.exec(A, { terminalId, command: 'echo ok' })).output).toBe('ok\n');
  });

  it('queues commands sent to a busy terminal and runs them in order without interleaving', async () => {
    const { terminalId } = await h.open();
    const replies = await Promise.all([
      h.manager.exec(A, { terminalId, command: 'for i in 1 2 3; do echo A$i; sleep 0.05; done' }),
      h.manager.exec(A, { terminalId, command: 'echo B' }),
      h.manager.exec(A, { terminalId, command: 'echo C' }),
    ]);
    expect(replies.map((r) => r.output)).toEqual(['A1\nA2\nA3\n', 'B\n', 'C\n']);
    expect(
      h
        .factsOf(terminalId)
        .slice(1)
        .map((f) => `${f.type.replace('terminal.command.', '')} ${f.data.commandId}`),
    ).toEqual([
      'started c-1',
      'queued c-2',
      'queued c-3',
      'finished c-1',
      'started c-2',
      'finished c-2',
      'started c-3',
      'finished c-3',
    ]);
  });

  it('runs a multi-line command as one unit and tracks cd per terminal', async () => {
    const t1 = await h.open();
    const t2 = await h.open();
    const r = await h.manager.exec(A, { terminalId: t1.terminalId, command: 'cd /tmp\nprintf "a\\tb\\n"\npwd' });
    expect(r).toMatchObject({ status: 'exited', output: 'a\tb\n/tmp\n', cwd: '/tmp' });
    expect((await h.manager.exec(A, { terminalId: t2.terminalId, command: 'pwd' })).output).toBe(`${h.workspace}\n`);
    expect(
      h.manager
        .list(A)
        .terminals.map((t) => t.cwd)
        .sort(),
    ).toEqual([h.workspace, '/tmp'].sort());
  });

  it('gives children no descriptor but 0, 1 and 2', async () => {
    const { terminalId } = await h.open();
    // ls itself opens 3 for the directory it lists.
    const r = await h.manager.exec(A, { terminalId, command: 'ls /proc/self/fd' });
    expect(r.output.split(/\s+/).filter(Boolean)).toEqual(['0', '1', '2', '3']);
  });
});

describe('TerminalManager: onEnded (issue 15)', () => {
  it('is called once at the end mark, before the finish is appended, also when the exec yielded first', async () => {
    const { terminalId } = await h.open();
    const seen: string[][] = [];
    const at = () => seen.push(h.types(terminalId).filter((t) => t.startsWith('terminal.command.')));
    const r = await h.manager.exec(A, { terminalId, command: 'echo x' }, at);
    expect(r.status).toBe('exited');
    const yielded = await h.manager.exec(A, { terminalId, command: 'sleep 0.4', yieldMs: 50 }, at);
    expect(yielded.status).toBe('running');
    expect(seen).toHaveLength(1);
    await h.manager.wait(A, { terminalId, commandId: yielded.commandId });
    expect(seen).toEqual([
      ['terminal.command.started'],
      ['terminal.command.started', 'terminal.command.finished', 'terminal.command.started'],
    ]);
  });
});

describe('TerminalManager: read and screen', () => {
  it('pages output by cursor, and without a cursor gives head+tail of what is unread', async () => {
    const { terminalId } = await h.open();
    const r = await h.manager.exec(A, { terminalId, command: 'seq 1 5000', maxBytes: 512 });
    expect(r.truncated).toBe(true);
    expect(r.output.startsWith('1\n2\n3\n')).toBe(true);
    expect(r.output.endsWith('4999\n5000\n')).toBe(true);
    expect(r.output).toMatch(/bytes omitted; page it with terminal\.read \{"cursor": \d+\}/);
    const start = Number(/"cursor": (\d+)/.exec(r.output)![1]);
    const page1 = await h.manager.read(A, { terminalId, cursor: start, maxBytes: 1000 });
    expect(page1.output.startsWith('1\n2\n')).toBe(true);
    expect(page1).toMatchObject({ cursor: start, nextCursor: start + 1000, truncated: true });
    const page2 = await h.manager.read(A, { terminalId, cursor: page1.nextCursor, maxBytes: 1000 });
    expect((page1.output + page2.output).startsWith(Array.from({ length: 300 }, (_, i) => i + 1).join('\n'))).toBe(
      true,
    );
    const unread = await h.manager.read(A, { terminalId, maxBytes: 600 });
    expect(unread).toMatchObject({ cursor: page2.nextCursor, truncated: true });
    expect(unread.output).toContain('5000');
    const nothing = await h.manager.read(A, { terminalId });
    expect(nothing.output).toBe('');
  });

  it('replays the logged chunks and resizes into the same screen as the live one, at any point', async () => {
    const { terminalId } = await h.open();
    await h.manager.exec(A, { terminalId, command: "printf '\\033[1;31mred\\033[0m\\n'; seq 1 30" });
    const midLive = (await h.manager.read(A, { terminalId, screen: true })).screen!;
    const midChunks = h.output.filter((f) => f.data.terminalId === terminalId).length;
    await h.manager.resize(A, { terminalId, cols: 100, rows: 30 });
    await h.manager.exec(A, {
      terminalId,
      command: "printf 'progress 10%%\\rprogress 100%%\\n'; tput cup 2 5; echo here",
    });
    const live = (await h.manager.read(A, { terminalId, screen: true })).screen!;
    const history: Array<ScreenHistoryItem & { at: number }> = [
      ...h.output
        .filter((f) => f.data.terminalId === terminalId)
        .map((f) => ({ data: f.data.data, at: f.data.offset })),
      ...h
        .factsOf(terminalId)
        .filter((f) => f.type === 'terminal.resized')
        .map((f) => ({ cols: f.data.cols, rows: f.data.rows, at: f.data.cursor - 0.5 })),
    ].sort((a, b) => a.at - b.at);
    expect(await renderScreen(history, 80, 24)).toEqual(live);
    const chunks = h.output
      .filter((f) => f.data.terminalId === terminalId)
      .slice(0, midChunks)
      .map((f) => f.data.data);
    expect(await renderScreen(chunks, 80, 24)).toEqual(midLive);
    expect(live.cols).toBe(100);
    expect(live.lines.some((l) => l === 'progress 100%')).toBe(true);
    // A chunk with control sequences carries its plain text and the structured sequences.
    const red = h.output.find((f) => f.data.plainText?.includes('red'))!;
    expect(red.data.plainText).not.toContain('\x1b');
    expect(red.data.sequences).toEqual(
      expect.arrayContaining([
        { kind: 'sgr', seq: 'CSI 1;31m' },
        { kind: 'sgr', seq: 'CSI 0m' },
      ]),
    );
    expect(
      h.output.some(
        (f) => f.data.isInteractive && f.data.sequences.some((s: { kind: string }) => s.kind === 'cursor-position'),
      ),
    ).toBe(true);
  });
});

describe('TerminalManager: back-pressure and cancellation', () => {
  it('pauses the PTY while the log falls behind, resumes it, and loses nothing', async () => {
    const releases: Array<() => void> = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const slow = terminalHarness({ highWaterChunks: 4, coalesceBytes: 4096 });
    // Replace emitOutput with one the test completes by hand.
    const { TerminalManager } = await import('../../../actors/terminal/terminal-manager.ts');
    const chunks: Array<{ offset: number; data: string }> = [];
    const m = new TerminalManager({
      config: { highWaterChunks: 4, coalesceBytes: 4096 },
      log: slow.manager.log,
      emit: async () => {},
      emitOutput: (fact) =>
        new Promise<void>((resolve) => {
          chunks.push({ offset: fact.data.offset, data: fact.data.data });
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          releases.push(() => {
            inFlight--;
            resolve();
          });
        }),
    });
    try {
      const { terminalId } = await m.open(A, { cwd: slow.workspace });
      const running = m.exec(A, { terminalId, command: 'seq 1 200000', maxBytes: 1024 });
      const session = m.get(terminalId)!;
      await vi.waitFor(() => expect(session.output.pauses).toBeGreaterThan(0));
      const stalledAt = session.output.end;
      // Paused at the high-water mark of chunks in flight.
      expect(session.output.backlog).toBeGreaterThanOrEqual(4);
      let finished = false;
      void running.then(() => (finished = true));
      while (!finished) {
        releases.splice(0).forEach((r) => r());
        await new Promise((r) => setImmediate(r));
      }
      const reply = await running;
      expect(reply).toMatchObject({ status: 'exited', exitCode: 0 });
      expect(reply.output.endsWith('199999\n200000\n')).toBe(true);
      expect(session.output.end).toBeGreaterThan(stalledAt);
      expect(maxInFlight).toBeLessThanOrEqual(5);
      const all = chunks.map((c) => c.data).join('');
      expect(all).toContain('199999\r\n200000\r\n');
      let offset = 0;
      for (const c of chunks) {
        expect(c.offset).toBe(offset);
        offset += Buffer.byteLength(c.data);
      }
    } finally {
      const drain = setInterval(() => releases.splice(0).forEach((r) => r()), 5);
      await m.shutdown();
      clearInterval(drain);
      await slow.dispose();
    }
  });

  it('cancels queued commands when the terminal closes, with a clear error', async () => {
    const { terminalId } = await h.open();
    const running = h.manager.exec(A, { terminalId, command: 'sleep 30' }).catch((err: Error) => err);
    const queued = h.manager.exec(A, { terminalId, command: 'echo never' }).catch((err: Error) => err);
    await vi.waitFor(() => expect(h.types(terminalId)).toContain('terminal.command.queued'));
    // Close once sleep really runs: not while bash reads the line, nor while its forked child has not yet
    // exec'd sleep (that child still has the shell's handlers, and a SIGHUP there is not fatal).
    const comm = (pid: number) => {
      try {
        return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
      } catch {
        return '';
      }
    };
    await vi.waitFor(() => expect(h.manager.get(terminalId)!.members().map(comm)).toContain('sleep'), 10_000);
    await h.manager.close(A, { terminalId });
    // Close sends SIGHUP then SIGTERM; which one a process dies of is the kernel's choice.
    expect(await running).toMatchObject({ status: 'exited', signal: expect.stringMatching(/^SIG(HUP|TERM)$/) });
    expect(await queued).toMatchObject({
      message:
        `Command 'c-2' on terminal '${terminalId}' did not finish: ` +
        `terminal closed; open a new terminal and run it again.`,
    });
    expect(h.types(terminalId).slice(-2)).toEqual(['terminal.command.cancelled', 'terminal.closed']);
  });
});
