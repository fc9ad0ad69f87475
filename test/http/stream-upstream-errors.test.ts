// A provider that answers HTTP 500 is reported the same whether the answer was asked for streamed
// or not: 502 upstream_error naming the status, on /v1/chat and /chat/completions, both dialects.
// Streamed calls run an idle timer (the model's silence) that used to keep running while the
// service itself waited between retries, and a timer that ran out then was reported as the model's
// timeout (504 upstream_timeout) instead of the 500 the provider answered. A limit that ends the
// retries early still reports the provider's failure.
//
// Which timer runs out during which wait is set by the fake providers' retry-after, not by how fast
// the machine is: the idle timeout (1 s) is shorter than the wait it must not fire in (1.5 s, after
// one attempt) and longer than any round trip to the fake upstream, and the total timeout (2 s)
// ends the first wait of a provider that asks for 59 s, so only one round trip has to fit in it
// (two within 200 ms each once had to, and under load they did not).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';

interface ErrorJson {
  error: { message: string; type: string; code: string };
}

function parseEvents(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: ') && frame !== 'data: [DONE]')
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>);
}

describe.each(allDialects)('a provider answering HTTP 500 ($name)', (dialect) => {
  let upstream: FakeUpstream;
  let slowRetryUpstream: FakeUpstream;
  let harness: TestApp;
  beforeAll(async () => {
    // The provider asks for 1.5 s between attempts: longer than the 1 s idle timeout, so a timer
    // left running during the wait would fire, and short enough to keep the suite quick.
    upstream = await startFakeUpstream({
      defaultBehaviour: { kind: 'error', status: 500, headers: { 'retry-after-ms': '1500' } },
    });
    // The provider of the total-timeout models asks for 59 s (the longest wait honoured is under
    // 60 s): the 2 s total timeout always runs out during the first wait, never in an attempt.
    slowRetryUpstream = await startFakeUpstream({
      defaultBehaviour: { kind: 'error', status: 500, headers: { 'retry-after-ms': '59000' } },
    });
    const model = (name: string, extra: Record<string, unknown>) => ({
      name,
      provider: 'openai-compatible' as const,
      model: 'gpt-4o-mini',
      base_url: (name.includes('total-short') ? slowRetryUpstream : upstream).baseUrl,
      max_tokens: 256,
      context_length: 4096,
      ...extra,
    });
    harness = await startTestApp({
      dialect,
      overrides: {
        default_model: 'idle-short',
        models: [
          // One retry after the provider's 1.5 s, longer than the 1 s idle timeout.
          model('idle-short', { max_retries: 1, idle_timeout_ms: 1000, timeout_ms: 30_000 }),
          // Retries that the total timeout (2 s) ends while waiting for the next attempt.
          model('total-short', { max_retries: 5, idle_timeout_ms: 30_000, timeout_ms: 2000 }),
          // The same through provider `openai` (since issue 20 on the same lean path: kept so both providers stay covered).
          model('sdk-idle-short', {
            provider: 'openai',
            api_key_env: 'FAKE_OPENAI_KEY',
            max_retries: 1,
            idle_timeout_ms: 1000,
            timeout_ms: 30_000,
          }),
          model('sdk-total-short', {
            provider: 'openai',
            api_key_env: 'FAKE_OPENAI_KEY',
            max_retries: 5,
            idle_timeout_ms: 30_000,
            timeout_ms: 2000,
          }),
        ],
      },
      env: { FAKE_OPENAI_KEY: 'sk-fake-openai-key-for-tests' },
    });
  });
  afterAll(async () => {
    await harness.close();
    await upstream.close();
    await slowRetryUpstream.close();
  });

  const post = (url: string, payload: Record<string, unknown>) =>
    harness.app.inject({ method: 'POST', url, headers: bearer(harness.adminKey), payload });
  const messages = [{ role: 'user', content: 'Hello there' }];

  // Each waits out its retries and timers on its own: they run at once.
  describe.concurrent('every model, endpoint and mode', () => {
    for (const model of ['idle-short', 'total-short', 'sdk-idle-short', 'sdk-total-short']) {
      for (const stream of [false, true]) {
        it(`${model}: /v1/chat ${stream ? 'streamed' : 'whole'} answers 502 upstream_error`, async ({
          expect,
        }) => {
          const response = await post('/v1/chat', { user_id: 'u', model, messages, stream });
          expect(response.statusCode, response.body).toBe(502);
          const { error } = response.json<ErrorJson>();
          expect(error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
          expect(error.message).toContain('HTTP 500');
        });

        it(`${model}: /chat/completions ${stream ? 'streamed' : 'whole'} answers 502 upstream_error`, async ({
          expect,
        }) => {
          const response = await post('/v1/chat/completions', { model, messages, stream });
          expect(response.statusCode, response.body).toBe(502);
          const { error } = response.json<ErrorJson>();
          expect(error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
          expect(error.message).toContain('HTTP 500');
        });
      }
    }
  });

  it('reports a 500 after the stream began as an error event with upstream_error', async () => {
    // The first attempt streams two chunks and is cut; nothing is retried once text flowed.
    upstream.enqueue({ kind: 'cut', afterChunks: 2 });
    const response = await post('/v1/chat', {
      user_id: 'u',
      model: 'idle-short',
      messages,
      stream: true,
    });
    expect(response.statusCode).toBe(200);
    const events = parseEvents(response.body);
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      error: { type: 'upstream_error', code: 'upstream_error' },
    });
  });
});
