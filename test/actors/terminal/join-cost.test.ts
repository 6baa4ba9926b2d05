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
  const quiet = { debug: () => {} };

  it("writes the runtime's pid where the runtime is now, one write in flight at most", async () => {
    let now = '/cg/own/cgroup.procs';
    const warmer = new JoinWarmer(() => now, quiet);
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
    // Moved since (an operator's choice): the next write goes where it is, never back where it was.
    now = '/cg/moved/cgroup.procs';
    warmer.warm(slow);
    expect(writes).toEqual([`/cg/own/cgroup.procs ${process.pid}`, `/cg/moved/cgroup.procs ${process.pid}`]);
  });

  it('makes no write after one failed, and says why at debug level', async () => {
    const said: unknown[] = [];
    const warmer = new JoinWarmer(() => '/cg/own/cgroup.procs', { debug: (fields: unknown) => void said.push(fields) });
    let calls = 0;
    warmer.warm(() => (calls++, Promise.reject(new Error('EACCES: permission denied'))));
    await tick();
    for (let i = 0; i < 3; i++) warmer.warm(() => (calls++, Promise.resolve()));
    expect(calls).toBe(1);
    expect(said).toEqual([{ err: 'EACCES: permission denied', file: '/cg/own/cgroup.procs' }]);
  });

  it('makes none when where the runtime is cannot be read, or is no cgroup of the hierarchy', () => {
    let calls = 0;
    const count = () => (calls++, Promise.resolve());
    const unreadable = new JoinWarmer(() => {
      throw new Error('EACCES: /proc/self/cgroup');
    }, quiet);
    const outside = new JoinWarmer(() => undefined, quiet);
    for (let i = 0; i < 2; i++) {
      unreadable.warm(count);
      outside.warm(count);
    }
    expect(calls).toBe(0);
  });
});
