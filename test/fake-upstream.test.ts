// The fake OpenAI upstream, exercised over real HTTP by the official client and by the AI SDK.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, embedMany, generateText, streamText } from 'ai';
import OpenAI from 'openai';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  countTokens,
  fakeEmbedding,
  startFakeUpstream,
  type FakeUpstream,
} from './support/fake-upstream.js';

const apiKey = 'sk-test-fake-upstream';
const model = 'gpt-4o-mini';

let upstream: FakeUpstream;
let client: OpenAI;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  client = new OpenAI({ baseURL: upstream.baseUrl, apiKey, maxRetries: 0 });
});
afterAll(async () => {
  await upstream.close();
});
beforeEach(() => {
  upstream.reset();
});

const userMessage = (content: string) => [{ role: 'user' as const, content }];

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

function cosine(left: number[], right: number[]): number {
  return left.reduce((sum, value, index) => sum + value * right[index]!, 0);
}

describe('fake upstream with the official openai client', () => {
  it('completes with an echo of the last user message and consistent usage', async () => {
    const completion = await client.chat.completions.create({
      model,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hello there, fake upstream' },
      ],
    });
    expect(completion).toMatchObject({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Echo: Hello there, fake upstream',
            refusal: null,
          },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 3 + 4, completion_tokens: 5, total_tokens: 12 },
    });
    expect(completion.created).toBeCloseTo(Date.now() / 1000, -1);
    expect(completion._request_id).toMatch(/^req_/);

    const [request] = upstream.requests;
    expect(request).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      apiKey,
      endpoint: 'chat',
      stream: false,
      status: 200,
      outcome: 'answered',
      aborted: false,
      body: { model, messages: [{ role: 'system' }, { role: 'user' }] },
    });
    expect(request?.headers['content-type']).toBe('application/json');
  });

  it('streams role first, content deltas, finish_reason last, then a usage chunk', async () => {
    const chunks = await collect(
      await client.chat.completions.create({
        model,
        messages: userMessage('stream these words please'),
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    const [first] = chunks;
    expect(first?.object).toBe('chat.completion.chunk');
    expect(first?.choices[0]?.delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);

    const withChoices = chunks.filter((chunk) => chunk.choices.length > 0);
    const text = withChoices.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('Echo: stream these words please');
    expect(withChoices.length).toBeGreaterThan(3);
    const finishChunk = withChoices.at(-1)!;
    expect(finishChunk.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    expect(
      withChoices.slice(0, -1).every((chunk) => chunk.choices[0]?.finish_reason === null),
    ).toBe(true);
    // With include_usage every other chunk carries `usage: null`.
    expect(withChoices.every((chunk) => chunk.usage === null)).toBe(true);

    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toMatchObject({
      prompt_tokens: 4,
      completion_tokens: 5,
      total_tokens: 9,
    });
    expect(upstream.requests[0]).toMatchObject({ stream: true, chunksSent: chunks.length + 1 });
  });

  it('sends no usage field without include_usage', async () => {
    const chunks = await collect(
      await client.chat.completions.create({ model, messages: userMessage('hi'), stream: true }),
    );
    expect(chunks.every((chunk) => !('usage' in chunk))).toBe(true);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  it('truncates to max_tokens with finish_reason length, streamed or not', async () => {
    const completion = await client.chat.completions.create({
      model,
      messages: userMessage('one two three four five six'),
      max_completion_tokens: 3,
    });
    expect(completion.choices[0]).toMatchObject({
      message: { content: 'Echo: one two' },
      finish_reason: 'length',
    });
    expect(completion.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 3 });

    const chunks = await collect(
      await client.chat.completions.create({
        model,
        messages: userMessage('one two three four five six'),
        max_tokens: 2,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    const deltas = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content));
    expect(deltas.filter((delta) => delta).join('')).toBe('Echo: one');
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('length');
    expect(chunks.at(-1)?.usage?.completion_tokens).toBe(2);
  });

  it('replays scripted content, chunks, usage and finish reason', async () => {
    upstream.enqueue(
      { kind: 'reply', chunks: ['Hel', 'lo', ' world'], usage: { prompt_tokens: 100 } },
      { kind: 'reply', content: 'Fixed answer', finishReason: 'length' },
    );
    const chunks = await collect(
      await client.chat.completions.create({
        model,
        messages: userMessage('ignored'),
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    const contents = chunks.map((chunk) => chunk.choices[0]?.delta.content);
    expect(contents.slice(1, 4)).toEqual(['Hel', 'lo', ' world']);
    expect(chunks.at(-1)?.usage).toMatchObject({
      prompt_tokens: 100,
      completion_tokens: 2,
      total_tokens: 102,
    });

    const completion = await client.chat.completions.create({ model, messages: userMessage('x') });
    expect(completion.choices[0]).toMatchObject({
      message: { content: 'Fixed answer' },
      finish_reason: 'length',
    });
  });

  it('embeds deterministically, in base64 (the client default) and as floats', async () => {
    const texts = ['the cat sat on the mat', 'the cat sat on a mat', 'quarterly revenue forecast'];
    const decoded = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: texts,
    });
    expect(upstream.requests[0]?.body).toMatchObject({ encoding_format: 'base64' });
    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: texts,
      encoding_format: 'float',
    });
    expect(floats).toMatchObject({
      object: 'list',
      model: 'text-embedding-3-small',
      data: [
        { object: 'embedding', index: 0 },
        { object: 'embedding', index: 1 },
        { object: 'embedding', index: 2 },
      ],
      usage: { prompt_tokens: 6 + 6 + 3, total_tokens: 15 },
    });
    const vectors = floats.data.map((item) => item.embedding);
    expect(decoded.data.map((item) => Array.from(item.embedding))).toEqual(vectors);
    expect(vectors[0]).toEqual(fakeEmbedding(texts[0]!));
    expect(vectors[0]).toHaveLength(64);
    expect(cosine(vectors[0]!, vectors[0]!)).toBeCloseTo(1, 5);
    expect(cosine(vectors[0]!, vectors[1]!)).toBeGreaterThan(0.7);
    expect(cosine(vectors[0]!, vectors[1]!)).toBeGreaterThan(cosine(vectors[0]!, vectors[2]!));

    const single = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: 'just one',
      dimensions: 16,
      encoding_format: 'float',
    });
    expect(single.data).toHaveLength(1);
    expect(single.data[0]?.embedding).toHaveLength(16);
  });

  it('lists and retrieves models, and 404s an unknown one', async () => {
    const page = await client.models.list();
    expect(page.data.map((entry) => entry.id)).toContain(model);
    expect(page.data[0]).toMatchObject({ object: 'model', owned_by: 'openai' });
    await expect(client.models.retrieve(model)).resolves.toMatchObject({ id: model });
    const missing = await client.models.retrieve('no-such-model').catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing).toMatchObject({ code: 'model_not_found', param: 'model' });
  });

  it('turns scripted 429 and 400 into typed errors', async () => {
    upstream.enqueue(
      { kind: 'error', status: 429, headers: { 'retry-after': '1' } },
      {
        kind: 'error',
        status: 400,
        body: {
          error: {
            message: "Invalid value for 'temperature'.",
            type: 'invalid_request_error',
            param: 'temperature',
            code: 'invalid_value',
          },
        },
      },
    );
    const limited = await client.chat.completions
      .create({ model, messages: userMessage('a') })
      .catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited).toMatchObject({ status: 429, code: 'rate_limit_exceeded', type: 'requests' });
    expect((limited as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe(
      '1',
    );

    const invalid = await client.chat.completions
      .create({ model, messages: userMessage('b'), stream: true })
      .catch((error: unknown) => error);
    expect(invalid).toBeInstanceOf(OpenAI.BadRequestError);
    expect(invalid).toMatchObject({
      status: 400,
      param: 'temperature',
      code: 'invalid_value',
      type: 'invalid_request_error',
    });
  });

  it('lets a retrying client get through a scripted 429 then succeed', async () => {
    upstream.enqueue({ kind: 'error', status: 429, headers: { 'retry-after-ms': '10' } });
    const retrying = new OpenAI({ baseURL: upstream.baseUrl, apiKey, maxRetries: 1 });
    const completion = await retrying.chat.completions.create({
      model,
      messages: userMessage('again'),
    });
    expect(completion.choices[0]?.message.content).toBe('Echo: again');
    expect(upstream.requests.map((request) => request.status)).toEqual([429, 200]);
  });

  it('consumes one-shot behaviours in order, then falls back to the default', async () => {
    upstream.enqueue(
      { kind: 'error', status: 500 },
      { kind: 'reply', content: 'second' },
      { kind: 'error', status: 503 },
    );
    upstream.enqueueFor('embeddings', { kind: 'error', status: 500 });
    expect(upstream.pendingBehaviours).toBe(4);
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < 4; attempt++) {
      const result = await client.chat.completions
        .create({ model, messages: userMessage(`try ${attempt}`) })
        .then((completion) => completion.choices[0]?.message.content ?? '')
        .catch((error: unknown) =>
          error instanceof OpenAI.APIError ? `${error.status}` : 'other',
        );
      outcomes.push(result);
    }
    expect(outcomes).toEqual(['500', 'second', '503', 'Echo: try 3']);
    // The embeddings-only behaviour waited for an embeddings request.
    expect(upstream.pendingBehaviours).toBe(1);
    await expect(
      client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }),
    ).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    expect(upstream.pendingBehaviours).toBe(0);
  });

  it('errors a streaming client when the stream is cut mid-way', async () => {
    upstream.enqueue({ kind: 'cut', afterChunks: 3 });
    const received: ChatCompletionChunk[] = [];
    const stream = await client.chat.completions.create({
      model,
      messages: userMessage('a fairly long message to cut'),
      stream: true,
    });
    await expect(
      (async () => {
        for await (const chunk of stream) received.push(chunk);
      })(),
    ).rejects.toThrow();
    expect(received).toHaveLength(3);
    await upstream.settled();
    expect(upstream.requests[0]).toMatchObject({ outcome: 'cut', chunksSent: 3, aborted: false });
  });

  it('errors a non-streaming client when the connection is cut before the answer', async () => {
    upstream.enqueue({ kind: 'cut', afterChunks: 0 });
    await expect(
      client.chat.completions.create({ model, messages: userMessage('x') }),
    ).rejects.toBeInstanceOf(OpenAI.APIConnectionError);
  });

  it('records the abort when a client times out during a delay', async () => {
    // Five minutes of delay: the client's 100 ms timeout, recorded as an abort, is what ends it.
    upstream.enqueue({ kind: 'delay', ms: 300_000 });
    await expect(
      client.chat.completions.create({ model, messages: userMessage('slow') }, { timeout: 100 }),
    ).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    await upstream.settled();
    expect(upstream.requests[0]).toMatchObject({ aborted: true, outcome: 'aborted' });
    expect(upstream.requests[0]?.status).toBeUndefined();
  });

  it('answers after a short delay with the behaviour it wraps', async () => {
    upstream.enqueue({ kind: 'delay', ms: 50, then: { kind: 'reply', content: 'late' } });
    const started = performance.now();
    const completion = await client.chat.completions.create({ model, messages: userMessage('x') });
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(completion.choices[0]?.message.content).toBe('late');
  });

  it('records the abort of a hanging request', async () => {
    upstream.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    const pending = client.chat.completions.create(
      { model, messages: userMessage('x') },
      { signal: controller.signal },
    );
    await upstream.waitForRequests(1);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(OpenAI.APIUserAbortError);
    await upstream.settled();
    expect(upstream.requests[0]).toMatchObject({ behaviour: { kind: 'hang' }, aborted: true });
  });

  it('answers unknown paths and missing keys in OpenAI’s error shape', async () => {
    const response = await fetch(`${upstream.baseUrl}/nothing`, { method: 'POST' });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: {
        message: 'Invalid URL (POST /v1/nothing)',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });

    const guarded = await startFakeUpstream({ requireApiKey: apiKey });
    try {
      const wrongKey = new OpenAI({ baseURL: guarded.baseUrl, apiKey: 'sk-wrong', maxRetries: 0 });
      await expect(wrongKey.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      const rightKey = new OpenAI({ baseURL: guarded.baseUrl, apiKey, maxRetries: 0 });
      await expect(rightKey.models.list()).resolves.toBeDefined();
      const anonymous = await fetch(`${guarded.baseUrl}/models`);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({
        error: { type: 'invalid_request_error', message: expect.stringContaining('API key') },
      });
      expect(guarded.requests.map((request) => request.apiKey)).toEqual([
        'sk-wrong',
        apiKey,
        undefined,
      ]);
    } finally {
      await guarded.close();
    }
  });
});

