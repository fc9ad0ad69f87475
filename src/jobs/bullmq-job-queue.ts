// The job queue on Redis, through BullMQ: every instance on the same Redis and prefix adds to one
// queue and works it. A job is locked by the worker running it and the lock renewed while it runs;
// when an instance dies the lock expires, BullMQ's stalled check (every half lock) moves the job
// back to waiting, and a live instance's worker takes it up and continues the run from its records.
// Imported only when REDIS_URL is set, so the embedded default never loads BullMQ.
import { Queue, WaitingError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  JobEvents,
  type JobCounts,
  type JobEvent,
  type JobHandler,
  type JobQueue,
  type RunJob,
} from './job-queue.js';

export interface BullmqJobQueueOptions {
  /** The service's Redis client; the queue and the worker open connections of their own from it. */
  redis: Redis;
  /** BullMQ's key prefix (its keys are `<prefix>:<queue name>:…`). */
  prefix: string;
  concurrency: number;
  /** How long a job's lock lasts without renewal: a dead instance's job waits about this long. */
  lockMs: number;
  /**
   * How long `enqueue` waits for Redis before answering anyway (the `jobs.enqueue_wait_ms`
   * setting, default 2 s): past it the job is held in this instance and added as soon as Redis
   * answers again.
   */
  enqueueWaitMs?: number;
  /** A handler's unexpected exception (BullMQ retries the job a few times). */
  onError(job: RunJob, error: unknown): void;
  /** A job held in this instance because Redis did not answer within `enqueueWaitMs`. */
  onHeld?(job: RunJob): void;
  now?: () => number;
}

const queueName = 'pipeline-runs';

export class BullmqJobQueue implements JobQueue {
  readonly kind = 'redis' as const;
  private readonly queue: Queue<RunJob>;
  private worker: Worker<RunJob, string> | null = null;
  private readonly events = new JobEvents();
  private readonly running = new Map<string, AbortController>();
  private readonly connections: Redis[] = [];
  private readonly held = new Set<Promise<void>>();
  private closing = false;
  private readonly now: () => number;

