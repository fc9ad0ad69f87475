// Retries of upstream calls on 408, 409, 429, 5xx and unreachable servers (the AI SDK marks these
// APICallErrors retryable), waiting as the answer's retry-after(-ms) header says when it says so,
// else with exponential backoff. Gives up early when the request is aborted.
import { APICallError } from '@ai-sdk/provider';
import { RequestAbortedError } from '../spec.js';

/**
 * Every attempt failed; the last failure is kept for the error mapping and the logs. `cutShort`:
 * a time limit of the call ran out while waiting to retry, so the failure to report is still the
 * provider's (its last answer), not a timeout of the model.
 */
export class RetriesExhaustedError extends Error {
  constructor(
    readonly lastError: unknown,
    readonly attempts: number,
    readonly cutShort = false,
  ) {
    super(`failed after ${attempts} attempts`, { cause: lastError });
    this.name = 'RetriesExhaustedError';
  }
}

export interface RetryOptions {
  maxRetries: number;
  signal: AbortSignal;
  initialDelayMs?: number;
  backoffFactor?: number;
  /** Called as a wait between attempts begins (true) and ends (false): no time of the model's. */
  onWait?: (waiting: boolean) => void;
}

/** Waits longer than this are not honoured (the backoff is used instead). */
const longestHonouredWaitMs = 60_000;

/** The server's requested wait in ms, from `retry-after-ms` or `retry-after` (seconds or a date). */
export function retryAfterMs(error: APICallError, now = Date.now()): number | null {
  const headers = error.responseHeaders ?? {};
  const milliseconds = Number.parseFloat(headers['retry-after-ms'] ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const value = headers['retry-after'];
  if (value === undefined) return null;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** How long to wait before retry number `attempt + 1`: as the server asks, else backoff. */
export function retryWaitMs(
  error: APICallError,
  attempt: number,
  initialDelayMs = 2000,
  backoffFactor = 2,
): number {
  const backoff = initialDelayMs * backoffFactor ** attempt;
  const requested = retryAfterMs(error);
  return requested !== null && (requested < longestHonouredWaitMs || requested < backoff)
    ? requested
    : backoff;
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new RequestAbortedError();
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export async function withRetries<T>(
  call: () => PromiseLike<T>,
  options: RetryOptions,
): Promise<T> {
  const initialDelayMs = options.initialDelayMs ?? 2000;
  const backoffFactor = options.backoffFactor ?? 2;
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      const retryable = APICallError.isInstance(error) && error.isRetryable;
      if (!retryable || options.signal.aborted) {
        throw attempt === 0 ? error : new RetriesExhaustedError(error, attempt + 1);
      }
      if (attempt >= options.maxRetries) throw new RetriesExhaustedError(error, attempt + 1);
      options.onWait?.(true);
      try {
        await sleep(retryWaitMs(error, attempt, initialDelayMs, backoffFactor), options.signal);
      } catch (interrupted) {
        // The client leaving is reported as such; a time limit ending the wait is not the model
        // timing out: what failed is still the provider's last answer.
        if (interrupted instanceof RequestAbortedError) throw interrupted;
        throw new RetriesExhaustedError(error, attempt + 1, true);
      } finally {
        options.onWait?.(false);
      }
    }
  }
}
