import { describe, expect, it } from 'vitest';
import { RequestAbortedError, UpstreamError } from '../spec.js';
import { FairQueue } from './fair-queue.js';

const never = new AbortController().signal;

describe('FairQueue', () => {
  it('serves waiting keys round-robin, not first come first served', async () => {
    const queue = new FairQueue(1, 100, 'model');
    const release = await queue.acquire('busy', never);
    const order: string[] = [];
    const waits = [
      ...['busy-1', 'busy-2', 'busy-3'].map((label) =>
        queue.acquire('busy', never).then((done) => {
          order.push(label);
          done();
        }),
      ),
      queue.acquire('quiet', never).then((done) => {
        order.push('quiet-1');
        done();
      }),
    ];
    release();
    await Promise.all(waits);
    expect(order).toEqual(['busy-1', 'quiet-1', 'busy-2', 'busy-3']);
  });

  it('refuses beyond the bound with a 503 that says why', async () => {
    const queue = new FairQueue(1, 1, "Model 'tiny'");
    const release = await queue.acquire('a', never);
    const waiting = queue.acquire('a', never);
    await expect(queue.acquire('b', never)).rejects.toSatisfy(
      (error: unknown) =>
        error instanceof UpstreamError && error.status === 503 && /busy/.test(error.message),
    );
    release();
    (await waiting)();
    expect(queue.size).toEqual({ running: 0, waiting: 0 });
  });

  it('lets a waiter whose client left give up its place', async () => {
    const queue = new FairQueue(1, 10, 'model');
    const release = await queue.acquire('a', never);
    const controller = new AbortController();
    const abandoned = queue.acquire('b', controller.signal);
    const next = queue.acquire('c', never);
    controller.abort();
    await expect(abandoned).rejects.toBeInstanceOf(RequestAbortedError);
    expect(queue.size.waiting).toBe(1);
    release();
    (await next)();
    expect(queue.size).toEqual({ running: 0, waiting: 0 });
  });
});
