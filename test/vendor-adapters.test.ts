// The Anthropic and Google adapters (src/models/providers, through @ai-sdk/anthropic and
// @ai-sdk/google) against fakes that speak the vendors' real wire formats over real HTTP: one
// contract for both — request shape (system prompt placement, max tokens, temperature, key),
// response mapping, usage, finish reasons, streaming, errors (429 with retry-after, 5xx, 401) and
// a stream cut mid-way — then both through the service's /v1/chat and /chat/completions on both
// dialects.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RemoteModelDefinition } from '../src/config/config.js';
import { BpeTokenCounter } from '../src/models/bpe-token-counter.js';
import { createRemoteChatModel } from '../src/models/providers/remote-models.js';
import {
  UpstreamError,
  type ChatModel,
  type ChatTurn,
  type GenerationRequest,
  type StreamPart,
} from '../src/models/spec.js';
import { allDialects } from './support/dialects.js';
import { startFakeVendor, type FakeVendor, type Vendor } from './support/fake-vendors.js';
import { bearer, startTestApp, type TestApp } from './support/test-app.js';

const vendorModel: Record<Vendor, string> = {
  anthropic: 'claude-3-5-haiku-latest',
  google: 'gemini-2.0-flash',
};

function definitionFor(
  vendor: Vendor,
  fake: FakeVendor,
  overrides: Partial<RemoteModelDefinition> = {},
): RemoteModelDefinition {
  return {
    name: `${vendor}-fake`,
    displayName: `${vendor} fake`,
    maker: vendor === 'anthropic' ? 'Anthropic' : 'Google',
    type: 'chat',
    maxTokens: 1024,
    contextLength: 100_000,
    fallbacks: [],
    timeoutMs: 5_000,
    idleTimeoutMs: 2_000,
    maxRetries: 0,
    provider: vendor,
    model: vendorModel[vendor],
    baseUrl: fake.baseUrl,
    apiKeyEnv: 'VENDOR_API_KEY',
    structuredOutputs: false,
    capabilities: ['tools', 'vision', 'json_schema'],
    routing: {
      inputCostPerMillion: null,
      outputCostPerMillion: null,
      quality: null,
      typicalLatencyMs: null,
    },
    speech: null,
    ...overrides,
  };
}

const conversation: ChatTurn[] = [
  { role: 'system', content: 'Answer in one sentence.' },
  { role: 'user', content: 'What is a fjord?' },
  { role: 'assistant', content: 'A long narrow sea inlet.' },
  { role: 'user', content: 'Where are they found?' },
];

function request(overrides: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    messages: conversation,
    maxTokens: 100,
    temperature: 0.3,
    signal: new AbortController().signal,
    fairnessKey: 'acct_test',
    ...overrides,
  };
}

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const collected: StreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

async function failure(action: () => Promise<unknown>): Promise<UpstreamError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error('expected an UpstreamError, but the call succeeded');
}

