/**
 * The lines `skein fleet run` prints as things happen: only the run's own agents, asks and their answers by
 * a person or parent (not rule decisions, which the step line covers), lifecycle ends, and a failed exec's
 * output tail.
 */
import { describe, expect, it } from 'vitest';
import { failureTail, FleetProgress, TAIL_LINES } from '../../../infra/cli/fleet-progress.ts';
import type { StepOutcome } from '../../../infra/agent/fleet.ts';
import type { AgentId, Fact } from '../../../schemas/index.ts';

function progress() {
  const lines: string[] = [];
  let t = 1000;
  const p = new FleetProgress(
    (l) => lines.push(l),
    () => t,
  );
  return { p, lines, tick: (ms: number) => (t += ms) };
}

const fact = (type: string, data: Record<string, unknown>): Fact => ({
  id: 'f',
  type,
  at: '2026-12-01T00:00:00.000Z',
  agentId: 'main' as AgentId,
  data,
});

const exec = (output: string, omittedBytes = 0): StepOutcome => ({
  step: 'exec make',
  ok: false,
  summary: 'exited exit=2',
  ms: 12.4,
  reply: { ok: true, status: 'exited', exitCode: 2, output, omittedBytes },
});

describe('FleetProgress', () => {
  it("follows only the run's agents, with the time since the run started", () => {
    const { p, lines, tick } = progress();
    p.agent({ agentId: 'a', label: 'api', parentId: 'main' });
    tick(1500);
    p.stepStarted('a', 'exec make');
    p.fact(fact('permission.requested', { requestId: 'p-1', agentId: 'a', tool: 'terminal', input: 'make' }));
    p.fact(fact('permission.requested', { requestId: 'p-2', agentId: 'other', tool: 'terminal', input: 'x' }));
    p.fact(fact('permission.granted', { requestId: 'p-0', agentId: 'a', by: 'rule' }));
    p.fact(fact('permission.granted', { requestId: 'p-1', agentId: 'a', by: 'parent' }));
    p.fact(fact('agent.failed', { agentId: 'a', error: 'exec make: exited exit=2\nmore' }));
    expect(lines).toEqual([
      '[+0.0s] a spawned "api" under main',
      '[+1.5s] a → exec make',
      '[+1.5s] a asks p-1: terminal "make" (the plan\'s answers, or `skein approve p-1` / `skein deny p-1`)',
      '[+1.5s] a p-1 granted by parent',
      '[+1.5s] a "api" failed: exec make: exited exit=2',
    ]);
  });

  it("shows the root's own asks to spawn the plan's agents: a person answers them, not the plan", () => {
    const { p, lines } = progress();
    p.watch('main', 'root');
    p.fact(fact('permission.requested', { requestId: 'p-9', agentId: 'main', tool: 'spawn_agent', input: 'api' }));
    expect(lines).toEqual(['[+0.0s] main asks p-9: spawn_agent "api" (`skein approve p-9` / `skein deny p-9`)']);
  });

  it('prints a failed step with the tail of its output', () => {
    const { p, lines } = progress();
    p.agent({ agentId: 'a', label: 'api', parentId: 'main' });
    p.stepDone('a', exec('cc main.c\nmain.c:3: error: x undeclared\n'));
    expect(lines.slice(1)).toEqual([
      '[+0.0s] a ✗ exec make: exited exit=2 (12 ms)',
      '      │ cc main.c',
      '      │ main.c:3: error: x undeclared',
    ]);
  });

  it(`keeps the last ${TAIL_LINES} lines and says what it left out`, () => {
    const output = Array.from({ length: 50 }, (_, i) => `l${i + 1}`).join('\n');
    const tail = failureTail(exec(output, 4096));
    expect(tail[0]).toBe('… (30 earlier lines, 4096 bytes from the middle not shown)');
    expect(tail.slice(1)).toEqual(Array.from({ length: TAIL_LINES }, (_, i) => `l${i + 31}`));
  });

  it('shows no tail for a step that passed or was refused (its summary is the error)', () => {
    expect(failureTail({ step: 'x', ok: true, summary: 'ok', ms: 1 })).toEqual([]);
    expect(
      failureTail({
        step: 'write a',
        ok: false,
        summary: 'denied',
        ms: 1,
        reply: { ok: false, error: { code: 'permission_denied', message: 'denied', retryable: false } },
      }),
    ).toEqual([]);
  });
});
