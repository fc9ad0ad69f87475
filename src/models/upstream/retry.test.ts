import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { RequestAbortedError } from '../spec.js';
import { CallLimits } from './call-limits.js';
import { RetriesExhaustedError, retryAfterMs, retryWaitMs, withRetries } from './retry.js';

function apiError(status: number | undefined, headers: Record<string, string> = {}) {
  return new APICallError({
    message: `HTTP ${status}`,
    url: 'http://upstream/v1/chat/completions',
    requestBodyValues: {},
    ...(status === undefined ? {} : { statusCode: status }),
    responseHeaders: headers,
    isRetryable:
      status === undefined || status === 408 || status === 409 || status === 429 || status >= 500,
  });
}

/** Limits no test reaches: an hour, and a client that never leaves. */
const open = (signal = new AbortController().signal) => new CallLimits(signal, 3_600_000);

describe('retryAfterMs', () => {
  it('reads retry-after-ms, retry-after seconds and retry-after dates', () => {
    expect(retryAfterMs(apiError(429, { 'retry-after-ms': '250' }))).toBe(250);
    expect(retryAfterMs(apiError(429, { 'retry-after': '2' }))).toBe(2000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(
      retryAfterMs(apiError(503, { 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now),
    ).toBe(3000);
    expect(retryAfterMs(apiError(500))).toBeNull();
  });
});

describe('retryWaitMs', () => {
  it('waits as asked below the longest honoured wait, else backs off exponentially', () => {
    expect(retryWaitMs(apiError(503), 0)).toBe(2000);
    expect(retryWaitMs(apiError(503), 2)).toBe(8000);
    expect(retryWaitMs(apiError(429, { 'retry-after': '7' }), 0)).toBe(7000);
    // An hour is not honoured; the backoff is used instead.
    expect(retryWaitMs(apiError(429, { 'retry-after': '3600' }), 1)).toBe(4000);
    // The speech engines' policy: a shorter first backoff, shorter waits honoured.
    const speech = { initialDelayMs: 500, longestHonouredWaitMs: 10_000 };
    expect(retryWaitMs(apiError(503), 1, speech)).toBe(1000);
    expect(retryWaitMs(apiError(429, { 'retry-after': '7' }), 0, speech)).toBe(7000);
    expect(retryWaitMs(apiError(429, { 'retry-after': '30' }), 0, speech)).toBe(500);
  });
});

describe('withRetries', () => {
  it('retries retryable failures, waiting as the server asks, then succeeds', async () => {
    const failures = [
      apiError(429, { 'retry-after-ms': '30' }),
      apiError(500, { 'retry-after-ms': '30' }),
    ];
    const times: number[] = [];
    const limits = open();
    const result = await withRetries(
      () => {
        times.push(Date.now());
        const failure = failures.shift();
        return failure === undefined ? Promise.resolve('ok') : Promise.reject(failure);
      },
      limits,
      { maxRetries: 2 },
    );
    limits.dispose();
    expect(result).toBe('ok');
    expect(times).toHaveLength(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(25);
  });

  it('does not retry a 400, and reports the attempts when retries run out', async () => {
    let calls = 0;
    const limits = open();
    await expect(
      withRetries(
        () => {
          calls += 1;
          return Promise.reject(apiError(400));
        },
        limits,
        { maxRetries: 3 },
      ),
    ).rejects.toBeInstanceOf(APICallError);
    expect(calls).toBe(1);
    await expect(
      withRetries(() => Promise.reject(apiError(503, { 'retry-after-ms': '1' })), limits, {
        maxRetries: 2,
      }),
    ).rejects.toSatisfy(
      (error: unknown) => error instanceof RetriesExhaustedError && error.attempts === 3,
    );
    limits.dispose();
  });
});

describe('withRetries, stopped', () => {
  it('stops waiting when the client leaves, and says so', async () => {
    const controller = new AbortController();
    const limits = open(controller.signal);
    let attempts = 0;
    // The server asks for ten minutes: only the hang-up can end the wait within the test's time.
    const pending = withRetries(
      () => {
        attempts += 1;
        return Promise.reject(apiError(429, { 'retry-after': '600' }));
      },
      limits,
      { maxRetries: 5 },
    );
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toBeInstanceOf(RequestAbortedError);
    limits.dispose();
    expect(attempts).toBe(1);
  });

  it('reports the provider’s last failure when a time limit ends a wait (cut short)', async () => {
    const limits = new CallLimits(new AbortController().signal, 30);
    const pending = withRetries(
      () => Promise.reject(apiError(500, { 'retry-after': '600' })),
      limits,
      {
        maxRetries: 5,
      },
    );
    const error: unknown = await pending.catch((failure: unknown) => failure);
    limits.dispose();
    expect(error).toBeInstanceOf(RetriesExhaustedError);
    expect((error as RetriesExhaustedError).cutShort).toBe(true);
    expect((error as RetriesExhaustedError).attempts).toBe(1);
  });
});
