import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globals: true,
    include: ['test/**/*.test.ts'],
    // node-pty is a native module and PTYs are per-process: forks isolate them.
    pool: 'forks',
    // vitest's default is one worker per core minus one: a single worker on CI's 2 cores, while most files wait
    // on PTYs, brokers and child processes. Two workers ran the whole suite in 664 s instead of 1,099 s (load 13-17,
    // every test green).
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
