/**
 * @module
 * Linux syscall numbers for perl's `syscall` in tests that reach the kernel directly from a sandbox (x86_64,
 * aarch64): `inotify_init1`, `inotify_add_watch`, `memfd_create`, `unshare`, `mount`.
 */
export const NR =
  process.arch === 'arm64'
    ? { init: 26, watch: 27, memfd: 279, unshare: 97, mount: 40 }
    : { init: 294, watch: 254, memfd: 319, unshare: 272, mount: 165 };
