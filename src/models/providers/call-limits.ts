// One call's time limits and cancellation for the lean OpenAI-compatible path
// (./openai-compatible-chat-model.ts), without an AbortController of its own.
import type { ClientRequest } from 'node:http';
import { RequestAbortedError, type UpstreamError } from '../spec.js';
import { explainDeadlineFailure } from './deadline-failure.js';

/**
 * One call's time limits and cancellation, without an AbortController of its own: the total and
 * idle timers and the client's signal destroy the upstream request in flight (or end a retry's
 * wait), and `explain` says afterwards which of them it was.
 */
export class CallLimits {
  private readonly totalTimer: NodeJS.Timeout;
  private idleTimer: NodeJS.Timeout | undefined;
  private timedOut: 'total' | 'idle' | null = null;
  private current: ClientRequest | null = null;
  private wake: (() => void) | null = null;
  private listening = false;

  constructor(
    private readonly clientSignal: AbortSignal,
    private readonly totalMs: number,
    private readonly idleMs: number | null,
  ) {
    this.totalTimer = setTimeout(() => this.stop('total'), totalMs);
    this.touch();
  }

  /** True once the client left or a limit passed: nothing more is to be sent upstream. */
  get stopped(): boolean {
    return this.timedOut !== null || this.clientSignal.aborted;
  }

  private readonly onClientAbort = () => this.stop(null);

  private stop(which: 'total' | 'idle' | null): void {
    if (which !== null) this.timedOut ??= which;
    this.current?.destroy(new RequestAbortedError());
    this.wake?.();
  }

  /** Whether a time limit (not the client) stopped the call. */
  get timedOutNow(): boolean {
    return this.timedOut !== null && !this.clientSignal.aborted;
  }

  /** The request now in flight, destroyed if a limit passes or the client leaves. */
  attach(request: ClientRequest): void {
    this.current = request;
    this.touch();
    if (!this.listening) {
      this.listening = true;
      this.clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
    }
    if (this.stopped) request.destroy(new RequestAbortedError());
  }

  /** The model just sent something: its silence starts again. */
  touch(): void {
    if (this.idleMs === null) return;
    // One timer for the whole call, pushed back rather than replaced.
    if (this.idleTimer === undefined) {
      this.idleTimer = setTimeout(() => this.stop('idle'), this.idleMs);
    } else this.idleTimer.refresh();
  }

  /**
   * Waits between retries; ends early (rejecting) when the call is stopped. The service's own
   * waiting is not the model's silence: the idle timer stops meanwhile and starts afresh with the
   * next attempt (`attach`).
   */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.stopped) {
        reject(new RequestAbortedError());
        return;
      }
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        reject(new RequestAbortedError());
      };
      if (!this.listening) {
        this.listening = true;
        this.clientSignal.addEventListener('abort', this.onClientAbort, { once: true });
      }
    });
  }

  explain(error: unknown, describe: (error: unknown) => UpstreamError): Error {
    return explainDeadlineFailure(
      {
        clientAborted: this.clientSignal.aborted,
        timedOut: this.timedOut,
        totalMs: this.totalMs,
        idleMs: this.idleMs,
      },
      error,
      describe,
    );
  }

  dispose(): void {
    clearTimeout(this.totalTimer);
    clearTimeout(this.idleTimer);
    if (this.listening) this.clientSignal.removeEventListener('abort', this.onClientAbort);
  }
}