describe('fake upstream with a paced stream', () => {
  let paced: FakeUpstream;
  beforeAll(async () => {
    paced = await startFakeUpstream({ latencyMs: 60, chunkDelayMs: 20 });
  });
  beforeEach(() => {
    paced.reset();
  });
  afterAll(async () => {
    await paced.close();
  });

  it('waits latencyMs before the first token and chunkDelayMs between the next', async () => {
    const pacedClient = new OpenAI({ baseURL: paced.baseUrl, apiKey, maxRetries: 0 });
    const started = performance.now();
    const arrivals: number[] = [];
    const stream = await pacedClient.chat.completions.create({
      model,
      messages: userMessage('one two three'),
      stream: true,
    });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) arrivals.push(performance.now() - started);
    }
    expect(arrivals).toHaveLength(4);
    expect(arrivals[0]).toBeGreaterThanOrEqual(55);
    // Lower bounds only: the server cannot send earlier, however late the client reads.
    expect(arrivals[3]).toBeGreaterThanOrEqual(60 + 3 * 20 - 5);
  });

  it('stops writing and records the abort when the client leaves mid-stream', async () => {
    const pacedClient = new OpenAI({ baseURL: paced.baseUrl, apiKey, maxRetries: 0 });
    const stream = await pacedClient.chat.completions.create({
      model,
      messages: userMessage('many words to stream slowly one by one'),
      stream: true,
    });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) break;
    }
    await paced.settled();
    const [request] = paced.requests;
    expect(request).toMatchObject({ aborted: true, outcome: 'aborted' });
    expect(request?.chunksSent).toBeLessThan(5);
  });
});