describe.each(['anthropic', 'google'] as const)('the %s adapter on the wire', (vendor) => {
  let fake: FakeVendor;
  const modelWith = (overrides: Partial<RemoteModelDefinition> = {}): ChatModel =>
    createRemoteChatModel(
      definitionFor(vendor, fake, overrides),
      { get: (name) => (name === 'VENDOR_API_KEY' ? fake.apiKey : undefined) },
      new BpeTokenCounter(),
    );

  beforeAll(async () => {
    fake = await startFakeVendor(vendor);
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
  });

  it('sends the system prompt, history, max tokens, temperature and key as the vendor expects', async () => {
    await modelWith().generate(request());
    const [sent] = fake.requests;
    if (vendor === 'anthropic') {
      expect(sent!.url).toBe('/v1/messages');
      expect(sent!.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(sent!.body).toMatchObject({
        model: vendorModel.anthropic,
        max_tokens: 100,
        temperature: 0.3,
        // The system prompt goes in `system`, never among the messages.
        system: [{ type: 'text', text: 'Answer in one sentence.' }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'What is a fjord?' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'A long narrow sea inlet.' }] },
          { role: 'user', content: [{ type: 'text', text: 'Where are they found?' }] },
        ],
      });
      expect(sent!.body.stream).toBeUndefined();
    } else {
      expect(sent!.url).toBe(`/v1beta/models/${vendorModel.google}:generateContent`);
      expect(sent!.body).toMatchObject({
        systemInstruction: { parts: [{ text: 'Answer in one sentence.' }] },
        contents: [
          { role: 'user', parts: [{ text: 'What is a fjord?' }] },
          { role: 'model', parts: [{ text: 'A long narrow sea inlet.' }] },
          { role: 'user', parts: [{ text: 'Where are they found?' }] },
        ],
        generationConfig: { maxOutputTokens: 100, temperature: 0.3 },
      });
    }
    expect(JSON.stringify(sent!.body)).not.toContain('"role":"system"');
  });

  it('maps the answer, its usage and its finish reason', async () => {
    fake.enqueue({
      kind: 'reply',
      text: 'Norway, Chile and New Zealand.',
      inputTokens: 31,
      outputTokens: 9,
    });
    const result = await modelWith().generate(request());
    expect(result).toEqual({
      text: 'Norway, Chile and New Zealand.',
      finishReason: 'stop',
      usage: { promptTokens: 31, completionTokens: 9 },
    });
  });

  it.each(
    vendor === 'anthropic'
      ? [
          ['max_tokens', 'length'],
          ['stop_sequence', 'stop'],
          ['refusal', 'content_filter'],
        ]
      : [
          ['MAX_TOKENS', 'length'],
          ['SAFETY', 'content_filter'],
          ['OTHER', 'other'],
        ],
  )('maps the finish reason %s to %s, streamed or not', async (finish, expected) => {
    fake.enqueue(
      { kind: 'reply', text: 'Cut here', finish },
      { kind: 'reply', text: 'Cut here', finish },
    );
    expect((await modelWith().generate(request())).finishReason).toBe(expected);
    const parts = await collect(modelWith().stream(request()));
    expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: expected });
  });

  it('streams the text in order, then one finish part with the usage', async () => {
    fake.enqueue({
      kind: 'reply',
      chunks: ['Nor', 'way, ', 'Chile ', 'and New Zealand.'],
      inputTokens: 31,
      outputTokens: 9,
    });
    const parts = await collect(modelWith().stream(request()));
    const texts = parts.filter((part) => part.type === 'text');
    expect(texts.map((part) => part.text).join('')).toBe('Norway, Chile and New Zealand.');
    expect(texts.length).toBeGreaterThanOrEqual(2);
    expect(parts.filter((part) => part.type === 'finish')).toEqual([
      { type: 'finish', finishReason: 'stop', usage: { promptTokens: 31, completionTokens: 9 } },
    ]);
    expect(parts.at(-1)!.type).toBe('finish');
    const [sent] = fake.requests;
    if (vendor === 'anthropic') expect(sent!.body.stream).toBe(true);
    else
      expect(sent!.url).toBe(`/v1beta/models/${vendorModel.google}:streamGenerateContent?alt=sse`);
  });

  it('answers 503 model_unavailable on a 429, passing on its retry-after', async () => {
    fake.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '7' } });
    const error = await failure(() => modelWith().generate(request()));
    expect(error.code).toBe('model_unavailable');
    expect(error.upstreamStatus).toBe(429);
    expect(error.headers['retry-after']).toBe('7');
    expect(error.message).toContain('rate-limiting');
  });

  it('retries a 429 after the wait it asks for, then answers', async () => {
    fake.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '0' } });
    const result = await modelWith({ maxRetries: 1 }).generate(request());
    expect(result.text).toBe('Echo: Where are they found?');
    expect(fake.requests).toHaveLength(2);
  });

  it.each([500, 503])('answers upstream_error on a %i, without the vendor body', async (status) => {
    fake.enqueue({ kind: 'error', status });
    const error = await failure(() => modelWith().generate(request()));
    expect(error.code).toBe('upstream_error');
    expect(error.message).toContain(`HTTP ${status}`);
    expect(error.message).not.toContain('fake error');
  });

  it('says the credentials were refused on a 401, naming where the key comes from', async () => {
    const wrongKey = createRemoteChatModel(
      definitionFor(vendor, fake),
      { get: () => 'not-the-key' },
      new BpeTokenCounter(),
    );
    const error = await failure(() => wrongKey.generate(request()));
    expect(error.code).toBe('upstream_error');
    expect(error.upstreamStatus).toBe(401);
    expect(error.message).toContain('api_key_env');
    expect(fake.requests).toHaveLength(1);
  });

  it('fails a stream cut mid-way after the text that arrived, saying so', async () => {
    fake.enqueue({ kind: 'cut', afterChunks: 2 });
    const received: StreamPart[] = [];
    const error = await failure(async () => {
      for await (const part of modelWith().stream(request())) received.push(part);
    });
    expect(received.length).toBeGreaterThanOrEqual(1);
    expect(received.every((part) => part.type === 'text')).toBe(true);
    expect(error.code).toBe('upstream_error');
    expect(error.message).toBe(
      `The connection to the provider of model '${vendor}-fake' was cut mid-answer; the answer is incomplete.`,
    );
    expect(error.message).not.toContain('HTTP 200');
  });
});

