// A request's cancellation without an AbortSignal unless one is asked for: the client's hang-up,
// and the end of a stream's key.
//
// Node 20 makes each AbortSignal through `new EventTarget()` and `Object.setPrototypeOf`: one per
// plain chat completion cost about 9 % of its CPU (bench/results/gateway-profile.md), though the
// lean OpenAI-compatible path only needs to know whether, and when, to stop. A `Cancel` answers
// `aborted` and takes 'abort' listeners like an AbortSignal; `signal` makes the real one for the
// APIs that take it (fetch, the AI SDK, local engines, tools), aborted at once (with the same
// reason) if the cancellation came first.
import type { ServerResponse } from 'node:http';

type Listener = () => void;

export class Cancel {
  private done = false;
  private why: unknown = undefined;
  private controller: AbortController | null = null;
  private listeners: Listener[] | null = null;

  /** Whether it was cancelled. */
  get aborted(): boolean {
    return this.done;
  }

  /** An AbortSignal aborted when this is (made on first use). */
  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      if (this.done) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  /** Calls `listener` once when cancelled (as an AbortSignal's `addEventListener('abort', …)`). */
  addEventListener(type: 'abort', listener: Listener, options?: { once?: boolean }): void {
    void type;
    void options;
    if (this.done) return;
    const listeners = (this.listeners ??= []);
    // Added once however often, as an EventTarget does.
    if (!listeners.includes(listener)) listeners.push(listener);
  }

  removeEventListener(type: 'abort', listener: Listener): void {
    void type;
    if (this.listeners === null) return;
    const index = this.listeners.indexOf(listener);
    if (index !== -1) this.listeners.splice(index, 1);
  }

  /** Cancels (once): the listeners are called, and the signal aborted with `reason` if made. */
  abort(reason?: unknown): void {
    if (this.done) return;
    this.done = true;
    this.why = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners === null) return;
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        // As an EventTarget does: the other listeners still run; the error is thrown afterwards.
        process.nextTick(() => {
          throw error;
        });
      }
    }
  }
}

/** Cancelled when the client hangs up: `response` closes before it was wholly written. */
export function hangUpOf(response: ServerResponse): Cancel {
  const cancel = new Cancel();
  response.once('close', () => {
    if (!response.writableFinished) cancel.abort();
  });
  return cancel;
}

/** A request's cancellation: an AbortSignal, or a `Cancel`. */
export type Cancellation = AbortSignal | Cancel;

/** The AbortSignal of a cancellation, for the APIs that take one. */
export function signalOf(cancellation: Cancellation): AbortSignal {
  return cancellation instanceof Cancel ? cancellation.signal : cancellation;
}