describe('fake upstream with the AI SDK', () => {
  const provider = () =>
    createOpenAICompatible({
      name: 'fake',
      baseURL: upstream.baseUrl,
      apiKey,
      includeUsage: true,
    });

  it('parses a JSON completion: text, finish reason and usage', async () => {
    const result = await generateText({
      model: provider().chatModel(model),
      prompt: 'What is the fake upstream?',
      maxRetries: 0,
    });
    expect(result.text).toBe('Echo: What is the fake upstream?');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({ inputTokens: 5, outputTokens: 6, totalTokens: 11 });
    expect(upstream.requests[0]).toMatchObject({
      apiKey,
      body: { model, messages: [{ role: 'user', content: 'What is the fake upstream?' }] },
    });
  });

  it('parses a streamed completion: deltas, finish reason and usage', async () => {
    const result = streamText({
      model: provider().chatModel(model),
      system: 'Be brief.',
      prompt: 'Stream me a reply',
      maxRetries: 0,
    });
    const deltas: string[] = [];
    for await (const delta of result.textStream) deltas.push(delta);
    expect(deltas.join('')).toBe('Echo: Stream me a reply');
    expect(deltas.length).toBeGreaterThan(1);
    expect(await result.finishReason).toBe('stop');
    expect(await result.usage).toMatchObject({
      inputTokens: countTokens('Be brief.') + countTokens('Stream me a reply'),
      outputTokens: countTokens('Echo: Stream me a reply'),
      totalTokens: 2 + 4 + 5,
    });
    expect(upstream.requests[0]?.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('reports length when max output tokens truncate the reply', async () => {
    const result = await generateText({
      model: provider().chatModel(model),
      prompt: 'one two three four',
      maxOutputTokens: 2,
      maxRetries: 0,
    });
    expect(result.text).toBe('Echo: one');
    expect(result.finishReason).toBe('length');
  });

  it('surfaces a scripted 429 as a retryable APICallError', async () => {
    upstream.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '1' } });
    const error = await generateText({
      model: provider().chatModel(model),
      prompt: 'x',
      maxRetries: 0,
    }).catch((caught: unknown) => caught);
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      statusCode: 429,
      isRetryable: true,
      message: expect.stringContaining('Rate limit'),
    });
  });

  it('errors the stream when it is cut mid-way', async () => {
    upstream.enqueue({ kind: 'cut', afterChunks: 2 });
    const onErrorCalls: unknown[] = [];
    const result = streamText({
      model: provider().chatModel(model),
      prompt: 'cut this stream short',
      maxRetries: 0,
      onError: ({ error }) => {
        onErrorCalls.push(error);
      },
    });
    const deltas: string[] = [];
    // A broken connection rejects the iteration itself rather than yielding an error part.
    const failure = await (async () => {
      for await (const part of result.fullStream)
        if (part.type === 'text-delta') deltas.push(part.text);
    })().catch((error: unknown) => error);
    expect(APICallError.isInstance(failure)).toBe(true);
    expect(deltas).toEqual(['Echo:']);
    expect(onErrorCalls).toEqual([]);
    await expect(result.finishReason).rejects.toBeInstanceOf(APICallError);
  });

  it('aborts the upstream call when the abort signal fires during a delay', async () => {
    upstream.enqueue({ kind: 'delay', ms: 5_000 });
    await expect(
      generateText({
        model: provider().chatModel(model),
        prompt: 'x',
        maxRetries: 0,
        abortSignal: AbortSignal.timeout(100),
      }),
    ).rejects.toThrow();
    await upstream.settled();
    expect(upstream.requests[0]).toMatchObject({ aborted: true, outcome: 'aborted' });
  });

  it('embeds through the provider’s embedding model', async () => {
    const { embeddings, usage } = await embedMany({
      model: provider().embeddingModel('text-embedding-3-small'),
      values: ['alpha beta', 'gamma'],
      maxRetries: 0,
    });
    expect(embeddings).toEqual([fakeEmbedding('alpha beta'), fakeEmbedding('gamma')]);
    expect(usage.tokens).toBe(3);
  });
});
