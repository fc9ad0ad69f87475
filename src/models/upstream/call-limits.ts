// One upstream call's time limits and cancellation, for every provider path (the lean
// OpenAI-compatible client, the AI SDK's providers, the speech engines): the total timeout, the
// idle timeout of a stream, the client's hang-up, the waits between retries (./retry.ts) kept out
// of the model's silence, and the error that says afterwards which of them ended the call.
import type { ClientRequest } from 'node:http';
import { RequestAbortedError, UpstreamError } from '../spec.js';
import { RetriesExhaustedError } from './retry.js';
import type { AttemptBudget } from './attempt-budget.js';
import type { Cancellation } from '../../net/hang-up.js';

type Limit = 'total' | 'idle';

/**
 * Stops the call when the client goes away, when the whole call takes longer than `totalMs`, or
 * (for a stream: `idleMs` not null) when the upstream stays silent for `idleMs` — before its first
 * part or between two; a model that drips a token every few seconds is stopped by the total.
 * Stopping destroys the `node:http` request in flight (`attach`), ends a retry's wait, and aborts
 * `signal` for the APIs that take one (fetch, the AI SDK): the AbortController behind it is made
 * only when asked for, which the lean path never does (it costs CPU on every request).
 */
export class CallLimits {
  private readonly totalTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | undefined;
  private timedOut: Limit | null = null;
  private current: ClientRequest | null = null;
  private controller: AbortController | null = null;
  /** The waits between retries now running (several for an embedding split into calls). */
  private wakers: Set<() => void> | null = null;
  private listening = false;

  constructor(
    private readonly clientSignal: Cancellation,
    private readonly totalMs: number,
    private readonly idleMs: number | null = null,
    /** The request's budget of upstream calls (`max_attempts`), taken from by each retry. */
    readonly attempts?: AttemptBudget,
  ) {
    this.totalTimer = setTimeout(() => this.stop('total'), totalMs);
    this.touch();
  }

  /** True once the client left or a limit passed: nothing more is to be sent upstream. */
  get stopped(): boolean {
    return this.timedOut !== null || this.clientSignal.aborted;
  }

  /** Whether a time limit (not the client) stopped the call. */
  get timedOutNow(): boolean {
    return this.timedOut !== null && !this.clientSignal.aborted;
  }

  /** Aborted when the call stops (with a RequestAbortedError, or a TimeoutError for a limit). */
  get signal(): AbortSignal {
    if (this.controller === null) {
      this.controller = new AbortController();
      this.listen();
      if (this.stopped) this.controller.abort(this.reason());
    }
    return this.controller.signal;
  }

  private readonly onClientAbort = () => this.stop(null);

  private listen(): void {
    if (this.listening) return;
    this.listening = true;
    this.clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
  }

  private reason(): Error {
    return this.timedOutNow
      ? new DOMException('model timed out', 'TimeoutError')
      : new RequestAbortedError();
  }

  private stop(which: Limit | null): void {
    if (which !== null) this.timedOut ??= which;
    this.current?.destroy(new RequestAbortedError());
    if (this.controller !== null && !this.controller.signal.aborted) {
      this.controller.abort(this.reason());
    }
    if (this.wakers !== null) for (const wake of this.wakers) wake();
  }

  /** The `node:http` request now in flight, destroyed if a limit passes or the client leaves. */
  attach(request: ClientRequest): void {
    this.current = request;
    this.touch();
    this.listen();
    if (this.stopped) request.destroy(new RequestAbortedError());
  }

  /** The upstream just sent something: its silence starts again. */
  touch(): void {
    if (this.idleMs === null) return;
    // One timer for the whole call, pushed back rather than replaced.
    if (this.idleTimer === undefined) {
      this.idleTimer = setTimeout(() => this.stop('idle'), this.idleMs);
    } else this.idleTimer.refresh();
  }

  /**
   * Waits between retries; ends early (rejecting) when the call is stopped. The service's own
   * waiting is not the upstream's silence: the idle timer stops meanwhile and starts afresh when
   * the wait ends.
   */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.stopped) {
        reject(new RequestAbortedError());
        return;
      }
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
      const wakers = (this.wakers ??= new Set());
      const timer = setTimeout(() => {
        wakers.delete(wake);
        this.touch();
        resolve();
      }, ms);
      const wake = () => {
        clearTimeout(timer);
        wakers.delete(wake);
        reject(new RequestAbortedError());
      };
      wakers.add(wake);
      this.listen();
    });
  }

  /**
   * The error to surface for a failure seen while these limits ran: the client went away (no
   * answer is owed), the total timeout (`timeout_ms`) or the idle timeout (`idle_timeout_ms`) ran
   * out (504), or else the failure as the caller's `describe` reports the upstream's.
   */
  explain(error: unknown, describe: (error: unknown) => UpstreamError): Error {
    if (this.clientSignal.aborted) return new RequestAbortedError();
    // A limit that ran out while waiting to retry ended the retries, not an answer in progress:
    // the client hears what the upstream answered (502 for its HTTP 500), streamed or not.
    if (error instanceof RetriesExhaustedError && error.cutShort) return describe(error);
    if (this.timedOut === 'total') {
      return new UpstreamError(
        'upstream_timeout',
        `The model did not finish its answer within ${this.totalMs} ms (timeout_ms).`,
        { cause: error },
      );
    }
    if (this.timedOut === 'idle') {
      return new UpstreamError(
        'upstream_timeout',
        `The model sent nothing for ${this.idleMs ?? 0} ms (idle_timeout_ms).`,
        { cause: error },
      );
    }
    return describe(error);
  }

  /** Ends the call if it is still running through `signal` (its consumer stopped reading). */
  cancel(): void {
    if (this.controller !== null && !this.controller.signal.aborted) {
      this.controller.abort(new RequestAbortedError());
    }
  }

  dispose(): void {
    clearTimeout(this.totalTimer);
    clearTimeout(this.idleTimer);
    if (this.listening) this.clientSignal.removeEventListener('abort', this.onClientAbort);
  }
}
