/**
 * The sandbox's kernel settings, as data (sandbox-sysctls.ts): the inotify share and its floors, the settings
 * bwrap writes, and what is refused. The live counterparts: test/actors/terminal/sandbox-sysctls.integration.test.ts
 * (bwrap writes them) and test/hostile/sandbox-pinning.integration.test.ts (the attacks).
 */
import { describe, expect, it } from 'vitest';
import {
  inotifyShare,
  MIN_INOTIFY_INSTANCES,
  MIN_INOTIFY_WATCHES,
  sandboxSysctls,
} from '../../../machines/terminal/sandbox-sysctls.ts';

describe('inotifyShare', () => {
  it('takes the share of both maxima, rounded down', () => {
    expect(inotifyShare('5%', { instances: 128, watches: 192_546 })).toEqual({
      inotifyInstances: 6,
      inotifyWatches: 9627,
    });
    expect(inotifyShare('100%', { instances: 8192, watches: 1_000_000 })).toEqual({
      inotifyInstances: 8192,
      inotifyWatches: 1_000_000,
    });
  });

  it('never goes below one instance and 1,024 watches', () => {
    expect(inotifyShare('1%', { instances: 8, watches: 8192 })).toEqual({
      inotifyInstances: MIN_INOTIFY_INSTANCES,
      inotifyWatches: MIN_INOTIFY_WATCHES,
    });
  });
});

describe('sandboxSysctls', () => {
  it('writes shm_rmid_forced and both inotify maxima, in that order (bwrap itself allows no user namespace)', () => {
    expect(sandboxSysctls({ inotifyInstances: 6, inotifyWatches: 9627 })).toEqual([
      ['/proc/sys/kernel/shm_rmid_forced', '1'],
      ['/proc/sys/user/max_inotify_instances', '6'],
      ['/proc/sys/user/max_inotify_watches', '9627'],
    ]);
  });

  it('refuses a limit that is not a whole number ≥ 1, naming it', () => {
    expect(() => sandboxSysctls({ inotifyInstances: 0, inotifyWatches: 1024 })).toThrow(/inotifyInstances/);
    expect(() => sandboxSysctls({ inotifyInstances: 1, inotifyWatches: 1.5 })).toThrow(/inotifyWatches .* 1\.5/);
    expect(() => sandboxSysctls({ inotifyInstances: Number.NaN, inotifyWatches: 1024 })).toThrow(/NaN/);
  });
});
