import { defineConfig } from 'vitest/config';
import LongFilesFirst from './test/support/sequencer.js';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/no-pollution.ts'],
    reporters: ['default'],
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Vitest's default is one worker fewer than the cores: one, on a two-core machine. Most
    // suites wait on sockets, databases and child processes rather than compute, so two files at
    // a time roughly halve the run there. No test asserts a wall-clock bound (the event-loop tests
    // compare with a control measured in the same run), so none needs to run alone.
    maxWorkers: 2,
    // The few files that take far longer than the rest start first (test/support/sequencer.ts).
    sequence: { sequencer: LongFilesFirst },
  },
});
