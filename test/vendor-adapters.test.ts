// The Anthropic and Google adapters (src/models/providers, through @ai-sdk/anthropic and
// @ai-sdk/google) against fakes that speak the vendors' real wire formats over real HTTP: one
// contract for both — request shape (system prompt placement, max tokens, temperature, key),
// response mapping, usage, finish reasons, streaming, errors (429 with retry-after, 5xx, 401) and
// a stream cut mid-way — then both through the service's /v1/chat and /chat/completions on both
// dialects; last, OpenAI's tools, images, response formats and sampling parameters translated to
// each vendor's wire format and back (streamed tool-call deltas included), and the 400s for what
// a vendor cannot honour, made before any upstream request.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RemoteModelDefinition } from '../src/config/config.js';
import { InvalidParameterError } from '../src/errors/app-error.js';
import { BpeTokenCounter } from '../src/models/bpe-token-counter.js';
import type { ImageFetcher } from '../src/models/providers/ai-sdk-target.js';
import { imageFetcher } from '../src/models/providers/fetched-images.js';
import { createRemoteChatModel } from '../src/models/providers/remote-models.js';
import {
  UpstreamError,
  type ChatModel,
  type ChatParams,
  type ChatTurn,
  type FunctionTool,
  type GenerationRequest,
  type GenerationResult,
  type StreamPart,
  type ToolCall,
} from '../src/models/spec.js';
import { TargetAllowList } from '../src/net/address-policy.js';
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
    maxAttempts: 4,
    deployments: [],
    cache: null,
    capabilities: ['tools', 'vision', 'json_schema'],
    routing: {
      inputCostPerMillion: null,
      outputCostPerMillion: null,
      quality: null,
      typicalLatencyMs: null,
    },
    speech: null,
    pricing: null,
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

// ---------------------------------------------------------------------------------------------
// Tools, images, response formats and OpenAI's sampling parameters, translated both ways.
// ---------------------------------------------------------------------------------------------

