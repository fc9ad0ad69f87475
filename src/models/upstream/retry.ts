// Retries of upstream calls, for every provider path: a failure is retried when it is an
// APICallError marked retryable (the AI SDK marks 408, 409, 429, 5xx and unreachable servers so;
// the lean client and the speech engines raise the same errors), after the wait the answer's
// retry-after-ms / retry-after header asks for when it asks for one, else exponential backoff.
// The waits are the call's limits' (./call-limits.ts): ended when the client leaves or a time
// limit runs out, and not counted as the upstream's silence.
import { APICallError } from '@ai-sdk/provider';
import type { AttemptBudget } from './attempt-budget.js';

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

/** How often and how long to retry; the defaults are the chat providers'. */
export interface RetryPolicy {
  readonly maxRetries: number;
  /** The first backoff (default 2 s), multiplied by `backoffFactor` (default 2) each time. */
  readonly initialDelayMs?: number;
  readonly backoffFactor?: number;
  /** A requested wait this long or longer is not honoured unless the backoff is longer still. */
  readonly longestHonouredWaitMs?: number;
}

/** What the retries need of the call's limits (a CallLimits, ./call-limits.ts). */
export interface RetryWaits {
  /** The client left or a limit passed: no further attempt is made. */
  readonly stopped: boolean;
  /** A time limit (not the client) stopped the call. */
  readonly timedOutNow: boolean;
  /** Waits, rejecting early when the call is stopped. */
  sleep(ms: number): Promise<void>;
  /** The request's budget of upstream calls, when it has one: each attempt takes from it. */
  readonly attempts?: AttemptBudget | undefined;
}

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
  policy: Omit<RetryPolicy, 'maxRetries'> = {},
): number {
  const backoff = (policy.initialDelayMs ?? 2000) * (policy.backoffFactor ?? 2) ** attempt;
  const requested = retryAfterMs(error);
  const longest = policy.longestHonouredWaitMs ?? 60_000;
  return requested !== null && (requested < longest || requested < backoff) ? requested : backoff;
}

/** Runs `attempt` until it succeeds, fails for good, the retries run out or the call stops. */
export async function withRetries<T>(
  attempt: () => PromiseLike<T>,
  waits: RetryWaits,
  policy: RetryPolicy,
): Promise<T> {
  for (let index = 0; ; index += 1) {
    // The first call's attempt was checked by whoever chose to make it (the registry, a
    // deployment router); it is taken here with every retry's.
    waits.attempts?.take();
    try {
      return await attempt();
    } catch (error) {
      const retryable = APICallError.isInstance(error) && error.isRetryable;
      if (!retryable || waits.stopped) {
        throw index === 0 ? error : new RetriesExhaustedError(error, index + 1);
      }
      if (
        index >= policy.maxRetries ||
        (waits.attempts !== undefined && waits.attempts.left === 0)
      ) {
        throw new RetriesExhaustedError(error, index + 1);
      }
      try {
        await waits.sleep(retryWaitMs(error, index, policy));
      } catch (interrupted) {
        // A time limit ending the wait is not the model timing out: what failed is still the
        // provider's last answer (reported as such, streamed or not). The client leaving is
        // reported as such.
        if (waits.timedOutNow) throw new RetriesExhaustedError(error, index + 1, true);
        throw interrupted;
      }
    }
  }
}
