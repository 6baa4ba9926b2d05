import { initialTransition, transition } from 'xstate';
import { terminalAggregate } from '../../../machines/terminal/terminal.ts';

type F = { type: string; data: Record<string, unknown> };
function fold(facts: F[]) {
  let [snap] = initialTransition(terminalAggregate);
  for (const f of facts) [snap] = transition(terminalAggregate, snap, f);
  return snap;
}

const opened: F = {
  type: 'terminal.opened',
  data: {
    terminalId: 't-1',
    agentId: 'a1',
    pid: 42,
    tty: '/dev/pts/3',
    cwd: '/w',
    cols: 80,
    rows: 24,
    shell: '/bin/bash',
    sandbox: false,
  },
};
const started = (id: string, command: string): F => ({
  type: 'terminal.command.started',
  data: { terminalId: 't-1', commandId: id, command, cwd: '/w', startedAt: '2026-01-01T00:00:00.000Z', cursor: 0 },
});
const finished = (id: string, exitCode: number, cwd = '/w', timedOut = false): F => ({
  type: 'terminal.command.finished',
  data: {
    terminalId: 't-1',
    commandId: id,
    exitCode,
    signal: null,
    durationMs: 5,
    cwd,
    timedOut,
    outputBytes: 3,
    cursor: 10,
  },
});

describe('terminalAggregate', () => {
  it('starts in opening with an empty context and fills it from terminal.opened', () => {
    const [initial] = initialTransition(terminalAggregate);
    expect(initial.value).toBe('opening');
    expect(initial.context.terminalId).toBeNull();
    const s = fold([opened]);
    expect(s.value).toBe('idle');
    expect(s.context).toMatchObject({
      terminalId: 't-1',
      agentId: 'a1',
      pid: 42,
      cwd: '/w',
      cols: 80,
      rows: 24,
      running: null,
      queue: [],
    });
  });

  it('shows a queue from facts, goes busy on start and back to idle with the new cwd and counters', () => {
    const s1 = fold([
      opened,
      started('c-1', 'sleep 1'),
      { type: 'terminal.command.queued', data: { terminalId: 't-1', commandId: 'c-2', command: 'ls', position: 1 } },
    ]);
    expect(s1.value).toBe('busy');
    expect(s1.context.running).toEqual({ commandId: 'c-1', command: 'sleep 1', startedAt: '2026-01-01T00:00:00.000Z' });
    expect(s1.context.queue).toEqual([{ commandId: 'c-2', command: 'ls' }]);
    const s2 = fold([
      opened,
      started('c-1', 'sleep 1'),
      { type: 'terminal.command.queued', data: { terminalId: 't-1', commandId: 'c-2', command: 'ls', position: 1 } },
      finished('c-1', 0, '/tmp'),
      started('c-2', 'ls'),
      { type: 'terminal.input.awaited', data: { terminalId: 't-1', commandId: 'c-2', pid: 9, prompt: 'Password:' } },
    ]);
    expect(s2.value).toBe('busy');
    expect(s2.context.queue).toEqual([]);
    expect(s2.context.awaitingInput).toBe('Password:');
    expect(s2.context.cwd).toBe('/tmp');
    const s3 = fold([
      opened,
      started('c-1', 'x'),
      finished('c-1', 0),
      started('c-2', 'y'),
      finished('c-2', 130, '/w', true),
    ]);
    expect(s3.value).toBe('idle');
    expect(s3.context).toMatchObject({
      commandsStarted: 2,
      commandsFinished: 2,
      commandsFailed: 1,
      commandsTimedOut: 1,
      lastExitCode: 130,
      awaitingInput: null,
    });
  });

  it('tracks resize and pause, and ends in closed with the exit info from any state', () => {
    const s = fold([
      opened,
      { type: 'terminal.resized', data: { terminalId: 't-1', cols: 120, rows: 40, cursor: 5 } },
      started('c-1', 'sleep 9'),
      { type: 'terminal.paused', data: { terminalId: 't-1', pgid: 7 } },
    ]);
    expect(s.context).toMatchObject({ cols: 120, rows: 40, paused: true });
    const closed = transition(terminalAggregate, s, {
      type: 'terminal.closed',
      data: { terminalId: 't-1', exitCode: null, signal: 'SIGKILL', reason: 'requested', cursor: 9 },
    })[0];
    expect(closed.value).toBe('closed');
    expect(closed.status).toBe('done');
    expect(closed.context).toMatchObject({
      running: null,
      closed: { exitCode: null, signal: 'SIGKILL', reason: 'requested' },
    });
  });

  it('keeps a plain-JSON context that is a function of the facts only', () => {
    const facts = [opened, started('c-1', 'x'), finished('c-1', 2)];
    // Folded at two different times with two different random sources: a context that read the clock or
    // Math.random (not only the facts) would differ.
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2020-01-01T00:00:00Z'));
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.1);
    const a = fold(facts);
    vi.setSystemTime(new Date('2031-06-01T12:00:00Z'));
    random.mockReturnValue(0.9);
    const b = fold(facts);
    random.mockRestore();
    vi.useRealTimers();
    expect(b.context).toEqual(a.context);
    expect(JSON.parse(JSON.stringify(a.context))).toEqual(a.context);
    // A snapshot restored from its JSON (as after a restart) folds the rest of the facts to the same state.
    const half = fold(facts.slice(0, 2));
    const restored = terminalAggregate.resolveState(
      JSON.parse(JSON.stringify({ value: half.value, context: half.context })),
    );
    const [resumed] = transition(terminalAggregate, restored, facts[2]!);
    expect({ value: resumed.value, context: resumed.context }).toEqual({ value: a.value, context: a.context });
    // And the facts do matter: another exit code is another context.
    expect(fold([opened, started('c-1', 'x'), finished('c-1', 3)]).context).not.toEqual(a.context);
  });

  it('ignores a finish without a start (no state change)', () => {
    const s = fold([opened, finished('c-9', 1)]);
    expect(s.value).toBe('idle');
    expect(s.context.commandsFinished).toBe(0);
  });
});