  constructor(private readonly options: BullmqJobQueueOptions) {
    this.now = options.now ?? Date.now;
    this.queue = new Queue<RunJob>(queueName, {
      connection: this.connection('queue'),
      prefix: options.prefix,
      defaultJobOptions: {
        // Only infrastructure failures reach BullMQ (a failed run is recorded, then done).
        attempts: 5,
        backoff: { type: 'exponential', delay: 1000 },
        removeOnComplete: { age: 24 * 3600, count: 10_000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      },
    });
  }

  /** A connection of its own: BullMQ blocks on the worker's, and needs commands never to give up. */
  private connection(role: string): Redis {
    const client = this.options.redis.duplicate({
      connectionName: `${this.options.prefix}-${role}`,
      maxRetriesPerRequest: null,
      enableOfflineQueue: true,
      lazyConnect: false,
    });
    // Connection errors are BullMQ's to retry; without a listener they would be thrown.
    client.on('error', () => undefined);
    this.connections.push(client);
    return client;
  }

  /**
   * Adds a job, waiting at most `enqueueWaitMs` for Redis. While Redis is unreachable the commands
   * wait in the client's offline queue; rather than hold the request for the whole outage, the job
   * is then held here and added when Redis answers (retried after a failure until the queue
   * closes). The run is recorded in the database first, so if this instance stops before that,
   * another one's recovery (the instances' heartbeat) queues it again: nothing answered 202 is lost.
   * A failure within the wait (Redis answering with an error) is the caller's to report.
   */
  async enqueue(job: RunJob): Promise<void> {
    const adding = this.add(job);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<'held'>((resolve) => {
      timer = setTimeout(() => resolve('held'), this.options.enqueueWaitMs ?? 2000);
      timer.unref();
    });
    try {
      if ((await Promise.race([adding.then(() => 'added' as const), waited])) === 'added') return;
    } finally {
      clearTimeout(timer);
    }
    this.options.onHeld?.(job);
    const held = adding
      .catch((error: unknown) => this.addUntilClosed(job, error))
      .finally(() => this.held.delete(held));
    this.held.add(held);
  }

  /** Jobs waiting for Redis to come back (see `enqueue`). */
  get heldCount(): number {
    return this.held.size;
  }

  private async addUntilClosed(job: RunJob, error: unknown): Promise<void> {
    for (let attempt = 0; !this.closing; attempt += 1) {
      this.options.onError(job, error);
      await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 1000 * 2 ** attempt)));
      if (this.closing) return;
      try {
        return await this.add(job);
      } catch (failure) {
        error = failure;
      }
    }
  }

  private async add(job: RunJob): Promise<void> {
    // The execution's id is the job's: adding it again while it waits or runs changes nothing. A
    // finished job of a run still recorded running (given up after failures of Redis or the
    // database) is removed first, or adding it again would change nothing either.
    const existing = await this.queue.getJob(job.executionId);
    if (existing !== undefined) {
      const state = await existing.getState();
      if (state === 'completed' || state === 'failed') await existing.remove();
    }
    await this.queue.add('run', job, { jobId: job.executionId });
    this.events.emit({ type: 'enqueued', job });
  }

  start(handler: JobHandler): Promise<void> {
    const worker = new Worker<RunJob, string>(
      queueName,
      async (job: Job<RunJob, string>, token?: string) => {
        const controller = new AbortController();
        this.running.set(job.data.executionId, controller);
        this.events.emit({ type: 'started', job: job.data });
        try {
          const result = await handler(job.data, controller.signal);
          if (result === 'handed-over') {
            // Back to waiting at once, for another instance, rather than after the lock expires.
            await job.moveToWait(token);
            this.events.emit({ type: 'handed-over', job: job.data });
            throw new WaitingError();
          }
          return result;
        } finally {
          this.running.delete(job.data.executionId);
        }
      },
      {
        connection: this.connection('worker'),
        prefix: this.options.prefix,
        concurrency: this.options.concurrency,
        lockDuration: this.options.lockMs,
        stalledInterval: Math.max(500, Math.floor(this.options.lockMs / 2)),
        // A run may outlive several instances (deploys); each stall is an instance gone.
        maxStalledCount: 10,
        autorun: false,
      },
    );
    // Outcomes once BullMQ has recorded them, so counts read after an event agree with it.
    worker.on('completed', (job: Job<RunJob, string>) =>
      this.events.emit({
        type: 'completed',
        job: job.data,
        durationMs: (job.finishedOn ?? this.now()) - (job.processedOn ?? this.now()),
      }),
    );
    worker.on('failed', (job: Job<RunJob, string> | undefined, error: Error) => {
      if (job === undefined || error instanceof WaitingError) return;
      this.events.emit({ type: 'failed', job: job.data, error });
      this.options.onError(job.data, error);
    });
    worker.on('error', (error: Error) =>
      this.options.onError({ executionId: '', accountId: '' }, error),
    );
    this.worker = worker;
    void worker
      .run()
      .catch((error: unknown) => this.options.onError({ executionId: '', accountId: '' }, error));
    return worker.waitUntilReady().then(() => undefined);
  }

  async counts(): Promise<JobCounts> {
    const counts = await this.queue.getJobCounts(
      'waiting',
      'active',
      'delayed',
      'failed',
      'completed',
    );
    return {
      waiting: counts.waiting ?? 0,
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
      failed: counts.failed ?? 0,
      completed: counts.completed ?? 0,
    };
  }

  onEvent(listener: (event: JobEvent) => void): () => void {
    return this.events.on(listener);
  }

  async close(): Promise<void> {
    // Jobs still held for Redis stay recorded running: another instance's recovery queues them.
    this.closing = true;
    // Running jobs are told to hand over; the worker waits for them, then stops. While Redis is
    // unreachable nothing can be handed over through it and a graceful close would wait for the
    // outage to end: the worker stops at once, and the runs, recorded running in the database, are
    // taken up by another instance's recovery (or by BullMQ when their locks expire).
    for (const controller of this.running.values()) controller.abort();
    const reachable = this.connections.every((client) => client.status === 'ready');
    await this.worker?.close(!reachable);
    await this.queue.close();
    // QUIT waits for a reply, which an unreachable Redis never sends: those are just dropped.
    await Promise.all(
      this.connections.map((client) =>
        client.status === 'ready'
          ? client.quit().then(
              () => undefined,
              () => client.disconnect(),
            )
          : Promise.resolve(client.disconnect()),
      ),
    );
  }
}
