// WAL checkpoints off the event loop. better-sqlite3 is synchronous: with SQLite's automatic
// checkpoint, the commit that takes the write-ahead log past 1,000 pages also copies them into the
// database file, holding the loop for that whole copy (a 5 MB knowledge document: 250–550 ms).
// The service's connection has automatic checkpoints off; a worker thread with its own
// connection to the same file checkpoints (PASSIVE: it never waits for a lock nor blocks a
// writer) whenever the log has grown past the same size.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

export interface CheckpointerOptions {
  /** Checkpoint once the log holds this many bytes (SQLite's default: 1,000 pages of 4 KiB). */
  thresholdBytes?: number;
  /** How often the log's size is looked at. */
  intervalMs?: number;
}

// CommonJS in an eval'd worker: it needs no file of its own in the build.
const workerSource = `
const { workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.driver);
const database = new Database(workerData.file, { timeout: 0 });
const log = workerData.file + '-wal';
setInterval(() => {
  try {
    const size = statSync(log, { throwIfNoEntry: false })?.size ?? 0;
    if (size >= workerData.thresholdBytes) database.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or gone: the next tick tries again.
  }
}, workerData.intervalMs);
`;

/** Starts the checkpointing thread for `file`; the returned function stops it. */
export function startCheckpointer(file: string, options: CheckpointerOptions = {}): () => void {
  const worker = new Worker(workerSource, {
    eval: true,
    workerData: {
      file,
      driver: require.resolve('better-sqlite3'),
      thresholdBytes: options.thresholdBytes ?? 4 * 1024 * 1024,
      intervalMs: options.intervalMs ?? 250,
    },
  });
  worker.unref();
  worker.on('error', () => undefined);
  return () => void worker.terminate();
}
