// The one block of time limits every provider path uses, on fake timers (no test here depends on
// the machine's speed): which limit fired and what the client hears, the idle timer held while
// the service waits between retries, the client's hang-up, and the signal made only on request.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequestAbortedError, UpstreamError } from '../spec.js';
import { CallLimits } from './call-limits.js';
import { RetriesExhaustedError } from './retry.js';

const upstreamFailure = (cause: unknown) =>
  new UpstreamError('upstream_error', 'The provider failed.', { cause });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('CallLimits: which limit fired', () => {
  it('says the total timeout fired, and aborts its signal with a TimeoutError', () => {
    const limits = new CallLimits(new AbortController().signal, 1000, 300);
    const { signal } = limits;
    for (let step = 0; step < 9; step += 1) {
      vi.advanceTimersByTime(100);
      limits.touch();
    }
    expect(limits.stopped).toBe(false);
    vi.advanceTimersByTime(100);
    expect(limits.stopped).toBe(true);
    expect(limits.timedOutNow).toBe(true);
    expect((signal.reason as Error).name).toBe('TimeoutError');
    const explained = limits.explain(new Error('aborted'), upstreamFailure);
    expect(explained).toBeInstanceOf(UpstreamError);
    expect((explained as UpstreamError).code).toBe('upstream_timeout');
    expect(explained.message).toBe(
      'The model did not finish its answer within 1000 ms (timeout_ms).',
    );
    limits.dispose();
  });

  it('says the idle timeout fired when the upstream stays silent', () => {
    const limits = new CallLimits(new AbortController().signal, 10_000, 300);
    vi.advanceTimersByTime(299);
    limits.touch();
    vi.advanceTimersByTime(299);
    expect(limits.stopped).toBe(false);
    vi.advanceTimersByTime(1);
    expect(limits.stopped).toBe(true);
    expect(limits.explain(new Error('aborted'), upstreamFailure).message).toBe(
      'The model sent nothing for 300 ms (idle_timeout_ms).',
    );
    limits.dispose();
  });
});

describe('CallLimits: waits, hang-ups and the signal', () => {
  it('does not count the wait between retries as the upstream’s silence', async () => {
    const limits = new CallLimits(new AbortController().signal, 10_000, 300);
    vi.advanceTimersByTime(200);
    const waited = limits.sleep(1000);
    await vi.advanceTimersByTimeAsync(1000);
    await waited;
    expect(limits.stopped).toBe(false);
    // The silence starts afresh when the wait ends.
    vi.advanceTimersByTime(299);
    expect(limits.stopped).toBe(false);
    vi.advanceTimersByTime(1);
    expect(limits.stopped).toBe(true);
    limits.dispose();
  });

  it('ends every wait when a limit fires, and reports the upstream’s failure if it cut retries short', async () => {
    const limits = new CallLimits(new AbortController().signal, 500);
    const waits = [limits.sleep(60_000), limits.sleep(60_000)].map((wait) =>
      wait.then(
        () => 'slept',
        (error: unknown) => error,
      ),
    );
    await vi.advanceTimersByTimeAsync(500);
    const ended = await Promise.all(waits);
    expect(ended.every((error) => error instanceof RequestAbortedError)).toBe(true);
    expect(limits.timedOutNow).toBe(true);
    const cutShort = new RetriesExhaustedError(new Error('HTTP 500'), 2, true);
    expect(limits.explain(cutShort, upstreamFailure).message).toBe('The provider failed.');
    limits.dispose();
  });

  it('answers a client that left with RequestAbortedError, whatever else happened', () => {
    const client = new AbortController();
    const limits = new CallLimits(client.signal, 500);
    const { signal } = limits;
    client.abort();
    expect(limits.stopped).toBe(true);
    expect(limits.timedOutNow).toBe(false);
    expect(signal.reason).toBeInstanceOf(RequestAbortedError);
    vi.advanceTimersByTime(500);
    expect(limits.explain(new Error('x'), upstreamFailure)).toBeInstanceOf(RequestAbortedError);
    limits.dispose();
  });

  it('makes its signal aborted already when asked for after the call stopped', () => {
    const limits = new CallLimits(new AbortController().signal, 100);
    vi.advanceTimersByTime(100);
    expect(limits.signal.aborted).toBe(true);
    limits.dispose();
  });

  it('passes other failures to the caller’s description', () => {
    const limits = new CallLimits(new AbortController().signal, 100);
    const cause = new Error('HTTP 500');
    const explained = limits.explain(cause, upstreamFailure);
    expect(explained.message).toBe('The provider failed.');
    expect((explained as UpstreamError).cause).toBe(cause);
    limits.dispose();
  });
});
