/**
 * The terminal machine runs live and replays (issue 9, item 4): after a
 * workload on a real PTY (queued commands, a timeout with its SIGINT and
 * SIGKILL, input awaited and written, resize, pause/resume, close), the live
 * actor's snapshot equals the fold of the facts the terminal emitted, both
 * through xstate's pure `transition()` and through the host's `Fold`. Also:
 * the deadlines are the machine's (`after`): the command timeout re-arms from
 * the context, and an idle terminal closes itself.
 */
import { initialTransition, transition } from 'xstate';
import { Fold } from '../../../machines/kernel/projection.ts';
import { commandDeadlineMs, terminalAggregateDef, terminalMachine } from '../../../machines/terminal/terminal.ts';
import { terminalHarness } from '../../support/terminal-harness.ts';

const A = 'a1';
let h: ReturnType<typeof terminalHarness>;
afterEach(async () => {
  await h.dispose();
});

function replayed(facts: Array<{ type: string; data: unknown }>) {
  let [snap] = initialTransition(terminalMachine);
  for (const f of facts) [snap] = transition(terminalMachine, snap, { type: f.type, data: f.data });
  return { value: snap.value, context: snap.context };
}

describe('the terminal machine, live and replayed', () => {
  it('has the same snapshot live as the fold of its facts, at every step of a workload', async () => {
    h = terminalHarness({ interruptGraceMs: 200, closeGraceMs: 300, pollMs: 50, inputQuietMs: 150 });
    const { terminalId } = await h.open();
    const session = h.manager.get(terminalId)!;
    const same = () => expect(session.machineState()).toEqual(replayed(h.factsOf(terminalId)));
    same();
    const running = await h.manager.exec(A, { terminalId, command: 'sleep 0.3', yieldMs: 0 });
    const queued = h.manager.exec(A, { terminalId, command: 'echo queued' });
    await expect.poll(() => session.machineState().context.queue.length).toBe(1);
    same();
    expect(session.machineState().value).toBe('busy');
    await queued;
    await h.manager.wait(A, { terminalId, commandId: running.commandId });
    same();
    // A timeout: SIGINT ignored, then SIGKILL a grace period later, both from the machine's deadlines (2 s: a
    // SIGINT before the inner bash has set its trap would end it at once, one interrupt).
    const timedOut = await h.manager.exec(A, {
      terminalId,
      command: 'bash -c \'trap "" INT; sleep 5\'',
      timeoutMs: 2_000,
    });
    expect(timedOut).toMatchObject({ status: 'timeout' });
    expect(h.types(terminalId).filter((t) => t === 'terminal.command.interrupted')).toHaveLength(2);
    same();
    const reading = await h.manager.exec(A, { terminalId, command: 'read -r x; echo "x=$x"', yieldMs: 2_000 });
    expect(reading.status).toBe('input_required');
    same();
    expect(session.machineState().context.awaitingInput).not.toBeNull();
    await h.manager.write(A, { terminalId, data: 'hi\r' });
    await h.manager.wait(A, { terminalId });
    await h.manager.resize(A, { terminalId, cols: 100, rows: 30 });
    const sleeping = await h.manager.exec(A, { terminalId, command: 'sleep 0.3', yieldMs: 0 });
    await h.manager.pauseAll(A);
    same();
    expect(session.machineState().context.paused).toBe(true);
    await h.manager.resumeAll(A);
    await h.manager.wait(A, { terminalId, commandId: sleeping.commandId });
    same();
    await h.manager.close(A, { terminalId });
    same();
    expect(session.machineState()).toMatchObject({
      value: 'closed',
      context: { cols: 100, rows: 30, commandsStarted: 5, commandsTimedOut: 1, paused: false, running: null },
    });
    // The host's fold (the one replay and the state digest use) agrees.
    const fold = new Fold([terminalAggregateDef]);
    for (const f of h.factsOf(terminalId)) fold.apply(terminalId, 'terminal', f);
    const folded = fold.get(terminalId)!;
    expect({ value: folded.value, context: folded.context }).toEqual(session.machineState());
  });

  it('re-arms a restored command deadline with what is left of it, from the context alone', () => {
    const [opened] = transition(terminalMachine, initialTransition(terminalMachine)[0], {
      type: 'terminal.opened',
      data: { terminalId: 't-1', agentId: A, pid: 1, tty: '', cwd: '/', cols: 80, rows: 24, shell: 'bash' },
    });
    const startedAt = '2026-01-01T00:00:00.000Z';
    const [busy] = transition(terminalMachine, opened, {
      type: 'terminal.command.started',
      data: { terminalId: 't-1', commandId: 'c-1', command: 'x', cwd: '/', startedAt, cursor: 0, timeoutMs: 10_000 },
    });
    const t0 = Date.parse(startedAt);
    expect(commandDeadlineMs(busy.context, t0 + 4_000)).toBe(6_000);
    expect(commandDeadlineMs(busy.context, t0 + 60_000)).toBe(0);
    // An older log (no timeoutMs in the fact) has no deadline to re-arm.
    const [old] = transition(terminalMachine, opened, {
      type: 'terminal.command.started',
      data: { terminalId: 't-1', commandId: 'c-1', command: 'x', cwd: '/', startedAt, cursor: 0 },
    });
    expect(old.context.running).toEqual({ commandId: 'c-1', command: 'x', startedAt });
    expect(commandDeadlineMs(old.context, t0)).toBe(2 ** 31 - 1);
  });

  it('closes an idle terminal from its idle deadline, and not while output keeps it active', async () => {
    h = terminalHarness({ idleTimeoutMs: 500, closeGraceMs: 300 });
    const quiet = await h.open();
    const busy = await h.open();
    // Output counts as activity: a command printing every 100 ms keeps its terminal open.
    await h.manager.exec(A, {
      terminalId: busy.terminalId,
      command: 'for i in $(seq 12); do echo $i; sleep 0.1; done',
      yieldMs: 0,
    });
    await expect.poll(() => h.types(quiet.terminalId).at(-1), { timeout: 5_000 }).toBe('terminal.closed');
    expect(h.factsOf(quiet.terminalId).at(-1)!.data).toMatchObject({ reason: 'idle' });
    expect(h.manager.get(busy.terminalId)).toBeDefined();
    await expect.poll(() => h.types(busy.terminalId).at(-1), { timeout: 5_000 }).toBe('terminal.closed');
  });
});
