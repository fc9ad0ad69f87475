// The job queues on their own: depth and outcomes observable (counts and events, what metrics
// read), a job never added twice while it waits or runs, and a running job handed over on close —
// in the process, and through BullMQ on the test Redis (where the handed-over job waits for
// another instance's worker).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { BullmqJobQueue } from '../src/jobs/bullmq-job-queue.js';
import {
  MemoryJobQueue,
  type JobEvent,
  type JobQueue,
  type JobResult,
  type RunJob,
} from '../src/jobs/job-queue.js';
import { redisTestUrl } from './support/dialects.js';
import { redisReachable } from './support/redis.js';

const withRedis = await redisReachable('job queue');
const clients: Redis[] = [];
afterAll(() => {
  for (const client of clients) client.disconnect();
});

interface QueueCase {
  name: string;
  make(): Promise<JobQueue>;
}

const errors: unknown[] = [];
const cases: QueueCase[] = [
  {
    name: 'in process',
    make: () =>
      Promise.resolve(
        new MemoryJobQueue({ concurrency: 1, onError: (_, error) => errors.push(error) }),
      ),
  },
];
if (withRedis) {
  const prefix = `test-queue-${randomBytes(6).toString('hex')}`;
  cases.push({
    name: 'BullMQ on Redis',
    async make() {
      const redis = new Redis(redisTestUrl, { lazyConnect: true });
      clients.push(redis);
      await redis.connect();
      return new BullmqJobQueue({
        redis,
        prefix,
        concurrency: 1,
        lockMs: 5000,
        onError: (_, error) => errors.push(error),
      });
    },
  });
}

/** Resolves when `events` holds an event of `type` for `executionId`. */
function eventOf(queue: JobQueue, type: JobEvent['type'], executionId: string): Promise<JobEvent> {
  return new Promise((resolve) => {
    const stop = queue.onEvent((event) => {
      if (event.type === type && event.job.executionId === executionId) {
        stop();
        resolve(event);
      }
    });
  });
}

describe.each(cases)('the job queue $name', (queueCase) => {
  const make = () => queueCase.make();
  it('counts waiting and active jobs, reports outcomes, and adds a job once', async () => {
    const queue = await make();
    const seen: string[] = [];
    queue.onEvent((event) => seen.push(`${event.type} ${event.job.executionId}`));
    const release: Array<() => void> = [];
    const handled: string[] = [];
    await queue.start(async (job: RunJob): Promise<JobResult> => {
      handled.push(job.executionId);
      await new Promise<void>((resolve) => release.push(resolve));
      return 'done';
    });
    const [a, b] = [
      `exec_a${randomBytes(4).toString('hex')}`,
      `exec_b${randomBytes(4).toString('hex')}`,
    ];
    const aStarted = eventOf(queue, 'started', a);
    await queue.enqueue({ executionId: a, accountId: 'acct_1' });
    await aStarted;
    await queue.enqueue({ executionId: b, accountId: 'acct_1' });
    // Both already known: neither is added again.
    await queue.enqueue({ executionId: a, accountId: 'acct_1' });
    await queue.enqueue({ executionId: b, accountId: 'acct_1' });
    expect(await queue.counts()).toMatchObject({ active: 1, waiting: 1 });

    const aDone = eventOf(queue, 'completed', a);
    const bStarted = eventOf(queue, 'started', b);
    release.shift()!();
    expect(await aDone).toMatchObject({ durationMs: expect.any(Number) });
    await bStarted;
    const bDone = eventOf(queue, 'completed', b);
    release.shift()!();
    await bDone;
    expect(handled).toEqual([a, b]);
    expect(await queue.counts()).toMatchObject({ active: 0, waiting: 0, completed: 2 });
    expect(seen.filter((line) => line.startsWith('completed'))).toEqual([
      `completed ${a}`,
      `completed ${b}`,
    ]);
    await queue.close();
    expect(errors).toEqual([]);
  });

  it('hands a running job over when it closes, and reports a handler failure', async () => {
    const queue = await make();
    const failing = `exec_f${randomBytes(4).toString('hex')}`;
    const running = `exec_r${randomBytes(4).toString('hex')}`;
    await queue.start((job, signal) => {
      if (job.executionId === failing) return Promise.reject(new Error('database gone'));
      return new Promise<JobResult>((resolve) =>
        signal.addEventListener('abort', () => resolve('handed-over'), { once: true }),
      );
    });
    const failed = eventOf(queue, 'failed', failing);
    await queue.enqueue({ executionId: failing, accountId: 'acct_1' });
    expect(await failed).toMatchObject({
      error: expect.objectContaining({ message: 'database gone' }),
    });
    expect(errors.splice(0)).toHaveLength(1);

    const started = eventOf(queue, 'started', running);
    await queue.enqueue({ executionId: running, accountId: 'acct_1' });
    await started;
    const handedOver = eventOf(queue, 'handed-over', running);
    await queue.close();
    await handedOver;
    if (queue.kind === 'redis') {
      // Waiting again, for the next worker on this Redis and prefix.
      const next = await make();
      expect(await next.counts()).toMatchObject({ waiting: 1, active: 0 });
      const taken: string[] = [];
      const done = eventOf(next, 'completed', running);
      await next.start((job) => {
        taken.push(job.executionId);
        return Promise.resolve('done');
      });
      await done;
      expect(taken).toContain(running);
      await next.close();
    }
  });
});
