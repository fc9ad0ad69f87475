// The order test files start in (vitest `sequence.sequencer`). Vitest starts the files that took
// longest in this checkout's last run first, and without such a record (a fresh clone, as in CI)
// the largest files first, which says little about time: a short file that drives Chromium outlasts
// most others. With two workers, a long file started last keeps the run going alone at its end, so
// the files known to be long start first, longest first, the rest in vitest's own order, and the
// container files last.
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

/**
 * Files that start after every other: the container files, which wait for the image that the
 * containers project's global setup began building before the first file. Its build takes about
 * two minutes with podman's layers from an earlier run, and four or more on a machine without
 * them. Started earlier, among the long files, the two of them held two of the three workers idle
 * for 80 s of a run whose image had no layers yet (6 min in all, against about 4.5 with them); last,
 * the image is built by then, or the other files have all run while it built.
 */
export const lastFiles = ['test/container/image.test.ts', 'test/container/compose.test.ts'];

export default class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const name = path.relative(file.project.config.root, file.moduleId).split(path.sep).join('/');
      const index = longFiles.indexOf(name);
      if (index !== -1) return index;
      const last = lastFiles.indexOf(name);
      return last === -1 ? longFiles.length : longFiles.length + 1 + last;
    };
    // Array.prototype.sort is stable: the others keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
