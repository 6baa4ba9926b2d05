import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globals: true,
    include: ['test/**/*.test.ts'],
    // node-pty is a native module and PTYs are per-process: forks isolate them.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
