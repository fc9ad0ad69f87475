// WAL checkpoints off the event loop. better-sqlite3 is synchronous: with SQLite's automatic
// checkpoint, the commit that takes the write-ahead log past 1,000 pages also copies them into the
// database file, holding the loop for that whole copy (a 5 MB knowledge document: 250–550 ms).
// The service's connection has automatic checkpoints off; a worker thread with its own
// connection to the same file checkpoints (PASSIVE: it never waits for a lock nor blocks a
// writer) whenever the log has grown past the same size. The thread (an isolate and a connection:
// ~15 MiB) runs only while the log needs it: the log's size is looked at from the event loop (an
// asynchronous stat), the thread started when it is past the size and stopped once it has had
// nothing to do for a while. The service's connection has a `journal_size_limit`, so a log
// checkpointed whole shrinks back when it is next written.
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const require = createRequire(import.meta.url);

export interface CheckpointerOptions {
  /** Checkpoint once the log holds this many bytes (SQLite's default: 1,000 pages of 4 KiB). */
  thresholdBytes?: number;
  /** How often the log's size is looked at. */
  intervalMs?: number;
  /** How long the thread stays once the log is below the size again. */
  idleStopMs?: number;
}

/** The checkpointing of one database file. */
export interface Checkpointer {
  stop(): void;
  /** Whether the checkpointing thread is running now. */
  readonly threadRunning: boolean;
}

/** The default `thresholdBytes`, for the connection's `journal_size_limit` below it. */
export const checkpointThresholdBytes = 4 * 1024 * 1024;

// CommonJS in an eval'd worker: it needs no file of its own in the build. One checkpoint per
// message; busy or gone, the next message tries again.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const database = new Database(workerData.file, { timeout: 0 });
parentPort.on('message', () => {
  try {
    database.pragma('wal_checkpoint(PASSIVE)');
  } catch {}
});
`;

/** Watches the log of `file`, checkpointing it in a thread of its own while it is large. */
export function startCheckpointer(file: string, options: CheckpointerOptions = {}): Checkpointer {
  const thresholdBytes = options.thresholdBytes ?? checkpointThresholdBytes;
  const idleStopMs = options.idleStopMs ?? 30_000;
  const log = `${file}-wal`;
  let worker: Worker | null = null;
  let lastNeeded = 0;
  let looking = false;
  const startWorker = (): Worker => {
    const started = new Worker(workerSource, {
      eval: true,
      workerData: { file, driver: require.resolve('better-sqlite3') },
    });
    started.unref();
    started.on('error', () => {
      if (worker === started) worker = null;
    });
    return started;
  };
  const look = async () => {
    const size = await stat(log).then(
      (found) => found.size,
      () => 0,
    );
    const now = Date.now();
    if (size >= thresholdBytes) {
      lastNeeded = now;
      (worker ??= startWorker()).postMessage('checkpoint');
    } else if (worker !== null && now - lastNeeded >= idleStopMs) {
      void worker.terminate();
      worker = null;
    }
  };
  const timer = setInterval(() => {
    if (looking) return;
    looking = true;
    void look().finally(() => {
      looking = false;
    });
  }, options.intervalMs ?? 250);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      void worker?.terminate();
      worker = null;
    },
    get threadRunning() {
      return worker !== null;
    },
  };
}
