import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  cgroupIn,
  cgroupPath,
  cgroupPaths,
  cgroupV1Dir,
  inCgroup,
  memoryBoundBytes,
  oomVictim,
  underOom,
} from '../../../machines/terminal/cgroup-v1.ts';
import { propertySeed } from '../../support/seed.ts';

const pidsCgroupDir = (mountinfo: string, cgroup: string) => cgroupV1Dir(mountinfo, cgroup, 'pids');

/** A mountinfo line of a cgroup v1 hierarchy: `root` of the hierarchy mounted at `at`, with `options`. */
const v1 = (id: number, root: string, at: string, options: string) =>
  `${id} 31 0:${id} ${root} ${at} rw,relatime - cgroup cgroup rw,${options}`;
const TMPFS = '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755';
const UNIFIED = '41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw';

describe('cgroupV1Dir: where this process sits in the pids hierarchy', () => {
  it('a v1 pids hierarchy mounted whole: the mount point plus its own cgroup path', () => {
    const mountinfo = [
      TMPFS,
      v1(35, '/', '/sys/fs/cgroup/memory', 'memory'),
      v1(39, '/', '/sys/fs/cgroup/pids', 'pids'),
    ];
    expect(pidsCgroupDir(mountinfo.join('\n'), '8:pids:/\n4:memory:/x\n0::/\n')).toEqual({
      ok: true,
      dir: '/sys/fs/cgroup/pids',
    });
    expect(pidsCgroupDir(mountinfo.join('\n'), '8:pids:/user.slice/u1\n')).toEqual({
      ok: true,
      dir: '/sys/fs/cgroup/pids/user.slice/u1',
    });
  });

  it('a container sees its own cgroup mounted as the root: the path is taken relative to it', () => {
    const mountinfo = v1(39, '/docker/abc', '/sys/fs/cgroup/pids', 'pids');
    expect(pidsCgroupDir(mountinfo, '8:pids:/docker/abc\n')).toEqual({ ok: true, dir: '/sys/fs/cgroup/pids' });
    expect(pidsCgroupDir(mountinfo, '8:pids:/docker/abc/job\n')).toEqual({
      ok: true,
      dir: '/sys/fs/cgroup/pids/job',
    });
    // A path beside the mounted root is not reachable through this mount (nor is a name that only starts alike).
    expect(pidsCgroupDir(mountinfo, '8:pids:/docker/abcd\n')).toMatchObject({ ok: false });
  });

  it('pids shared with other controllers in one hierarchy, and a mount point with an escaped space', () => {
    const mountinfo = v1(33, '/', '/sys/fs/my\\040cgroups', 'cpu,pids');
    expect(pidsCgroupDir(mountinfo, '3:cpu,pids:/a\n')).toEqual({ ok: true, dir: '/sys/fs/my cgroups/a' });
  });

  it('cgroup v2 only, no cgroups at all, or a pids cgroup that is not mounted: the reason', () => {
    expect(pidsCgroupDir(`${TMPFS}\n${UNIFIED}`, '0::/user.slice\n')).toEqual({
      ok: false,
      reason: 'only cgroup v2 is mounted (the limit uses a cgroup v1 pids hierarchy)',
    });
    expect(pidsCgroupDir('', '')).toEqual({ ok: false, reason: 'no pids cgroup hierarchy is mounted' });
    expect(pidsCgroupDir(TMPFS, '8:pids:/a\n')).toEqual({
      ok: false,
      reason: "this process's pids cgroup (/a) is not mounted here",
    });
  });
});

describe('cgroupV1Dir: the memory hierarchy, beside the pids one', () => {
  it('each controller is found in its own hierarchy, with its own path', () => {
    const mountinfo = [
      TMPFS,
      v1(35, '/', '/sys/fs/cgroup/memory', 'memory'),
      v1(39, '/', '/sys/fs/cgroup/pids', 'pids'),
    ].join('\n');
    const cgroup = '8:pids:/\n4:memory:/process_api/af78\n0::/\n';
    expect(cgroupV1Dir(mountinfo, cgroup, 'memory')).toEqual({
      ok: true,
      dir: '/sys/fs/cgroup/memory/process_api/af78',
    });
    expect(cgroupV1Dir(mountinfo, cgroup, 'pids')).toEqual({ ok: true, dir: '/sys/fs/cgroup/pids' });
    // `memory` is not `memsw` or any other name that only contains it.
    expect(cgroupV1Dir(v1(35, '/', '/m', 'memsw'), '4:memory:/\n', 'memory')).toMatchObject({ ok: false });
    expect(cgroupV1Dir(mountinfo, '8:pids:/\n', 'memory')).toEqual({
      ok: false,
      reason: 'no memory cgroup hierarchy is mounted',
    });
  });
});

describe('memoryBoundBytes: a memory bound setting in bytes', () => {
  it('bytes stay as they are; a share of the available memory is rounded down to whole pages', () => {
    expect(memoryBoundBytes(0, 8 << 30)).toBe(0);
    expect(memoryBoundBytes(123_456_789, 8 << 30)).toBe(123_456_789);
    expect(memoryBoundBytes('50%', 8 << 30)).toBe(4 << 30);
    expect(memoryBoundBytes('100%', 10_000)).toBe(8192);
    expect(memoryBoundBytes('33%', 1_000_000)).toBe(327_680);
  });
});

