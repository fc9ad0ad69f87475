import { defineConfig } from 'vitest/config';

/** Suites that measure latency: they run last, alone, so another file's CPU cannot skew them. */
const timingSensitive = ['test/http/robustness.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/support/global-setup.ts'],
    // Every test file fails when it leaves a built-in prototype changed (prototype pollution).
    setupFiles: ['test/support/no-pollution.ts'],
    reporters: ['default'],
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: timingSensitive,
          // Vitest's default is one worker fewer than the cores: one, on a two-core machine. Most
          // suites wait on sockets, databases and child processes rather than compute, so two
          // files at a time roughly halve the run there.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'timing',
          include: timingSensitive,
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
