/**
 * `skein fleet run` shows live progress (issue 14, "Friction": it used to be silent until the end): through
 * the real executable against an embedded runtime, a plan where one agent's step fails (a non-zero exit: it
 * fails a step unless the plan expects it; until 8 December it passed) while another is still busy. The
 * progress lines (agents, steps, the failed step's output tail, the failure) are on stderr while the run is
 * still going and before the final report; the report and exit code come at the end.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, startEmbeddedCli, type EmbeddedRun } from '../support/cli.ts';

const PLAN = `
agents:
  - label: slow
    agentId: slow
    steps:
      - exec: echo slow-start
      - exec: sleep 8
  - label: broken
    agentId: broken
    steps:
      - exec: "seq -f line-%g 1 30; echo 'FAILTAIL: missing module' >&2; (exit 3)"
`;

async function until(check: () => boolean, what: () => string, timeoutMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('skein fleet run: live progress', () => {
  let run: EmbeddedRun;
  let plan: string;

  beforeAll(async () => {
    run = await startEmbeddedCli({
      policy: { default: 'allow' },
      prepare: (_ws, dir) => {
        plan = join(dir, 'plan.yaml');
        writeFileSync(plan, PLAN);
      },
    });
  });
  afterAll(async () => run?.dispose());

  it("prints each step and a failed step's output tail as they happen, before the report", async () => {
    const fleet = startCli(['fleet', 'run', plan, '--data', run.data]);
    const failed = /\[\+\d+\.\ds\] broken ✗ exec seq -f line-%g .*: exited exit=3 \(\d+ ms\)/;
    // The two agents run side by side: broken's failure may show before slow's first step ends, so wait for both.
    await until(
      () =>
        failed.test(fleet.stderr()) &&
        /│ FAILTAIL: missing module\n/.test(fleet.stderr()) &&
        /\] slow → exec sleep 8\n/.test(fleet.stderr()),
      () => `stderr: ${fleet.stderr()}\nstdout: ${fleet.stdout()}`,
    );
    // Still running (slow sleeps), nothing of the final report yet.
    expect(fleet.child.exitCode).toBeNull();
    expect(fleet.stdout()).toBe('');
    const live = fleet.stderr();
    expect(live).toMatch(/\] slow spawned "slow" under main\n/);
    expect(live).toMatch(/\] broken spawned "broken" under main\n/);
    expect(live).toMatch(/\] slow ✓ exec echo slow-start: exited exit=0 \(\d+ ms\)\n/);
    expect(live).toMatch(/\] slow → exec sleep 8\n/);
    // The tail: the last 20 lines of output, the earlier ones counted, not shown.
    expect(live).toContain('      │ … (11 earlier lines not shown)\n');
    expect(live).toContain('      │ line-12\n');
    expect(live).toContain('      │ line-30\n      │ FAILTAIL: missing module\n');
    expect(live).not.toContain('│ line-11\n');

    const code = await fleet.exited;
    expect(code).toBe(1);
    expect(fleet.stderr()).toMatch(/\] broken "broken" failed: exec seq -f line-%g .*exit=3/);
    expect(fleet.stderr()).toMatch(/\] slow "slow" completed\n/);
    expect(fleet.stdout()).toMatch(/^slow "slow" → completed$/m);
    expect(fleet.stdout()).toMatch(/^broken "broken" → failed$/m);
    // Progress lines come before the report only on stderr: stdout is the report alone.
    expect(fleet.stdout()).not.toMatch(/\[\+/);
  }, 60_000);
});
