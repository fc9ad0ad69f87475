// The order test files start in (vitest `sequence.sequencer`). Vitest starts the files that took
// longest in this checkout's last run first, and without such a record (a fresh clone, as in CI)
// the largest files first, which says little about time: a short file that drives Chromium outlasts
// most others. With two workers, a long file started last keeps the run going alone at its end, so
// the files known to be long start first, longest first, and the rest in vitest's own order.
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import path from 'node:path';

/**
 * Files that take far longer than the others, longest first (`--reporter=json`'s per-file times;
 * docs/contributing.md#tests). A file missing from here only starts later.
 */
export const longFiles = [
  'test/realtime/voice-stream.test.ts',
  'test/e2e/dashboard.test.ts',
  'test/http/loop-blocking.test.ts',
  'test/http/hostile-text.test.ts',
  'test/http/no-growth.test.ts',
  'test/process.test.ts',
  'test/docs-examples.test.ts',
  'test/approval-restart.test.ts',
  'test/http/fuzz.test.ts',
  'test/http/openai-audio.test.ts',
  'test/http/bad-audio.test.ts',
  'test/http/audit-chain.test.ts',
  'test/http/speech.test.ts',
  // The container files wait for the image, whose build the containers project's global setup
  // started before the first file (about a minute, several on a machine without its layers): they
  // start once the files above have run, by when it is usually built, rather than holding both
  // workers while it builds.
  'test/container/image.test.ts',
  'test/container/compose.test.ts',
  'test/http/deployments.test.ts',
  'test/usage-kill.test.ts',
  'test/http/knowledge-storing.test.ts',
  'test/storage.test.ts',
  'test/e2e/voice.test.ts',
  'test/http/tool-agent-safety.test.ts',
  'test/http/transcription-concurrency.test.ts',
  'test/http/mcp-answers.test.ts',
  'test/required-services.test.ts',
];

export default class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = longFiles.indexOf(
        path.relative(file.project.config.root, file.moduleId).split(path.sep).join('/'),
      );
      return index === -1 ? longFiles.length : index;
    };
    // Array.prototype.sort is stable: the others keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
