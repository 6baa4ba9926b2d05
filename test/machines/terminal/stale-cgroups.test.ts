import { describe, expect, it } from 'vitest';
import { runtimeCgroupName, staleVerdict } from '../../../machines/terminal/stale-cgroups.ts';

const me = { pid: 100, start: '5000', pidns: '4026531836' };
/** Processes alive now: pid → start time. */
const alive = (procs: Record<number, string>) => (pid: number) => procs[pid];

describe('staleVerdict', () => {
  const other = (pid: number, start: string, pidns = me.pidns) => runtimeCgroupName({ pid, start, pidns }, 'ab12');

  it('names a runtime by pid, random part, start time and pid namespace', () => {
    expect(runtimeCgroupName(me, '0f0f')).toBe('skein-100-0f0f-s5000-n4026531836');
  });

  it('kills what a runtime of this namespace left when its process is gone, or its pid is another process now', () => {
    expect(staleVerdict(other(200, '7000'), me, alive({ 100: '5000' }))).toBe('kill');
    // Pid 200 was reused by a process that started later: not the runtime that made the cgroup.
    expect(staleVerdict(other(200, '7000'), me, alive({ 200: '9000' }))).toBe('kill');
    // This process has the pid of a runtime that died before it started.
    expect(staleVerdict(other(100, '4000'), me, alive({ 100: '5000' }))).toBe('kill');
  });

  it('leaves a runtime that is alive, and this process own cgroups (several runtimes in one process)', () => {
    expect(staleVerdict(other(200, '7000'), me, alive({ 200: '7000' }))).toBe('skip');
    expect(staleVerdict(other(100, '5000'), me, alive({ 100: '5000' }))).toBe('skip');
  });

  it("only removes when empty what it cannot tell dead: another namespace's, or an older skein's", () => {
    const foreign = other(300, '7000', '4026532000');
    expect(staleVerdict(foreign, me, alive({}))).toBe('remove-empty');
    expect(staleVerdict(foreign, me, alive({ 300: '1' }))).toBe('skip');
    expect(staleVerdict(other(100, '1', '4026532000'), me, alive({ 100: '5000' }))).toBe('skip');
    expect(staleVerdict('skein-300-ab12', me, alive({}))).toBe('remove-empty');
    // A namespace neither could read says nothing either.
    const unread = { ...me, pidns: '0' };
    expect(staleVerdict(runtimeCgroupName({ pid: 300, start: '7000', pidns: '0' }, 'ab'), unread, alive({}))).toBe(
      'remove-empty',
    );
    expect(staleVerdict('skein-300-ab12', me, alive({ 300: '1' }))).toBe('skip');
    expect(staleVerdict('skein-100-ab12', me, alive({ 100: '5000' }))).toBe('skip');
  });

  it('touches nothing that is not a runtime cgroup', () => {
    for (const name of [
      'user.slice',
      'skein',
      'skein-x-ab',
      'skein-1-AB',
      'skein-1-ab-s1',
      'skein-1-ab-s1-n2-x',
      'a1',
    ]) {
      expect(staleVerdict(name, me, alive({}))).toBe('skip');
    }
  });
});
