// Admission to a scarce resource (a local model's context sequences) shared fairly: waiting
// requests are served round-robin between keys (accounts), so one busy tenant cannot starve the
// others; the number waiting is bounded, and a waiter whose client leaves gives up its place.
import { RequestAbortedError, UpstreamError } from '../spec.js';

interface Waiter {
  key: string;
  grant: (release: () => void) => void;
  reject: (error: Error) => void;
  signal: AbortSignal;
  onAbort: () => void;
}

export class FairQueue {
  private running = 0;
  private waitingCount = 0;
  /** Waiters per key, and the keys in the order they are next served. */
  private readonly waiting = new Map<string, Waiter[]>();
  private readonly rotation: string[] = [];

  constructor(
    private readonly capacity: number,
    private readonly maxWaiting: number,
    private readonly describe: string,
  ) {}

  get size(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waitingCount };
  }

  /** Resolves with a release function once a slot is free; call it exactly once when done. */
  acquire(key: string, signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(new RequestAbortedError());
    if (this.running < this.capacity && this.waitingCount === 0) {
      this.running += 1;
      return Promise.resolve(this.releaser());
    }
    if (this.waitingCount >= this.maxWaiting) {
      return Promise.reject(
        new UpstreamError(
          'model_unavailable',
          `${this.describe} is busy: ${this.running} request(s) running and ${this.waitingCount} waiting, the most it queues. Retry shortly.`,
          { retryAfterSeconds: 1, fallbackWorthy: true },
        ),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        key,
        grant: resolve,
        reject,
        signal,
        onAbort: () => {
          this.remove(waiter);
          reject(new RequestAbortedError());
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      let queue = this.waiting.get(key);
      if (queue === undefined) {
        queue = [];
        this.waiting.set(key, queue);
        this.rotation.push(key);
      }
      queue.push(waiter);
      this.waitingCount += 1;
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      this.dispatch();
    };
  }

  private dispatch(): void {
    while (this.running < this.capacity && this.rotation.length > 0) {
      const key = this.rotation.shift()!;
      const queue = this.waiting.get(key)!;
      const waiter = queue.shift()!;
      this.waitingCount -= 1;
      // A key with more waiters goes to the back of the rotation: one turn each.
      if (queue.length > 0) this.rotation.push(key);
      else this.waiting.delete(key);
      waiter.signal.removeEventListener('abort', waiter.onAbort);
      this.running += 1;
      waiter.grant(this.releaser());
    }
  }

  private remove(waiter: Waiter): void {
    const queue = this.waiting.get(waiter.key);
    if (queue === undefined) return;
    const index = queue.indexOf(waiter);
    if (index === -1) return;
    queue.splice(index, 1);
    this.waitingCount -= 1;
    if (queue.length === 0) {
      this.waiting.delete(waiter.key);
      this.rotation.splice(this.rotation.indexOf(waiter.key), 1);
    }
  }
}
