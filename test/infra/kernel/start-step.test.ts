/**
 * A start that waits says on what: `startStep` logs the step at debug when it begins and at warn while it
 * has not ended, and stops saying so once it has (its result or error passes through).
 */
import { describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../infra/kernel/log.ts';
import { startStep } from '../../../infra/kernel/start-step.ts';

function capture() {
  const lines: Array<{ level: number; msg: string; step?: string; waitedMs?: number }> = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (s: string) => void lines.push(JSON.parse(s)) },
  });
  return { logger, lines };
}

describe('startStep', () => {
  it('warns every period while a step waits, naming it, and stops once it ends', async () => {
    const { logger, lines } = capture();
    let release!: (v: string) => void;
    const waiting = startStep(logger, 'the host registry', () => new Promise<string>((r) => (release = r)), 40);
    // Two warnings, however late the timers fire on a loaded machine (a stall past 70 ms merged two into one).
    await vi.waitFor(() => expect(lines.filter((l) => l.level === 40).length).toBeGreaterThanOrEqual(2), 10_000);
    release('done');
    expect(await waiting).toBe('done');
    const warns = lines.filter((l) => l.level === 40);
    expect(warns.length).toBeGreaterThanOrEqual(2);
    expect(warns[0]).toMatchObject({ step: 'the host registry', msg: 'starting: still waiting for the host registry' });
    expect(warns[1]!.waitedMs!).toBeGreaterThan(warns[0]!.waitedMs!);
    expect(lines[0]).toMatchObject({ level: 20, msg: 'starting: the host registry' });
    const count = warns.length;
    await new Promise((r) => setTimeout(r, 120));
    expect(lines.filter((l) => l.level === 40)).toHaveLength(count);
  });

  it('passes a failure through and stops warning', async () => {
    const { logger, lines } = capture();
    await expect(startStep(logger, 'the streams', () => Promise.reject(new Error('no JetStream')), 20)).rejects.toThrow(
      'no JetStream',
    );
    await new Promise((r) => setTimeout(r, 80));
    expect(lines.filter((l) => l.level === 40)).toHaveLength(0);
  });
});
