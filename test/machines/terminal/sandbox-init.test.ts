/**
 * The sandbox's init, as data (sandbox-init.ts): the inotify share and its floors, the settings it writes, and what
 * it refuses. The live counterparts: test/actors/terminal/sandbox-init.integration.test.ts (the script in bwrap)
 * and test/hostile/sandbox-pinning.integration.test.ts (the attacks).
 */
import { describe, expect, it } from 'vitest';
import {
  initScript,
  initSettings,
  inotifyShare,
  MIN_INOTIFY_INSTANCES,
  MIN_INOTIFY_WATCHES,
} from '../../../machines/terminal/sandbox-init.ts';

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

describe('the init script', () => {
  const limits = { inotifyInstances: 6, inotifyWatches: 9627 };

  it('writes shm_rmid_forced, both inotify maxima and no user namespaces, then makes /proc/sys read-only', () => {
    expect(initSettings(limits)).toEqual([
      ['/proc/sys/kernel/shm_rmid_forced', '1'],
      ['/proc/sys/user/max_inotify_instances', '6'],
      ['/proc/sys/user/max_inotify_watches', '9627'],
      ['/proc/sys/user/max_user_namespaces', '0'],
    ]);
    const script = initScript(limits, { mount: '/usr/bin/mount', setpriv: '/usr/bin/setpriv' });
    const ro = script.indexOf('/usr/bin/mount --bind -o ro /proc/sys /proc/sys');
    expect(ro).toBeGreaterThan(script.indexOf('max_user_namespaces'));
    expect(ro).toBeLessThan(script.indexOf('exec /usr/bin/setpriv'));
  });

  it('refuses a limit that is not a whole number ≥ 1, and a setpriv path a shell would split', () => {
    expect(() => initSettings({ inotifyInstances: 0, inotifyWatches: 1024 })).toThrow(/inotifyInstances/);
    expect(() => initSettings({ inotifyInstances: 1, inotifyWatches: 1.5 })).toThrow(/inotifyWatches/);
    expect(() => initScript(limits, { mount: '/bin/mount', setpriv: 'setpriv' })).toThrow(/setpriv path/);
    const odd = { mount: '/bin/mount; rm -rf ~', setpriv: '/usr/bin/setpriv' };
    expect(() => initScript(limits, odd)).toThrow(/mount path 'x?\/bin\/mount; rm -rf ~' must be absolute/);
  });
});
