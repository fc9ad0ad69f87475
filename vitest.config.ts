import { defineConfig } from 'vitest/config';
import LongFilesFirst from './test/support/sequencer.js';

/**
 * Files that measure their own process: its heap, its event loop's blocks, or the CPU time of a
 * computation as it grows. They run each in a fresh process (`isolate: true`), so that nothing an
 * earlier file left behind (a closing server, a garbage heap, a worker thread winding down) is in
 * what they measure.
 */
export const cleanProcessFiles = [
  'src/modules/knowledge/chunker.test.ts',
  'src/text/markdown.test.ts',
  'src/text/segments.test.ts',
  'src/text/sentences.test.ts',
  'src/validation/schema-validator.test.ts',
  'test/http/bad-audio.test.ts',
  'test/http/error-serialization.test.ts',
  'test/http/hostile-text.test.ts',
  'test/http/loop-blocking.test.ts',
  'test/http/mcp-answers.test.ts',
  'test/http/no-growth.test.ts',
  'test/http/robustness.test.ts',
  'test/http/telemetry.test.ts',
  'test/http/tool-agent-safety.test.ts',
  'test/realtime/no-growth.test.ts',
];

const include = ['src/**/*.test.ts', 'test/**/*.test.ts'];

/**
 * Files that build and run the container image (podman): minutes, not seconds, most of it the
 * image's build, which they share (test/support/containers.ts) and which the project's global
 * setup starts in the background. A project of their own, with a time limit that only stops a
 * hang; they skip, saying why, where podman is missing.
 */
const containerFiles = ['test/container/**/*.test.ts'];

export default defineConfig({
  test: {
    // Time limits only stop a test that hangs; none is a bound on speed. Generous, so that a
    // machine two CPU burners slow down (or a CI runner's noisy neighbour) fails nothing: under such
    // load some suites took over 30 s that take a few seconds alone.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/no-pollution.ts'],
    reporters: ['default'],
    // Vitest's default is one worker fewer than the cores: one, on a two-core machine. Most
    // suites wait on sockets, databases, child processes and a browser rather than compute, so on
    // two cores three files at a time keep both busy: 277 s against 300-309 s with two workers, for
    // 4 % more CPU (each worker loads the modules once); four took longer again (283 s). No test
    // asserts a wall-clock bound (the event-loop tests compare with a control measured in the same
    // run), so none needs to run alone. (Set here, not with --maxWorkers: the projects below take
    // the configuration's value.)
    maxWorkers: 3,
    // Tests marked concurrent (two files whose tests each wait out a server's or a provider's
    // timers, doing nothing meanwhile) all wait at once: vitest's default lets five at a time.
    maxConcurrency: 20,
    // The few files that take far longer than the rest start first (test/support/sequencer.ts).
    sequence: { sequencer: LongFilesFirst },
    projects: [
      {
        // Most files share a worker process and its loaded modules with the files before them
        // (`isolate: false`): each file no longer imports Fastify, the AI SDK and the service's
        // own modules afresh, which was a fifth of the suite's time. Every suite builds its own
        // app and database, so no state is shared but the modules' code.
        extends: true,
        test: {
          name: 'shared',
          include,
          exclude: [...cleanProcessFiles, ...containerFiles],
          isolate: false,
        },
      },
      {
        extends: true,
        test: { name: 'clean-process', include: cleanProcessFiles, isolate: true },
      },
      {
        extends: true,
        test: {
          name: 'containers',
          include: containerFiles,
          // The image's build starts before the first file and runs beside the others.
          globalSetup: ['test/support/image-build-setup.ts'],
          isolate: true,
          testTimeout: 15 * 60_000,
          hookTimeout: 60 * 60_000,
        },
      },
    ],
  },
});
