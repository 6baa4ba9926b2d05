/**
 * What a terminal's cgroup join costs (join-cost.ts), without I/O: the start's hint, said when the kernel's
 * `rcu_expedited` is 0 and naming the file and the value to write, nothing when it is set already or the kernel
 * has no such knob; and the early write of an open, one in flight at most and none after one failed. The live
 * write (the runtime stays in its cgroup) is in agent-cgroups.integration.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { joinCostHint, JoinWarmer } from '../../../actors/terminal/join-cost.ts';

function recorder() {
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  return {
    lines,
    log: { info: (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message }) },
  };
}

describe('joinCostHint', () => {
  it('names the setting and the command when rcu_expedited is 0', () => {
    const { lines, log } = recorder();
    joinCostHint(log as never, () => '0\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]!.fields).toEqual({ setting: '/sys/kernel/rcu_expedited', now: 0, suggested: 1 });
    expect(lines[0]!.message).toContain('echo 1 > /sys/kernel/rcu_expedited');
    expect(lines[0]!.message).toContain('system-wide');
  });

  it('says nothing when it is set already, or unreadable', () => {
    const { lines, log } = recorder();
    joinCostHint(log as never, () => '1\n');
    joinCostHint(log as never, () => {
      throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    });
    expect(lines).toEqual([]);
  });
});

describe('JoinWarmer', () => {
  const tick = () => new Promise((r) => setImmediate(r));

  it("writes the runtime's pid to the file it was given, one write in flight at most", async () => {
    const warmer = new JoinWarmer('/cg/own/cgroup.procs', { debug: () => {} });
    const writes: string[] = [];
    let finish: (() => void) | undefined;
    const slow = (file: string, data: string) => {
      writes.push(`${file} ${data}`);
      return new Promise<void>((resolve) => (finish = resolve));
    };
    for (let i = 0; i < 5; i++) warmer.warm(slow);
    expect(writes).toEqual([`/cg/own/cgroup.procs ${process.pid}`]);
    finish!();
    await tick();
    warmer.warm(slow);
    expect(writes).toHaveLength(2);
  });

  it('makes no write after one failed, and says why at debug level', async () => {
    const said: unknown[] = [];
    const warmer = new JoinWarmer('/cg/own/cgroup.procs', { debug: (fields: unknown) => void said.push(fields) });
    let calls = 0;
    warmer.warm(() => (calls++, Promise.reject(new Error('EACCES: permission denied'))));
    await tick();
    for (let i = 0; i < 3; i++) warmer.warm(() => (calls++, Promise.resolve()));
    expect(calls).toBe(1);
    expect(said).toEqual([{ err: 'EACCES: permission denied', file: '/cg/own/cgroup.procs' }]);
  });
});