describe('the OOM decision at the bound of all agents', () => {
  const oomControl = (under: 0 | 1) => `oom_kill_disable 1\nunder_oom ${under}\noom_kill 0\n`;

  it('reads under_oom from memory.oom_control', () => {
    expect(underOom(oomControl(1))).toBe(true);
    expect(underOom(oomControl(0))).toBe(false);
    expect(underOom('')).toBe(false);
  });

  it('chooses the terminal holding the most memory, among those with a process left', () => {
    const leaves = [
      { terminalId: 'small', bytes: 10, processes: 3 },
      { terminalId: 'pinner', bytes: 150, processes: 1 },
      { terminalId: 'empty', bytes: 400, processes: 0 },
      { terminalId: 'neighbour', bytes: 90, processes: 2 },
    ];
    expect(oomVictim(leaves)).toBe('pinner');
    expect(oomVictim(leaves.filter((l) => l.terminalId !== 'pinner'))).toBe('neighbour');
    expect(oomVictim([leaves[2]!])).toBeUndefined();
    expect(oomVictim([])).toBeUndefined();
  });
});

describe('inCgroup: a process found by its own /proc/<pid>/cgroup, however deep it hid', () => {
  const text =
    '9:name=systemd:/\n8:pids:/skein-1-ab/agents/a1/t-x/d0/x\n4:memory:/api/h/skein-1-ab/agents/a1/t-x\n0::/\n';

  it('is in a cgroup, or any cgroup below it, of the controller asked', () => {
    expect(cgroupPath(text, 'pids')).toBe('/skein-1-ab/agents/a1/t-x/d0/x');
    expect(inCgroup(text, 'pids', '/skein-1-ab/agents/a1/t-x')).toBe(true);
    expect(inCgroup(text, 'pids', '/skein-1-ab/agents/a1/t-x/d0/x')).toBe(true);
    expect(inCgroup(text, 'memory', '/api/h/skein-1-ab/agents/a1/t-x')).toBe(true);
  });

  it('is not in a sibling whose name only starts alike, a cgroup below it, or a hierarchy it lacks', () => {
    expect(inCgroup(text, 'pids', '/skein-1-ab/agents/a1/t-')).toBe(false);
    expect(inCgroup(text, 'pids', '/skein-1-ab/agents/a1/t-x/d0/x/y')).toBe(false);
    // The memory path is the pids one's prefix, not the other way round.
    expect(inCgroup(text, 'memory', '/skein-1-ab/agents/a1/t-x')).toBe(false);
    expect(inCgroup('0::/skein-1-ab/agents/a1/t-x\n', 'pids', '/skein-1-ab')).toBe(false);
    expect(cgroupPath('0::/\n', 'memory')).toBeUndefined();
  });
});

describe('cgroupIn: the scan of every process, one parse and a lookup per prefix', () => {
  const leaves = new Map([
    [
      'pids',
      new Map([
        ['/skein-1-ab/agents/a1/t-x', 'x'],
        ['/skein-1-ab/agents/a1/sub/t-y', 'y'],
      ]),
    ],
    ['memory', new Map([['/api/h/skein-1-ab/agents/a1/t-x', 'x']])],
  ]);
  const longest = 40;

  it('finds the leaf a process hid below, by either hierarchy, and no sibling whose name only starts alike', () => {
    const text = '8:pids:/skein-1-ab/agents/a1/t-x/d0/x\n4:memory:/api/h/other\n0::/\n';
    expect(cgroupIn(cgroupPaths(text), leaves, longest)).toBe('x');
    expect(cgroupIn(cgroupPaths('8:pids:/skein-1-ab/agents/a1/t-xy\n4:memory:/\n'), leaves, longest)).toBeUndefined();
    expect(cgroupIn(cgroupPaths('8:pids:/\n4:memory:/api/h/skein-1-ab/agents/a1/t-x\n'), leaves, longest)).toBe('x');
    expect(cgroupIn(cgroupPaths('8:pids:/skein-1-ab/agents/a1/sub/t-y\n'), leaves, longest)).toBe('y');
    expect(cgroupIn(cgroupPaths('8:pids:/skein-1-ab/agents/a1\n'), leaves, longest)).toBeUndefined();
  });

  const seed = propertySeed();
  it(`property: agrees with inCgroup on any path (fast-check seed ${seed})`, () => {
    const segment = fc.constantFrom('skein-1-ab', 'agents', 'a1', 'sub', 't-x', 't-y', 't-xy', 'd0', 'x', 'api');
    const path = fc.array(segment, { maxLength: 8 }).map((s) => `/${s.join('/')}`);
    fc.assert(
      fc.property(path, path, (pids, memory) => {
        const text = `8:pids:${pids}\n4:memory:${memory}\n`;
        const expected = [...leaves].flatMap(([controller, paths]) =>
          [...paths].filter(([p]) => inCgroup(text, controller as 'pids' | 'memory', p)).map(([, v]) => v),
        );
        const found = cgroupIn(cgroupPaths(text), leaves, longest);
        if (expected.length === 0) expect(found).toBeUndefined();
        else expect(expected).toContain(found);
      }),
      { seed, numRuns: 2000 },
    );
  });
});