const weatherTool: FunctionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city now.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', description: 'The city' } },
      required: ['city'],
    },
  },
};
const timeTool: FunctionTool = {
  type: 'function',
  function: {
    name: 'get_time',
    description: 'The local time in a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** A 1×1 PNG. */
const pngBytes = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
  'base64',
);
const pngDataUrl = `data:image/png;base64,${pngBytes.toString('base64')}`;

type ToolCallPart = Extract<StreamPart, { type: 'tool-call' }>;

/** The calls the deltas spell, as OpenAI's clients put them back together. */
function reassemble(parts: readonly StreamPart[]): ToolCall[] {
  const calls: Array<{ id: string; name: string; arguments: string }> = [];
  for (const part of parts) {
    if (part.type !== 'tool-call') continue;
    const call = (calls[part.index] ??= { id: '', name: '', arguments: '' });
    if (part.id !== undefined) call.id = part.id;
    if (part.name !== undefined) call.name = part.name;
    call.arguments += part.arguments;
  }
  return calls.map((call) => ({
    id: call.id,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
}

async function refusal(action: () => Promise<unknown>): Promise<InvalidParameterError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof InvalidParameterError) return error;
    throw error;
  }
  throw new Error('expected an InvalidParameterError, but the call succeeded');
}

const ask = (content: string): ChatTurn[] => [{ role: 'user', content }];

describe.each(['anthropic', 'google'] as const)(
  'the %s adapter with tools, images and response formats',
  (vendor) => {
    let fake: FakeVendor;
    let images: Server;
    let imagesOrigin: string;
    const imageRequests: string[] = [];
    const loopbackOptions = {
      allowList: TargetAllowList.parse(['127.0.0.1']),
      timeoutMs: 5_000,
      maxRedirects: 3,
      userAgent: 'vendor-adapters-test',
    };
    const allowLoopback = imageFetcher(loopbackOptions);
    const modelWith = (
      overrides: Partial<RemoteModelDefinition> = {},
      /** null: no fetcher (image URLs the vendor cannot fetch are refused). */
      fetchImage: ImageFetcher | null = allowLoopback,
    ): ChatModel =>
      createRemoteChatModel(
        definitionFor(vendor, fake, overrides),
        { get: (name) => (name === 'VENDOR_API_KEY' ? fake.apiKey : undefined) },
        new BpeTokenCounter(),
        fetchImage ?? undefined,
      );
    const withParams = (messages: ChatTurn[], params: ChatParams) =>
      request({ messages, params, temperature: undefined });
    const both = async (
      model: ChatModel,
      generation: GenerationRequest,
    ): Promise<[GenerationResult, StreamPart[]]> => [
      await model.generate(generation),
      await collect(model.stream(generation)),
    ];
    const sent = (at = -1) => fake.requests.at(at)!.body;

    beforeAll(async () => {
      fake = await startFakeVendor(vendor);
      images = createServer((incoming, response) => {
        imageRequests.push(incoming.url ?? '');
        if (incoming.url === '/cat.png') {
          response.writeHead(200, { 'content-type': 'image/png' }).end(pngBytes);
        } else response.writeHead(200, { 'content-type': 'text/html' }).end('<p>not an image</p>');
      });
      await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
      imagesOrigin = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await fake.close();
      await new Promise<void>((resolve) => images.close(() => resolve()));
    });
    beforeEach(() => {
      fake.reset();
      imageRequests.length = 0;
    });

    it('sends the tools as the vendor declares functions', async () => {
      await modelWith().generate(withParams(ask('Weather in Oslo?'), { tools: [weatherTool] }));
      if (vendor === 'anthropic') {
        expect(sent().tools).toEqual([
          {
            name: 'get_weather',
            description: 'The weather in a city now.',
            input_schema: weatherTool.function.parameters,
          },
        ]);
      } else {
        expect(sent().tools).toEqual([
          {
            functionDeclarations: [
              {
                name: 'get_weather',
                description: 'The weather in a city now.',
                parameters: {
                  type: 'object',
                  properties: { city: { type: 'string', description: 'The city' } },
                  required: ['city'],
                },
              },
            ],
          },
        ]);
      }
    });

    it.each([false, true])(
      'runs a two-step tool loop (streamed: %s): the call, then its result as the vendor takes it',
      async (streamed) => {
        const id = vendor === 'anthropic' ? 'toolu_01weather' : 'call-weather-1';
        fake.enqueue(
          { kind: 'reply', toolCalls: [{ id, name: 'get_weather', input: { city: 'Oslo' } }] },
          { kind: 'reply', text: 'It is 4 °C in Oslo.' },
        );
        const model = modelWith();
        const first = withParams(ask('Weather in Oslo?'), { tools: [weatherTool] });
        let calls: readonly ToolCall[];
        if (streamed) {
          const parts = await collect(model.stream(first));
          const deltas = parts.filter((part): part is ToolCallPart => part.type === 'tool-call');
          // The first delta names the call; the others only append to its arguments.
          expect(deltas[0]).toEqual({
            type: 'tool-call',
            index: 0,
            id,
            name: 'get_weather',
            arguments: '',
          });
          expect(deltas.slice(1).every((part) => part.id === undefined && part.index === 0)).toBe(
            true,
          );
          // Anthropic streams the input in fragments (three here); Google sends it whole.
          expect(deltas.length).toBe(vendor === 'anthropic' ? 4 : 2);
          expect(parts.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool_calls' });
          expect(parts.some((part) => part.type === 'text')).toBe(false);
          calls = reassemble(parts);
        } else {
          const result = await model.generate(first);
          expect(result.finishReason).toBe('tool_calls');
          expect(result.text).toBe('');
          calls = result.toolCalls!;
        }
        expect(calls).toEqual([
          {
            id,
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
          },
        ]);

        const second = withParams(
          [
            ...ask('Weather in Oslo?'),
            { role: 'assistant', content: '', toolCalls: calls },
            { role: 'tool', content: '{"temp_c":4}', toolCallId: id },
          ],
          { tools: [weatherTool] },
        );
        if (streamed) {
          const parts = await collect(model.stream(second));
          expect(parts.map((part) => (part.type === 'text' ? part.text : '')).join('')).toBe(
            'It is 4 °C in Oslo.',
          );
        } else {
          expect((await model.generate(second)).text).toBe('It is 4 °C in Oslo.');
        }
        if (vendor === 'anthropic') {
          expect(sent().messages).toEqual([
            { role: 'user', content: [{ type: 'text', text: 'Weather in Oslo?' }] },
            {
              role: 'assistant',
              content: [{ type: 'tool_use', id, name: 'get_weather', input: { city: 'Oslo' } }],
            },
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: id, content: '{"temp_c":4}' }],
            },
          ]);
        } else {
          expect(sent().contents).toEqual([
            { role: 'user', parts: [{ text: 'Weather in Oslo?' }] },
            {
              role: 'model',
              parts: [{ functionCall: { id, name: 'get_weather', args: { city: 'Oslo' } } }],
            },
            {
              role: 'user',
              parts: [
                {
                  functionResponse: {
                    id,
                    name: 'get_weather',
                    response: { name: 'get_weather', content: '{"temp_c":4}' },
                  },
                },
              ],
            },
          ]);
        }
      },
    );

    it('relays parallel calls with an index each, and sends their results back together', async () => {
      const calls = [
        { id: 'call_a', name: 'get_weather', input: { city: 'Oslo' } },
        { id: 'call_b', name: 'get_time', input: { city: 'Bergen' } },
      ];
      fake.enqueue({ kind: 'reply', toolCalls: calls }, { kind: 'reply', toolCalls: calls });
      const [result, parts] = await both(
        modelWith(),
        withParams(ask('Weather in Oslo, time in Bergen?'), { tools: [weatherTool, timeTool] }),
      );
      const expected = calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.input) },
      }));
      expect(result.toolCalls).toEqual(expected);
      expect(reassemble(parts)).toEqual(expected);
      const starts = parts.filter(
        (part): part is ToolCallPart => part.type === 'tool-call' && part.id !== undefined,
      );
      expect(starts.map((part) => [part.index, part.id])).toEqual([
        [0, 'call_a'],
        [1, 'call_b'],
      ]);

      fake.enqueue({ kind: 'reply', text: 'Cold, and noon.' });
      await modelWith().generate(
        withParams(
          [
            ...ask('Weather in Oslo, time in Bergen?'),
            { role: 'assistant', content: '', toolCalls: result.toolCalls },
            { role: 'tool', content: '4 °C', toolCallId: 'call_a' },
            { role: 'tool', content: '12:00', toolCallId: 'call_b' },
          ],
          { tools: [weatherTool, timeTool] },
        ),
      );
      if (vendor === 'anthropic') {
        const messages = sent().messages as Array<{ role: string; content: unknown[] }>;
        expect(messages).toHaveLength(3);
        expect(messages[2]).toEqual({
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_a', content: '4 °C' },
            { type: 'tool_result', tool_use_id: 'call_b', content: '12:00' },
          ],
        });
      } else {
        const contents = sent().contents as Array<{ role: string; parts: unknown[] }>;
        expect(contents).toHaveLength(3);
        expect(contents[2]).toMatchObject({
          role: 'user',
          parts: [
            { functionResponse: { id: 'call_a', name: 'get_weather' } },
            { functionResponse: { id: 'call_b', name: 'get_time' } },
          ],
        });
      }
    });

    it('streams a call without arguments as one delta of `{}` after the one naming it', async () => {
      fake.enqueue({
        kind: 'reply',
        toolCalls: [{ id: 'call_now', name: 'get_time', input: {}, fragments: [] }],
      });
      const parts = await collect(
        modelWith().stream(withParams(ask('What time is it?'), { tools: [timeTool] })),
      );
      expect(parts.filter((part) => part.type === 'tool-call')).toEqual([
        { type: 'tool-call', index: 0, id: 'call_now', name: 'get_time', arguments: '' },
        { type: 'tool-call', index: 0, arguments: '{}' },
      ]);
    });

    it('passes tool_choice naming a function, required and none', async () => {
      const model = modelWith();
      const tools = [weatherTool, timeTool];
      const named = { type: 'function', function: { name: 'get_time' } } as const;
      for (const tool_choice of [named, 'required', 'none'] as const) {
        await model.generate(withParams(ask('Time in Bergen?'), { tools, tool_choice }));
      }
      const choices = fake.requests.map((entry) =>
        vendor === 'anthropic'
          ? entry.body.tool_choice
          : (entry.body.toolConfig as { functionCallingConfig: unknown }).functionCallingConfig,
      );
      expect(choices).toEqual(
        vendor === 'anthropic'
          ? [{ type: 'tool', name: 'get_time' }, { type: 'any' }, { type: 'none' }]
          : [
              { mode: 'ANY', allowedFunctionNames: ['get_time'] },
              { mode: 'ANY' },
              { mode: 'NONE' },
            ],
      );
    });

    it('sends an image given as a data URL inline', async () => {
      await modelWith().generate(
        withParams(
          [
            {
              role: 'user',
              content: 'What is this?',
              parts: [
                { type: 'text', text: 'What is this?' },
                { type: 'image_url', image_url: { url: pngDataUrl } },
              ],
            },
          ],
          {},
        ),
      );
      const data = pngBytes.toString('base64');
      if (vendor === 'anthropic') {
        expect(sent().messages).toEqual([
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data } },
            ],
          },
        ]);
      } else {
        expect(sent().contents).toEqual([
          {
            role: 'user',
            parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data } }],
          },
        ]);
      }
    });

    const imageTurn = (url: string): ChatTurn[] => [
      {
        role: 'user',
        content: 'What is this?',
        parts: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url } },
        ],
      },
    ];

    it('sends an image URL as a URL where the vendor fetches it, else its fetched bytes', async () => {
      const url = `${imagesOrigin}/cat.png`;
      await modelWith().generate(withParams(imageTurn(url), {}));
      const userParts =
        vendor === 'anthropic'
          ? (sent().messages as Array<{ content: unknown[] }>)[0]!.content
          : (sent().contents as Array<{ parts: unknown[] }>)[0]!.parts;
      if (vendor === 'anthropic') {
        // Anthropic fetches any http(s) image URL itself: the platform does not.
        expect(userParts[1]).toEqual({ type: 'image', source: { type: 'url', url } });
        expect(imageRequests).toEqual([]);
      } else {
        // Gemini 2.0 fetches no external URL: the platform fetched the bytes, through the policy.
        expect(userParts[1]).toEqual({
          inlineData: { mimeType: 'image/png', data: pngBytes.toString('base64') },
        });
        expect(imageRequests).toEqual(['/cat.png']);
        // Later Gemini models fetch https URLs of the image types they name themselves.
        fake.reset();
        const remote = 'https://images.example/cat.png';
        await modelWith({ model: 'gemini-2.5-flash' }).generate(withParams(imageTurn(remote), {}));
        expect((sent().contents as Array<{ parts: unknown[] }>)[0]!.parts[1]).toEqual({
          fileData: { mimeType: 'image/png', fileUri: remote },
        });
      }
    });

    it.runIf(vendor === 'google')(
      'refuses (400) an image URL it must fetch but may not, or that is no image, before any upstream call',
      async () => {
        const param = 'messages[0].content[1].image_url.url';
        const blocked = await refusal(() =>
          modelWith(
            {},
            imageFetcher({
              allowList: TargetAllowList.empty,
              timeoutMs: 5_000,
              maxRedirects: 3,
              userAgent: 'vendor-adapters-test',
            }),
          ).generate(withParams(imageTurn(`${imagesOrigin}/cat.png`), {})),
        );
        expect(blocked.param).toBe(param);
        expect(blocked.message).toContain('data URL');
        const notImage = await refusal(() =>
          modelWith().generate(withParams(imageTurn(`${imagesOrigin}/page.html`), {})),
        );
        expect(notImage.param).toBe(param);
        expect(notImage.message).toContain("content type 'text/html'");
        const noFetcher = await refusal(() =>
          modelWith({}, null).generate(withParams(imageTurn(`${imagesOrigin}/cat.png`), {})),
        );
        expect(noFetcher.param).toBe(param);
        expect(noFetcher.message).toContain('data URL');
        const tooLarge = await refusal(() =>
          modelWith({}, imageFetcher(loopbackOptions, pngBytes.length - 1)).generate(
            withParams(imageTurn(`${imagesOrigin}/cat.png`), {}),
          ),
        );
        expect(tooLarge.param).toBe(param);
        expect(tooLarge.message).toContain(`larger than ${pngBytes.length - 1} bytes`);
        expect(imageRequests).toEqual(['/page.html', '/cat.png']);
        expect(fake.requests).toHaveLength(0);
      },
    );

    const answerSchema = {
      type: 'object',
      properties: { city: { type: 'string' }, temp_c: { type: 'number' } },
      required: ['city', 'temp_c'],
      additionalProperties: false,
    };

    it('asks for JSON following a json_schema response format', async () => {
      const json = { city: 'Oslo', temp_c: 4 };
      // Anthropic's older models answer through a forced `json` tool, read back as the text.
      fake.enqueue(
        vendor === 'anthropic'
          ? { kind: 'reply', toolCalls: [{ name: 'json', input: json }] }
          : { kind: 'reply', text: JSON.stringify(json) },
      );
      const result = await modelWith().generate(
        withParams(ask('Weather in Oslo as JSON'), {
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'weather', schema: answerSchema, strict: true },
          },
        }),
      );
      expect(JSON.parse(result.text)).toEqual(json);
      expect(result.finishReason).toBe('stop');
      expect(result.toolCalls).toBeUndefined();
      if (vendor === 'anthropic') {
        expect(sent()).toMatchObject({
          tools: [{ name: 'json', input_schema: answerSchema }],
          tool_choice: { type: 'any', disable_parallel_tool_use: true },
        });
        // Models with structured outputs get the schema as the output format.
        fake.reset();
        await modelWith({ model: 'claude-sonnet-4-5' }).generate(
          withParams(ask('Weather in Oslo as JSON'), {
            response_format: {
              type: 'json_schema',
              json_schema: { name: 'weather', schema: answerSchema },
            },
          }),
        );
        expect(sent().output_config).toMatchObject({
          format: { type: 'json_schema', schema: { required: ['city', 'temp_c'] } },
        });
      } else {
        expect(sent().generationConfig).toMatchObject({
          responseMimeType: 'application/json',
          responseSchema: {
            type: 'object',
            properties: { city: { type: 'string' }, temp_c: { type: 'number' } },
            required: ['city', 'temp_c'],
          },
        });
      }
    });

    it('asks for any JSON object on json_object', async () => {
      await modelWith().generate(
        withParams(ask('JSON please'), { response_format: { type: 'json_object' } }),
      );
      if (vendor === 'anthropic') {
        expect(sent()).toMatchObject({
          tools: [{ name: 'json', input_schema: { type: 'object' } }],
          tool_choice: { type: 'any' },
        });
      } else {
        expect(sent().generationConfig).toMatchObject({ responseMimeType: 'application/json' });
        expect((sent().generationConfig as Record<string, unknown>).responseSchema).toBeUndefined();
      }
    });

    it('sends stop, top_p (and seed and the penalties to Google) under the vendor names', async () => {
      const params: ChatParams =
        vendor === 'anthropic'
          ? { stop: ['END', 'STOP'], top_p: 0.9 }
          : { stop: 'END', top_p: 0.9, seed: 42, presence_penalty: 0.5, frequency_penalty: 0.25 };
      await collect(modelWith().stream(withParams(ask('Count'), params)));
      await modelWith().generate(withParams(ask('Count'), params));
      for (const entry of fake.requests) {
        if (vendor === 'anthropic') {
          expect(entry.body).toMatchObject({ stop_sequences: ['END', 'STOP'], top_p: 0.9 });
        } else {
          expect(entry.body.generationConfig).toMatchObject({
            stopSequences: ['END'],
            topP: 0.9,
            seed: 42,
            presencePenalty: 0.5,
            frequencyPenalty: 0.25,
          });
        }
      }
      expect(fake.requests).toHaveLength(2);
    });

    it('ignores the fields without meaning for the vendor', async () => {
      await modelWith().generate(
        withParams(ask('Hi'), {
          user: 'user-1234',
          metadata: { team: 'blue' },
          store: true,
          service_tier: 'auto',
          some_future_field: { x: 1 },
          n: 1,
          logprobs: false,
          parallel_tool_calls: true,
        }),
      );
      const body = JSON.stringify(sent());
      for (const value of ['user-1234', 'blue', 'service_tier', 'some_future_field']) {
        expect(body).not.toContain(value);
      }
    });

    type Refusal = [string, ChatParams, Partial<GenerationRequest>?];
    const refusals: Refusal[] = [
      ['logit_bias', { logit_bias: { '50256': -100 } }],
      ['logprobs', { logprobs: true }],
      ['top_logprobs', { top_logprobs: 3 }],
      ['n', { n: 2 }],
      ['audio', { audio: { voice: 'alloy', format: 'mp3' } }],
      ['modalities', { modalities: ['text', 'audio'] }],
      ...(vendor === 'anthropic'
        ? ([
            ['seed', { seed: 7 }],
            ['presence_penalty', { presence_penalty: 0.5 }],
            ['frequency_penalty', { frequency_penalty: 0.5 }],
            ['temperature', {}, { temperature: 1.5 }],
          ] satisfies Refusal[])
        : ([
            ['parallel_tool_calls', { tools: [weatherTool], parallel_tool_calls: false }],
          ] satisfies Refusal[])),
    ];

    it.each(refusals)(
      'refuses %s (400 naming it) before any upstream call, streamed or not',
      async (param, params, overrides = {}) => {
        const generation = { ...withParams(ask('Hi'), params), ...overrides };
        const plain = await refusal(() => modelWith().generate(generation));
        const streamed = await refusal(() => collect(modelWith().stream(generation)));
        for (const error of [plain, streamed]) {
          expect(error.param).toBe(param);
          expect(error.status).toBe(400);
          expect(error.message).toContain(`${vendor}-fake`);
        }
        expect(fake.requests).toHaveLength(0);
      },
    );

    it.runIf(vendor === 'google')('refuses penalties on Gemini 2.5, which drops them', async () => {
      const error = await refusal(() =>
        modelWith({ model: 'gemini-2.5-flash' }).generate(
          withParams(ask('Hi'), { presence_penalty: 0.5 }),
        ),
      );
      expect(error.param).toBe('presence_penalty');
      expect(fake.requests).toHaveLength(0);
    });

    it.runIf(vendor === 'anthropic')(
      'parallel_tool_calls false disables parallel tool use',
      async () => {
        await modelWith().generate(
          withParams(ask('Weather?'), { tools: [weatherTool], parallel_tool_calls: false }),
        );
        expect(sent().tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
      },
    );

    it.runIf(vendor === 'anthropic')(
      'answers 400 when the SDK drops a parameter for the model after all (top_p on a model without sampling parameters)',
      async () => {
        const generation = withParams(ask('Hi'), { top_p: 0.5 });
        const model = modelWith({ model: 'claude-opus-4-7' });
        const plain = await refusal(() => model.generate(generation));
        const streamed = await refusal(() => collect(model.stream(generation)));
        expect([plain.param, streamed.param]).toEqual(['top_p', 'top_p']);
        expect(fake.requests.map((entry) => entry.body.top_p)).toEqual([undefined, undefined]);
      },
    );

    it('refuses tool-call arguments that are not JSON, and results of unknown calls, naming them', async () => {
      const call: ToolCall = {
        id: 'call_x',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city": Oslo' },
      };
      const badArguments = await refusal(() =>
        modelWith().generate(
          withParams(
            [
              ...ask('Weather?'),
              { role: 'assistant', content: '', toolCalls: [call] },
              { role: 'tool', content: '4', toolCallId: 'call_x' },
            ],
            { tools: [weatherTool] },
          ),
        ),
      );
      expect(badArguments.param).toBe('messages[1].tool_calls[0].function.arguments');
      const unknownCall = await refusal(() =>
        modelWith().generate(
          withParams([...ask('Weather?'), { role: 'tool', content: '4', toolCallId: 'call_y' }], {
            tools: [weatherTool],
          }),
        ),
      );
      expect(unknownCall.param).toBe('messages[1].tool_call_id');
      const unknownFunction = await refusal(() =>
        modelWith().generate(
          withParams(ask('Weather?'), {
            tools: [weatherTool],
            tool_choice: { type: 'function', function: { name: 'get_time' } },
          }),
        ),
      );
      expect(unknownFunction.param).toBe('tool_choice.function.name');
      expect(fake.requests).toHaveLength(0);
    });

    it('reports the cached prompt tokens, streamed or not', async () => {
      // Anthropic counts cached tokens apart from input_tokens; Google within promptTokenCount.
      const reply = {
        kind: 'reply',
        text: 'Cached.',
        inputTokens: vendor === 'anthropic' ? 20 : 100,
        outputTokens: 2,
        cachedTokens: 80,
      } as const;
      fake.enqueue(reply, reply);
      const [result, parts] = await both(modelWith(), withParams(ask('Again'), {}));
      const usage = { promptTokens: 100, completionTokens: 2, cachedTokens: 80 };
      expect(result.usage).toEqual(usage);
      expect(parts.at(-1)).toEqual({ type: 'finish', finishReason: 'stop', usage });
    });

    it.runIf(vendor === 'google')('sends audio input as inline audio', async () => {
      await modelWith().generate(
        withParams(
          [
            {
              role: 'user',
              content: 'Transcribe',
              parts: [
                { type: 'text', text: 'Transcribe' },
                { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
              ],
            },
          ],
          {},
        ),
      );
      expect((sent().contents as Array<{ parts: unknown[] }>)[0]!.parts[1]).toEqual({
        inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' },
      });
    });
  },
);