describe.each(allDialects)(
  'Anthropic and Google models through the service on $name',
  (dialect) => {
    let anthropic: FakeVendor;
    let google: FakeVendor;
    let harness: TestApp;
    let baseUrl: string;

    beforeAll(async () => {
      anthropic = await startFakeVendor('anthropic');
      google = await startFakeVendor('google');
      const entry = (vendor: Vendor, fake: FakeVendor) => ({
        name: `${vendor}-fake`,
        provider: vendor,
        model: vendorModel[vendor],
        base_url: fake.baseUrl,
        api_key_env: `${vendor.toUpperCase()}_FAKE_KEY`,
        max_tokens: 512,
        context_length: 100_000,
        max_retries: 0,
      });
      harness = await startTestApp({
        dialect,
        env: { ANTHROPIC_FAKE_KEY: anthropic.apiKey, GOOGLE_FAKE_KEY: google.apiKey },
        overrides: {
          default_model: 'anthropic-fake',
          models: [entry('anthropic', anthropic), entry('google', google)],
        },
      });
      await harness.app.listen({ port: 0, host: '127.0.0.1' });
      baseUrl = `http://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await harness.close();
      await anthropic.close();
      await google.close();
    });

    const post = (path: string, body: unknown) =>
      fetch(`${baseUrl}${path}`, {
        method: 'POST',
        headers: { ...bearer(harness.adminKey), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });

    it.each(['anthropic', 'google'] as const)(
      'stores a /v1/chat turn answered by %s, with its usage and finish reason',
      async (vendor) => {
        const fake = vendor === 'anthropic' ? anthropic : google;
        fake.enqueue({
          kind: 'reply',
          text: 'Mostly in Norway.',
          inputTokens: 12,
          outputTokens: 4,
        });
        const response = await post('/v1/chat', {
          user_id: 'vendor-user',
          model: `${vendor}-fake`,
          temperature: 0.5,
          max_tokens: 64,
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Where are fjords?' },
          ],
        });
        expect(response.status).toBe(200);
        const answer = (await response.json()) as Record<string, unknown>;
        expect(answer).toMatchObject({
          message: 'Mostly in Norway.',
          model: `${vendor}-fake`,
          finish_reason: 'stop',
          usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
        });
        const sent = fake.requests.at(-1)!.body;
        expect(JSON.stringify(sent)).toContain('Be brief.');
        if (vendor === 'anthropic')
          expect(sent).toMatchObject({ max_tokens: 64, temperature: 0.5 });
        else
          expect(sent).toMatchObject({
            generationConfig: { maxOutputTokens: 64, temperature: 0.5 },
          });
        const history = await harness.app.inject({
          method: 'GET',
          url: `/v1/conversations/${String(answer.conversation_id)}/messages`,
          headers: bearer(harness.adminKey),
        });
        expect(
          history
            .json<{ messages: Array<{ role: string; content: string }> }>()
            .messages.map((message) => message.content),
        ).toEqual(['Where are fjords?', 'Mostly in Norway.']);
      },
    );

    it.each(['anthropic', 'google'] as const)(
      'streams a /chat/completions answer from %s as OpenAI chunks with usage',
      async (vendor) => {
        const fake = vendor === 'anthropic' ? anthropic : google;
        fake.enqueue({
          kind: 'reply',
          chunks: ['Mostly ', 'in ', 'Norway.'],
          inputTokens: 12,
          outputTokens: 4,
        });
        const response = await post('/chat/completions', {
          model: `${vendor}-fake`,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'Where are fjords?' }],
        });
        const chunks = (await response.text())
          .split('\n\n')
          .filter((frame) => frame.startsWith('data: {'))
          .map(
            (frame) =>
              JSON.parse(frame.slice('data: '.length)) as {
                choices: Array<{ delta: { content?: string }; finish_reason: string | null }>;
                usage?: Record<string, number>;
              },
          );
        expect(
          chunks
            .flatMap((chunk) => chunk.choices.map((choice) => choice.delta.content ?? ''))
            .join(''),
        ).toBe('Mostly in Norway.');
        expect(chunks.flatMap((chunk) => chunk.choices).at(-1)!.finish_reason).toBe('stop');
        expect(chunks.at(-1)!.usage).toEqual({
          prompt_tokens: 12,
          completion_tokens: 4,
          total_tokens: 16,
        });
      },
    );

    it.each(['anthropic', 'google'] as const)(
      'ends a /v1/chat stream cut mid-way by %s with an error event, storing nothing',
      async (vendor) => {
        const fake = vendor === 'anthropic' ? anthropic : google;
        fake.enqueue({ kind: 'cut', afterChunks: 2 });
        const response = await post('/v1/chat', {
          user_id: 'vendor-cut',
          model: `${vendor}-fake`,
          stream: true,
          messages: [{ role: 'user', content: 'Tell me about fjords.' }],
        });
        const events = (await response.text())
          .split('\n\n')
          .filter((frame) => frame.startsWith('data: {'))
          .map((frame) => JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>);
        expect(events[0]!.type).toBe('start');
        expect(events.at(-1)).toMatchObject({ type: 'error', error: { code: 'upstream_error' } });
        expect(events.some((event) => event.type === 'end')).toBe(false);
        const list = await harness.app.inject({
          method: 'GET',
          url: '/v1/conversations?user_id=vendor-cut',
          headers: bearer(harness.adminKey),
        });
        expect(list.json<{ total: number }>().total).toBe(0);
      },
    );

    it('answers a vendor 429 as 503 with its Retry-After', async () => {
      anthropic.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '9' } });
      const response = await post('/chat/completions', {
        model: 'anthropic-fake',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('9');
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'model_unavailable',
      );
    });
  },
);
