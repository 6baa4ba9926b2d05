/**
 * The start's hint about what a terminal's cgroup join costs (`joinCostHint`, agent-cgroups.ts): said once when
 * the kernel's `rcu_expedited` is 0, naming the file and the value to write; nothing when it is set already or
 * the kernel has no such knob.
 */
import { describe, expect, it } from 'vitest';
import { joinCostHint } from '../../../actors/terminal/agent-cgroups.ts';

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
