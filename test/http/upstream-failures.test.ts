// What a client is told when the model provider misbehaves after answering 200: a body cut short,
// an invalid chunk, a connection cut mid-stream, a provider that stays silent, and one that drips
// a token every so often and never finishes. Each is reported as what happened, never as
// "answered HTTP 200", and a stream is bounded by its idle and total timeouts.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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

describe.each(allDialects)('upstream failures after a 200 ($name)', (dialect) => {
  let upstream: FakeUpstream;
  let dripping: FakeUpstream;
  let harness: TestApp;
  beforeAll(async () => {
    upstream = await startFakeUpstream({});
    // Long answers, one word every 150 ms.
    dripping = await startFakeUpstream({ chunkDelayMs: 150 });
    const model = (name: string, baseUrl: string, extra: Record<string, unknown> = {}) => ({
      name,
      provider: 'openai-compatible' as const,
      model: 'gpt-4o-mini',
      base_url: baseUrl,
      max_tokens: 256,
      context_length: 4096,
      max_retries: 0,
      ...extra,
    });
    harness = await startTestApp({
      dialect,
      overrides: {
        default_model: 'plain',
        models: [
          model('plain', upstream.baseUrl),
          model('quick-idle', upstream.baseUrl, { idle_timeout_ms: 300, timeout_ms: 10_000 }),
          model('short-total', dripping.baseUrl, { idle_timeout_ms: 5000, timeout_ms: 1000 }),
        ],
      },
    });
  });
  afterAll(async () => {
    await harness.close();
    await upstream.close();
    await dripping.close();
  });
  beforeEach(() => {
    upstream.reset();
    dripping.reset();
  });

  const post = (url: string, payload: Record<string, unknown>) =>
    harness.app.inject({ method: 'POST', url, headers: bearer(harness.adminKey), payload });
  const turn = (extra: Record<string, unknown>) => ({
    user_id: 'u',
    messages: [{ role: 'user', content: 'Tell me a long story about many things please' }],
    ...extra,
  });

  it('reports a JSON body cut short as unreadable, not as "answered HTTP 200"', async () => {
    upstream.enqueue({ kind: 'malformed', afterChunks: 0 });
    const response = await post('/v1/chat', turn({}));
    expect(response.statusCode).toBe(502);
    const { error } = response.json<ErrorJson>();
    expect(error).toMatchObject({ type: 'upstream_error', code: 'upstream_error' });
    expect(error.message).toMatch(/could not be read/);
    expect(error.message).not.toMatch(/HTTP 200/);
  });

  it('reports an invalid chunk mid-stream as such, in /v1/chat and /chat/completions', async () => {
    upstream.enqueue({ kind: 'malformed', afterChunks: 3 });
    const chat = parseEvents((await post('/v1/chat', turn({ stream: true }))).body);
    expect(chat.some((event) => event.type === 'delta')).toBe(true);
    const failure = chat[chat.length - 1] as { type: string; error: ErrorJson['error'] };
    expect(failure.type).toBe('error');
    expect(failure.error.message).toMatch(/invalid chunk mid-answer/);

    upstream.enqueue({ kind: 'malformed', afterChunks: 3 });
    const chunks = parseEvents(
      (await post('/chat/completions', { ...turn({ stream: true }), user_id: undefined })).body,
    );
    const last = chunks[chunks.length - 1] as unknown as ErrorJson;
    expect(last.error.message).toMatch(/invalid chunk mid-answer/);
  });

  it('reports a connection cut mid-stream as a cut', async () => {
    upstream.enqueue({ kind: 'cut', afterChunks: 3 });
    const events = parseEvents((await post('/v1/chat', turn({ stream: true }))).body);
    const failure = events[events.length - 1] as { error: ErrorJson['error'] };
    expect(failure.error.message).toMatch(/was cut mid-answer/);
    expect(failure.error.message).not.toMatch(/HTTP 200/);
  });

  it('gives up on a silent provider after the idle timeout, not the total one', async () => {
    upstream.enqueue({ kind: 'hang' });
    const response = await post('/v1/chat', turn({ model: 'quick-idle', stream: true }));
    expect(response.statusCode).toBe(504);
    expect(response.json<ErrorJson>().error).toMatchObject({
      code: 'upstream_timeout',
      // The idle timeout ended it (the total one would say so differently).
      message: expect.stringMatching(/sent nothing for 300 ms/),
    });
    await upstream.settled();
    expect(upstream.requests[0]!.aborted).toBe(true);
  });

  it('stops a stream that drips tokens at its total timeout, after what was sent', async () => {
    const started = performance.now();
    const response = await post(
      '/v1/chat',
      turn({
        model: 'short-total',
        stream: true,
        messages: [
          { role: 'user', content: 'one two three four five six seven eight nine ten '.repeat(3) },
        ],
      }),
    );
    const elapsed = performance.now() - started;
    const events = parseEvents(response.body);
    expect(events.filter((event) => event.type === 'delta').length).toBeGreaterThan(2);
    const failure = events[events.length - 1] as { type: string; error: ErrorJson['error'] };
    expect(failure.type).toBe('error');
    expect(failure.error).toMatchObject({ code: 'upstream_timeout' });
    expect(failure.error.message).toMatch(/within 1000 ms/);
    expect(elapsed).toBeGreaterThanOrEqual(900);
    await dripping.settled();
    expect(dripping.requests[0]!.aborted).toBe(true);
  });
});
