// The queue that carries background runs: a job names an execution whose records (and stored plan)
// are the truth, so any instance that takes the job up can continue the run. Two implementations:
// in this process (the embedded default; a stopped instance's runs are taken up again through the
// executions' heartbeat) and BullMQ on Redis (bullmq-job-queue.ts; a dead worker's job is moved
// back to waiting when its lock expires and another instance's worker takes it).

/** A background run to carry out: the execution, and the account it belongs to. */
export interface RunJob {
  executionId: string;
  accountId: string;
}

/**
 * How a handler left a job: `done` (the run is recorded finished, or was already), or
 * `handed-over` (this instance is stopping; the run stays running for another instance).
 */
export type JobResult = 'done' | 'handed-over';

/** Carries out one job; `signal` aborts when this instance stops and the run should be handed over. */
export type JobHandler = (job: RunJob, signal: AbortSignal) => Promise<JobResult>;

/** What happened to a job, for metrics and logs. */
export type JobEvent =
  | { type: 'enqueued'; job: RunJob }
  | { type: 'started'; job: RunJob }
  | { type: 'completed'; job: RunJob; durationMs: number }
  | { type: 'handed-over'; job: RunJob }
  | { type: 'failed'; job: RunJob; error: unknown };

/** Jobs by state, as the queue counts them (this instance's for the in-process queue). */
export interface JobCounts {
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  completed: number;
}

export interface JobQueue {
  /** `memory`: this process only; `redis`: shared by every instance on the same Redis and prefix. */
  readonly kind: 'memory' | 'redis';
  /** Adds a job; a job for an execution already waiting or running is not added twice. */
  enqueue(job: RunJob): Promise<void>;
  /** Starts taking jobs with `handler`. */
  start(handler: JobHandler): Promise<void>;
  counts(): Promise<JobCounts>;
  /** Calls `listener` with every job event of this instance; returns a function that stops it. */
  onEvent(listener: (event: JobEvent) => void): () => void;
  /** Stops taking jobs, aborts the running ones (they hand over) and waits for them. */
  close(): Promise<void>;
}

/** The listeners of a queue's events; one listener's exception does not reach the others. */
export class JobEvents {
  private readonly listeners = new Set<(event: JobEvent) => void>();

  on(listener: (event: JobEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(event: JobEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // A listener (metrics, logs) must not break the queue.
      }
    }
  }
}

export interface MemoryJobQueueOptions {
  concurrency: number;
  /** A handler's unexpected exception (the run is left to the heartbeat's recovery). */
  onError(job: RunJob, error: unknown): void;
  now?: () => number;
}

/** Jobs in this process: first in, first out, `concurrency` at a time. */
export class MemoryJobQueue implements JobQueue {
  readonly kind = 'memory' as const;
  private readonly waiting: RunJob[] = [];
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly events = new JobEvents();
  private readonly totals = { completed: 0, failed: 0 };
  private handler: JobHandler | null = null;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly options: MemoryJobQueueOptions) {
    this.now = options.now ?? Date.now;
  }

  enqueue(job: RunJob): Promise<void> {
    if (this.closed) {
      return Promise.reject(new Error('the job queue is closed'));
    }
    if (
      !this.active.has(job.executionId) &&
      !this.waiting.some((waiting) => waiting.executionId === job.executionId)
    ) {
      this.waiting.push(job);
      this.events.emit({ type: 'enqueued', job });
      this.pump();
    }
    return Promise.resolve();
  }

  start(handler: JobHandler): Promise<void> {
    this.handler = handler;
    this.pump();
    return Promise.resolve();
  }

  counts(): Promise<JobCounts> {
    return Promise.resolve({
      waiting: this.waiting.length,
      active: this.active.size,
      delayed: 0,
      failed: this.totals.failed,
      completed: this.totals.completed,
    });
  }

  onEvent(listener: (event: JobEvent) => void): () => void {
    return this.events.on(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    // Waiting jobs stay recorded as running; the heartbeat's recovery takes them up elsewhere.
    this.waiting.length = 0;
    const running = [...this.active.values()];
    for (const run of running) run.controller.abort();
    await Promise.all(running.map((run) => run.done));
  }

  private pump(): void {
    const handler = this.handler;
    if (handler === null || this.closed) return;
    while (this.active.size < this.options.concurrency && this.waiting.length > 0) {
      const job = this.waiting.shift()!;
      const controller = new AbortController();
      const started = this.now();
      this.events.emit({ type: 'started', job });
      const done = handler(job, controller.signal)
        .then(
          (result) => {
            this.active.delete(job.executionId);
            if (result === 'handed-over') {
              this.events.emit({ type: 'handed-over', job });
              return;
            }
            this.totals.completed += 1;
            this.events.emit({ type: 'completed', job, durationMs: this.now() - started });
          },
          (error: unknown) => {
            this.active.delete(job.executionId);
            this.totals.failed += 1;
            this.events.emit({ type: 'failed', job, error });
            this.options.onError(job, error);
          },
        )
        .finally(() => this.pump());
      this.active.set(job.executionId, { controller, done });
    }
  }
}
