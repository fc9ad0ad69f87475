// The text worker threads, where client Markdown and HTML are parsed.
import { availableParallelism } from 'node:os';
import type { Static } from 'typebox';
import { Closed, OptionalInteger } from './config-kit.js';

export const TextFileSchema = Closed({
  worker_threads: OptionalInteger(1, 64),
  max_queue: OptionalInteger(1, 10_000),
  timeout_ms: OptionalInteger(100, 600_000),
  timeout_ms_per_mib: OptionalInteger(0, 600_000),
  max_heap_mb: OptionalInteger(64, 16_384),
});

export function textConfig(file: Static<typeof TextFileSchema> = {}) {
  return {
    workerThreads: file.worker_threads ?? Math.max(1, Math.min(4, availableParallelism() - 1)),
    maxQueue: file.max_queue ?? 64,
    timeoutMs: file.timeout_ms ?? 2000,
    timeoutMsPerMib: file.timeout_ms_per_mib ?? 6000,
    maxHeapMb: file.max_heap_mb ?? 1024,
  };
}
