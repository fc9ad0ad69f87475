// The usage ledger: every model call's record, appended on the request path (a push into memory)
// and written to the database off it, in batches, at most `flushIntervalMs` after the first record
// of a batch arrived. A graceful stop writes everything; a kill -9 loses at most what arrived in
// the last interval. A write that fails is tried again at the next interval, the records kept (up
// to `maxBuffered`; past that the oldest are dropped, counted and logged). Records older than
// `retentionDays` are deleted in the background, a batch at a time.
import type { Logger } from 'pino';
import type { UsageRecord, UsageRecordsRepository } from './usage-records.repository.js';

export interface UsageLedgerOptions {
  repository: Pick<UsageRecordsRepository, 'insert' | 'deleteOlderThan'>;
  logger: Logger;
  /** Longest a record waits in memory before it is written (`usage.flush_interval_ms`). */
  flushIntervalMs: number;
  /** Records older than this many days are deleted; null keeps them all. */
  retentionDays: number | null;
  /** Records held in memory at most while the database does not take them. */
  maxBuffered?: number;
  now?: () => number;
}

/** Records written in one go at most: a burst is written in several. */
const maxBatch = 2000;
/** How often old records are looked for, and how many go per statement. */
const pruneEveryMs = 60 * 60 * 1000;
const pruneBatch = 5000;

export class UsageLedger {
  private buffered: UsageRecord[] = [];
  private timer: NodeJS.Timeout | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private writing: Promise<void> | null = null;
  private closed = false;
  private droppedCount = 0;
  private readonly maxBuffered: number;
  private readonly now: () => number;
  /** Told of each batch written (tests; the kill -9 measure). */
  private readonly listeners: Array<(count: number) => void> = [];

  constructor(private readonly options: UsageLedgerOptions) {
    this.maxBuffered = options.maxBuffered ?? 200_000;
    this.now = options.now ?? Date.now;
    if (options.retentionDays !== null) {
      this.pruneTimer = setInterval(() => void this.prune(), pruneEveryMs);
      this.pruneTimer.unref();
    }
  }

  /** Records not yet written. */
  get pending(): number {
    return this.buffered.length;
  }

  /** Records dropped because the database did not take them in time (a metric). */
  get dropped(): number {
    return this.droppedCount;
  }

  onWritten(listener: (count: number) => void): void {
    this.listeners.push(listener);
  }

  append(record: UsageRecord): void {
    this.buffered.push(record);
    if (this.buffered.length > this.maxBuffered) {
      const excess = this.buffered.length - this.maxBuffered;
      this.buffered.splice(0, excess);
      this.droppedCount += excess;
      this.options.logger.error(
        { dropped: excess },
        'usage records dropped: the database has not taken them for too long',
      );
    }
    if (this.timer === undefined && !this.closed) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush();
      }, this.options.flushIntervalMs);
    }
  }

  /** Writes what is buffered (one writer at a time); a failure keeps the records for the next. */
  flush(): Promise<void> {
    this.writing ??= this.write().finally(() => {
      this.writing = null;
    });
    return this.writing;
  }

  private async write(): Promise<void> {
    while (this.buffered.length > 0) {
      const batch = this.buffered.slice(0, maxBatch);
      try {
        await this.options.repository.insert(batch);
      } catch (error) {
        this.options.logger.warn(
          { err: error, records: this.buffered.length },
          'writing usage records failed; they are tried again',
        );
        if (!this.closed && this.timer === undefined) {
          this.timer = setTimeout(() => {
            this.timer = undefined;
            void this.flush();
          }, this.options.flushIntervalMs);
        }
        return;
      }
      this.buffered.splice(0, batch.length);
      for (const listener of this.listeners) listener(batch.length);
    }
  }

  /** Deletes records past the retention, a batch at a time. */
  async prune(): Promise<number> {
    const days = this.options.retentionDays;
    if (days === null) return 0;
    const before = new Date(this.now() - days * 86_400_000).toISOString();
    let deleted = 0;
    try {
      for (;;) {
        const count = await this.options.repository.deleteOlderThan(before, pruneBatch);
        deleted += count;
        if (count < pruneBatch || this.closed) break;
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'deleting old usage records failed');
    }
    return deleted;
  }

  /** Writes everything still buffered (a graceful stop), trying a failed write a few times. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.pruneTimer);
    for (let attempt = 0; attempt < 3 && this.buffered.length > 0; attempt += 1) {
      await this.flush();
    }
    if (this.buffered.length > 0) {
      this.options.logger.error(
        { records: this.buffered.length },
        'usage records could not be written before the service stopped',
      );
    }
  }
}
