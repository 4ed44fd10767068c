import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two workers on two cores: most suites wait on child processes, git and sockets, and the default
    // (cores - 1) ran the files one at a time.
    maxWorkers: 2,
    // A FileHandle left to the garbage collector fails the run, naming the test that opened it.
    setupFiles: ['test/helpers/leak-guard.ts'],
    reporters: ['default'],
  },
});
