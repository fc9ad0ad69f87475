import { APICallError } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { RetriesExhaustedError, retryAfterMs, withRetries } from './retry.js';

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

const never = new AbortController().signal;

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

describe('withRetries', () => {
  it('retries retryable failures, waiting as the server asks, then succeeds', async () => {
    const failures = [
      apiError(429, { 'retry-after-ms': '30' }),
      apiError(500, { 'retry-after-ms': '30' }),
    ];
    const times: number[] = [];
    const result = await withRetries(
      () => {
        times.push(Date.now());
        const failure = failures.shift();
        return failure === undefined ? Promise.resolve('ok') : Promise.reject(failure);
      },
      { maxRetries: 2, signal: never },
    );
    expect(result).toBe('ok');
    expect(times).toHaveLength(3);
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(25);
  });

  it('does not retry a 400, and reports the attempts when retries run out', async () => {
    let calls = 0;
    await expect(
      withRetries(
        () => {
          calls += 1;
          return Promise.reject(apiError(400));
        },
        { maxRetries: 3, signal: never },
      ),
    ).rejects.toBeInstanceOf(APICallError);
    expect(calls).toBe(1);
    await expect(
      withRetries(() => Promise.reject(apiError(503, { 'retry-after-ms': '1' })), {
        maxRetries: 2,
        signal: never,
      }),
    ).rejects.toSatisfy(
      (error: unknown) => error instanceof RetriesExhaustedError && error.attempts === 3,
    );
  });

  it('stops waiting when the request is aborted', async () => {
    const controller = new AbortController();
    let attempts = 0;
    // The server asks for ten minutes: only the abort can end the wait within the test's time.
    const pending = withRetries(
      () => {
        attempts += 1;
        return Promise.reject(apiError(429, { 'retry-after': '600' }));
      },
      { maxRetries: 5, signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toBeInstanceOf(Error);
    expect(attempts).toBe(1);
  });
});
