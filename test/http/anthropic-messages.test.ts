// Anthropic's Messages API (/v1/messages, /v1/messages/count_tokens) driven by the official
// `@anthropic-ai/sdk` client pointed at the platform's root URL: over an OpenAI-compatible model
// (the fake OpenAI upstream), where the request is translated both ways and the upstream's
// Chat Completions body is checked; and over a model of the `anthropic` provider (the fake
// Anthropic), where the vendor receives the client's body unchanged but for `model` and the
// answer comes back as sent but for its id and model. Plain, streamed (the event sequence), a
// tool loop, an image, token counts, and Anthropic's error shape (the SDK's error classes).
import Anthropic, {
  AuthenticationError,
  BadRequestError,
  PermissionDeniedError,
} from '@anthropic-ai/sdk';
import type {
  MessageParam,
  MessageStreamEvent,
  Tool,
} from '@anthropic-ai/sdk/resources/messages/messages';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatHarness, upstreamSecret, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import type { RecordedRequest } from '../support/fake-upstream.js';
import { startFakeVendor, type FakeVendor } from '../support/fake-vendors.js';
import { freePort } from '../support/process.js';
import { bearer, createKey } from '../support/test-app.js';

const weatherTool: Tool = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};

/** A 1×1 PNG. */
const pixelBase64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

type Json = Record<string, unknown>;

/**
 * A request with the sampling parameters Anthropic's API takes, which this SDK's types no longer
 * list (it sends them all the same).
 */
type SampledParams = Anthropic.MessageCreateParamsNonStreaming & {
  temperature?: number;
  top_p?: number;
  top_k?: number;
};

async function collect(stream: AsyncIterable<MessageStreamEvent>): Promise<MessageStreamEvent[]> {
  const events: MessageStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The event types in order, each run of deltas of one block read as one. */
function sequence(events: MessageStreamEvent[]): string[] {
  const types: string[] = [];
  for (const event of events) {
    const type =
      event.type === 'content_block_delta' ? `content_block_delta:${event.delta.type}` : event.type;
    if (types.at(-1) !== type || event.type !== 'content_block_delta') types.push(type);
  }
  return types;
}

/** One Prometheus sample's value (0 when absent). */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} (\S+)$/.exec(line);
    if (match?.[1] === name && wanted.every((pair) => match[2]!.includes(pair))) {
      return Number(match[3]);
    }
  }
  return 0;
}

describe.each(allDialects)("Anthropic's Messages API ($name)", (dialect) => {
  let harness: ChatHarness;
  let anthropic: FakeVendor;
  let client: Anthropic;
  let key: string;
  let baseUrl: string;

  beforeAll(async () => {
    anthropic = await startFakeVendor('anthropic');
    const closedUrl = `http://127.0.0.1:${await freePort()}`;
    harness = await startChatHarness({
      dialect,
      env: { ANTHROPIC_FAKE_KEY: anthropic.apiKey },
      extraModels: (upstreamUrl) => [
        {
          name: 'fake-tools',
          provider: 'openai-compatible',
          base_url: upstreamUrl,
          model: 'gpt-4o',
          api_key_env: 'FAKE_UPSTREAM_KEY',
          capabilities: ['tools', 'vision', 'json_schema'],
          max_tokens: 256,
          context_length: 4096,
          max_retries: 0,
        },
        {
          name: 'claude-fake',
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          base_url: anthropic.baseUrl,
          api_key_env: 'ANTHROPIC_FAKE_KEY',
          max_tokens: 512,
          context_length: 100_000,
          max_retries: 0,
        },
        {
          // The entry's own URL answers nothing: only its deployments do (one of them).
          name: 'claude-pool',
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          base_url: closedUrl,
          api_key_env: 'ANTHROPIC_FAKE_KEY',
          max_tokens: 512,
          context_length: 100_000,
          deployments: [
            { name: 'down', base_url: closedUrl },
            { name: 'up', base_url: anthropic.baseUrl },
          ],
        },
      ],
    });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = harness.app.server.address() as AddressInfo;
    baseUrl = `http://127.0.0.1:${port}`;
    key = (
      await createKey(harness.app, harness.adminKey, { scopes: ['chat:write', 'models:read'] })
    ).key;
    // The SDK appends /v1/messages to the platform's root, as to Anthropic's.
    client = new Anthropic({ apiKey: key, baseURL: baseUrl, maxRetries: 0 });
  });

  afterAll(async () => {
    await harness?.close();
    await anthropic?.close();
  });

  beforeEach(() => {
    harness.upstream.reset();
    anthropic.reset();
  });

  /** The Chat Completions bodies the OpenAI-compatible upstream received. */
  const upstreamBodies = () =>
    harness.upstream.requests
      .filter((request: RecordedRequest) => request.endpoint === 'chat')
      .map((request) => request.body as Json);

  const scrape = async () =>
    (
      await harness.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: bearer(harness.adminKey),
      })
    ).body;

  describe('over an OpenAI-compatible model (translated)', () => {
    const model = 'fake-tools';

    it('answers messages.create with a message, the request translated for the upstream', async () => {
      const params: SampledParams = {
        model,
        max_tokens: 100,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'Hello there' }],
        stop_sequences: ['END'],
        temperature: 0.5,
        top_p: 0.9,
        metadata: { user_id: 'user-7' },
      };
      const message = await client.messages.create(params);
      expect(message).toMatchObject({
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text: 'Echo: Hello there' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
      });
      expect(message.id).toMatch(/^msg_/);
      expect(message.usage.input_tokens).toBeGreaterThan(0);
      expect(message.usage.output_tokens).toBeGreaterThan(0);
      const [body] = upstreamBodies();
      expect(body).toEqual({
        model: 'gpt-4o',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello there' },
        ],
        stop: ['END'],
        top_p: 0.9,
        user: 'user-7',
        max_tokens: 100,
        temperature: 0.5,
      });
    });

    it('streams the event sequence of Anthropic, the final message put together by the SDK', async () => {
      harness.upstream.enqueue({ kind: 'reply', chunks: ['Sunny ', 'and ', 'warm.'] });
      const stream = client.messages.stream({
        model,
        max_tokens: 50,
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      const events = await collect(stream);
      expect(sequence(events)).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta:text_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      const final = await stream.finalMessage();
      expect(final.content).toEqual([{ type: 'text', text: 'Sunny and warm.' }]);
      expect(final.stop_reason).toBe('end_turn');
      expect(final.model).toBe(model);
      expect(final.usage.output_tokens).toBeGreaterThan(0);
      expect(final.usage.input_tokens).toBeGreaterThan(0);
      expect(upstreamBodies()[0]).toMatchObject({ stream: true, max_tokens: 50 });
    });

    it("ends a stream the upstream cut with Anthropic's error event", async () => {
      harness.upstream.enqueue({ kind: 'cut', afterChunks: 2 });
      const stream = client.messages.stream({
        model,
        max_tokens: 50,
        messages: [{ role: 'user', content: 'Tell me a story.' }],
      });
      const failure = await collect(stream).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Anthropic.APIError);
      expect((failure as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'api_error', code: 'upstream_error' },
      });
    });

    it('runs a tool loop: tool_use from the upstream call, tool_result sent back as a tool message', async () => {
      harness.upstream.enqueue({
        kind: 'reply',
        toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      });
      const messages: MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
      const first = await client.messages.create({
        model,
        max_tokens: 100,
        messages,
        tools: [weatherTool],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      });
      expect(first.stop_reason).toBe('tool_use');
      expect(first.content).toEqual([
        { type: 'tool_use', id: 'call_w1', name: 'get_weather', input: { city: 'Paris' } },
      ]);
      expect(upstreamBodies()[0]).toMatchObject({
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'The weather in a city.',
              parameters: weatherTool.input_schema,
            },
          },
        ],
        tool_choice: 'auto',
        parallel_tool_calls: false,
      });

      harness.upstream.enqueue({ kind: 'reply', content: 'Sunny in Paris.' });
      const second = await client.messages.create({
        model,
        max_tokens: 100,
        tools: [weatherTool],
        messages: [
          ...messages,
          { role: 'assistant', content: first.content },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 'call_w1', content: '{"sky":"sunny"}' }],
          },
        ],
      });
      expect(second.content).toEqual([{ type: 'text', text: 'Sunny in Paris.' }]);
      expect(upstreamBodies()[1]!.messages).toEqual([
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_w1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', content: '{"sky":"sunny"}', tool_call_id: 'call_w1' },
      ]);
    });

    it('streams a tool call as a tool_use block with input_json_delta', async () => {
      harness.upstream.enqueue({
        kind: 'reply',
        toolCalls: [{ id: 'call_s1', name: 'get_weather', arguments: '{"city":"Rome"}' }],
      });
      const stream = client.messages.stream({
        model,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Rome?' }],
        tools: [weatherTool],
        tool_choice: { type: 'tool', name: 'get_weather' },
      });
      const events = await collect(stream);
      expect(sequence(events)).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta:input_json_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      const final = await stream.finalMessage();
      expect(final.stop_reason).toBe('tool_use');
      expect(final.content).toEqual([
        { type: 'tool_use', id: 'call_s1', name: 'get_weather', input: { city: 'Rome' } },
      ]);
      expect(upstreamBodies()[0]!.tool_choice).toEqual({
        type: 'function',
        function: { name: 'get_weather' },
      });
    });

    it('sends a base64 image as an image_url part with a data URL', async () => {
      await client.messages.create({
        model,
        max_tokens: 100,
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'image',
                source: { type: 'base64', media_type: 'image/png', data: pixelBase64 },
              },
              { type: 'text', text: 'What is this?' },
            ],
          },
        ],
      });
      expect(upstreamBodies()[0]!.messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: `data:image/png;base64,${pixelBase64}` } },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ]);
    });

    it('asks for JSON-schema output (output_config.format) as a json_schema response_format', async () => {
      const schema = {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      };
      harness.upstream.enqueue({ kind: 'reply', content: '{"city":"Paris"}' });
      const message = await client.messages.create({
        model,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Which city?' }],
        output_config: { format: { type: 'json_schema', schema } },
      });
      expect(message.content).toEqual([{ type: 'text', text: '{"city":"Paris"}' }]);
      expect(upstreamBodies()[0]!.response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'output', schema, strict: true },
      });
    });

    it('stores the turn with the user_id extension, and continues the conversation it names', async () => {
      const first = (await client.messages.create({
        model,
        max_tokens: 50,
        user_id: 'ann',
        messages: [{ role: 'user', content: 'one' }],
      } as Anthropic.MessageCreateParamsNonStreaming)) as Anthropic.Message & {
        conversation_id: string;
        message_id: string;
      };
      expect(first.conversation_id).toMatch(/^conv_/);
      expect(first.message_id).toBe(first.id);
      const stream = client.messages.stream({
        model,
        max_tokens: 50,
        user_id: 'ann',
        conversation_id: first.conversation_id,
        messages: [{ role: 'user', content: 'two' }],
      } as Anthropic.MessageStreamParams);
      const start = (await collect(stream))[0] as Extract<
        MessageStreamEvent,
        { type: 'message_start' }
      >;
      expect(start.message).toMatchObject({ conversation_id: first.conversation_id });
      // The stored history comes before the new turn.
      expect(upstreamBodies()[1]!.messages).toEqual([
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'Echo: one' },
        { role: 'user', content: 'two' },
      ]);
      const history = await harness.app.inject({
        method: 'GET',
        url: `/v1/conversations/${first.conversation_id}/messages`,
        headers: bearer(harness.adminKey),
      });
      const { messages } = history.json<{ messages: Array<Record<string, unknown>> }>();
      expect(messages.map((message) => [message.role, message.content])).toEqual([
        ['user', 'one'],
        ['assistant', 'Echo: one'],
        ['user', 'two'],
        ['assistant', 'Echo: two'],
      ]);
    });

    it('counts tokens with the model’s counter, tools included, without calling the upstream', async () => {
      const plain = await client.messages.countTokens({
        model,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'How many tokens is this?' }],
      });
      const withTools = await client.messages.countTokens({
        model,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'How many tokens is this?' }],
        tools: [weatherTool],
      });
      expect(plain.input_tokens).toBeGreaterThan(5);
      expect(withTools.input_tokens).toBeGreaterThan(plain.input_tokens);
      expect(upstreamBodies()).toEqual([]);
    });

    it("refuses what it cannot translate with Anthropic's 400 (BadRequestError), before any upstream call", async () => {
      const params: SampledParams = {
        model,
        max_tokens: 100,
        top_k: 5,
        messages: [{ role: 'user', content: 'Hi' }],
      };
      const refused = await client.messages.create(params).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BadRequestError);
      expect((refused as BadRequestError).error).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', param: 'top_k', code: 'invalid_parameter' },
      });
      expect((refused as BadRequestError).message).toContain('top_k');
      expect(upstreamBodies()).toEqual([]);
    });

    it('answers 400 naming the image when the model lacks vision', async () => {
      const refused = await client.messages
        .create({
          model: 'fake-chat',
          max_tokens: 100,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'Look:' },
                {
                  type: 'image',
                  source: { type: 'base64', media_type: 'image/png', data: pixelBase64 },
                },
              ],
            },
          ],
        })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BadRequestError);
      expect((refused as BadRequestError).error).toMatchObject({
        error: { param: 'messages[0].content[1]' },
      });
      expect(upstreamBodies()).toEqual([]);
    });
  });

  it('answers over an Anthropic model of several deployments, from the one that is up', async () => {
    anthropic.enqueue({ kind: 'reply', text: 'From the pool.', inputTokens: 5, outputTokens: 3 });
    const message = await client.messages.create({
      model: 'claude-pool',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Hello pool' }],
    });
    expect(message).toMatchObject({
      type: 'message',
      model: 'claude-pool',
      content: [{ type: 'text', text: 'From the pool.' }],
    });
    expect(anthropic.requests).toHaveLength(1);
  });

  describe('over an Anthropic model (passed through)', () => {
    const model = 'claude-fake';

    it('sends the body unchanged but for the model, and relays the message under the platform’s id', async () => {
      const before = await scrape();
      const request = {
        model,
        max_tokens: 100,
        system: [
          {
            type: 'text' as const,
            text: 'Be brief.',
            cache_control: { type: 'ephemeral' as const },
          },
        ],
        messages: [{ role: 'user' as const, content: 'Hello there' }],
        top_k: 5,
        metadata: { user_id: 'user-7' },
      };
      anthropic.enqueue({ kind: 'reply', text: 'Hi!', inputTokens: 11, outputTokens: 2 });
      const message = await client.messages.create(request);
      expect(message).toMatchObject({
        type: 'message',
        role: 'assistant',
        model,
        content: [{ type: 'text', text: 'Hi!' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 11, output_tokens: 2 },
      });
      expect(message.id).toMatch(/^msg_/);
      const [received] = anthropic.requests;
      expect(received!.url).toBe('/v1/messages');
      expect(received!.body).toEqual({ ...request, model: 'claude-sonnet-4-5' });
      expect(received!.headers['x-api-key']).toBe(anthropic.apiKey);
      // The client's API version is forwarded; the platform's key never is.
      expect(received!.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(JSON.stringify(received!.headers)).not.toContain(key);
      // The call is metered as every model call is.
      const after = await scrape();
      const tokens = (text: string, type: string) =>
        sample(text, 'platform_upstream_tokens_total', { model, type });
      expect(tokens(after, 'prompt') - tokens(before, 'prompt')).toBe(11);
      expect(tokens(after, 'completion') - tokens(before, 'completion')).toBe(2);
    });

    it('caps max_tokens at the model’s maximum', async () => {
      await client.messages.create({
        model,
        max_tokens: 5000,
        messages: [{ role: 'user', content: 'Long answer, please.' }],
      });
      expect(anthropic.requests[0]!.body.max_tokens).toBe(512);
    });

    it('relays the stream event by event, message_start under the platform’s id and model', async () => {
      anthropic.enqueue({ kind: 'reply', chunks: ['Sunny ', 'and warm.'], outputTokens: 4 });
      const stream = client.messages.stream({
        model,
        max_tokens: 50,
        messages: [{ role: 'user', content: 'Weather?' }],
      });
      const events = await collect(stream);
      expect(sequence(events)).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta:text_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      const start = events[0] as Extract<MessageStreamEvent, { type: 'message_start' }>;
      expect(start.message.model).toBe(model);
      expect(start.message.id).toMatch(/^msg_/);
      const final = await stream.finalMessage();
      expect(final.content).toEqual([{ type: 'text', text: 'Sunny and warm.' }]);
      expect(final.usage.output_tokens).toBe(4);
      expect(anthropic.requests[0]!.body).toEqual({
        model: 'claude-sonnet-4-5',
        max_tokens: 50,
        messages: [{ role: 'user', content: 'Weather?' }],
        stream: true,
      });
    });

    it('runs a tool loop with the blocks exactly as the client wrote them', async () => {
      anthropic.enqueue({
        kind: 'reply',
        toolCalls: [{ id: 'toolu_p1', name: 'get_weather', input: { city: 'Oslo' } }],
      });
      const messages: MessageParam[] = [{ role: 'user', content: 'Oslo?' }];
      const first = await client.messages.create({
        model,
        max_tokens: 100,
        messages,
        tools: [weatherTool],
      });
      expect(first.stop_reason).toBe('tool_use');
      expect(first.content).toEqual([
        { type: 'tool_use', id: 'toolu_p1', name: 'get_weather', input: { city: 'Oslo' } },
      ]);
      const followUp: MessageParam[] = [
        ...messages,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_p1', content: 'Snow.', is_error: false },
          ],
        },
      ];
      anthropic.enqueue({ kind: 'reply', text: 'Snow in Oslo.' });
      const second = await client.messages.create({
        model,
        max_tokens: 100,
        messages: followUp,
        tools: [weatherTool],
      });
      expect(second.content).toEqual([{ type: 'text', text: 'Snow in Oslo.' }]);
      expect(anthropic.requests[1]!.body).toEqual({
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        messages: followUp,
        tools: [weatherTool],
      });
    });

    it('streams a tool call as Anthropic sent it', async () => {
      anthropic.enqueue({
        kind: 'reply',
        toolCalls: [{ id: 'toolu_p2', name: 'get_weather', input: { city: 'Lima' } }],
      });
      const stream = client.messages.stream({
        model,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Lima?' }],
        tools: [weatherTool],
      });
      const events = await collect(stream);
      expect(sequence(events)).toEqual([
        'message_start',
        'content_block_start',
        'content_block_delta:input_json_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      expect((await stream.finalMessage()).content).toEqual([
        { type: 'tool_use', id: 'toolu_p2', name: 'get_weather', input: { city: 'Lima' } },
      ]);
    });

    it('passes an image block through untouched', async () => {
      const content = [
        {
          type: 'image' as const,
          source: { type: 'base64' as const, media_type: 'image/png' as const, data: pixelBase64 },
        },
        { type: 'text' as const, text: 'What is this?' },
      ];
      await client.messages.create({
        model,
        max_tokens: 100,
        messages: [{ role: 'user', content }],
      });
      expect(anthropic.requests[0]!.body.messages).toEqual([{ role: 'user', content }]);
    });

    it('translates a turn to store (the user_id extension) through the chat module', async () => {
      anthropic.enqueue({ kind: 'reply', text: 'Stored.' });
      const message = (await client.messages.create({
        model,
        max_tokens: 50,
        user_id: 'ann',
        messages: [{ role: 'user', content: 'Keep this.' }],
      } as Anthropic.MessageCreateParamsNonStreaming)) as Anthropic.Message & {
        conversation_id: string;
      };
      expect(message.content).toEqual([{ type: 'text', text: 'Stored.' }]);
      expect(message.conversation_id).toMatch(/^conv_/);
      // The platform's own request to Anthropic, without the extension.
      expect(anthropic.requests[0]!.body).not.toHaveProperty('user_id');
      expect(anthropic.requests[0]!.body.model).toBe('claude-sonnet-4-5');
    });

    it('counts tokens with the model’s counter', async () => {
      const counted = await client.messages.countTokens({
        model,
        messages: [{ role: 'user', content: 'How many tokens is this?' }],
      });
      expect(counted.input_tokens).toBeGreaterThan(5);
      expect(anthropic.requests).toEqual([]);
    });

    it("relays Anthropic's 400 as a BadRequestError with its message", async () => {
      anthropic.enqueue({ kind: 'error', status: 400 });
      const refused = await client.messages
        .create({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(BadRequestError);
      expect((refused as BadRequestError).message).toContain('fake error 400');
    });

    it("reports the provider's failure mid-stream as Anthropic's error event", async () => {
      anthropic.enqueue({ kind: 'cut', afterChunks: 1 });
      const stream = client.messages.stream({
        model,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Tell me a story.' }],
      });
      const failure = await collect(stream).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Anthropic.APIError);
      expect((failure as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'api_error', code: 'upstream_error' },
      });
    });
  });

  describe('keys and errors', () => {
    const body = JSON.stringify({
      model: 'fake-chat',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'Hi' }],
    });

    it('takes the platform key as x-api-key, as Anthropic clients send it', async () => {
      const response = await fetch(`${baseUrl}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': key,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body,
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('request-id')).toMatch(/\S/);
      expect(await response.json()).toMatchObject({ type: 'message', model: 'fake-chat' });
    });

    it("answers a missing key with Anthropic's 401", async () => {
      const response = await fetch(`${baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body,
      });
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({
        type: 'error',
        error: { type: 'authentication_error', message: expect.any(String) },
        request_id: expect.any(String),
      });
    });

    it('raises AuthenticationError in the SDK for a wrong key', async () => {
      const stranger = new Anthropic({ apiKey: 'sk-not-a-key', baseURL: baseUrl, maxRetries: 0 });
      const refused = await stranger.messages
        .create({ model: 'fake-chat', max_tokens: 20, messages: [{ role: 'user', content: 'Hi' }] })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AuthenticationError);
      expect((refused as AuthenticationError).status).toBe(401);
    });

    it('raises PermissionDeniedError for a key without chat:write', async () => {
      const reader = (await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] }))
        .key;
      const limited = new Anthropic({ apiKey: reader, baseURL: baseUrl, maxRetries: 0 });
      const refused = await limited.messages
        .countTokens({ model: 'fake-chat', messages: [{ role: 'user', content: 'Hi' }] })
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(PermissionDeniedError);
    });

    it("answers a schema violation (no max_tokens) with Anthropic's 400", async () => {
      const response = await fetch(`${baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake-chat', messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', param: 'max_tokens' },
      });
    });

    it('keeps the contract’s error shape on the other routes', async () => {
      const response = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(response.status).toBe(401);
      const answered = (await response.json()) as Json;
      expect(answered.type).toBeUndefined();
      expect(answered.error).toMatchObject({ code: 'missing_api_key' });
    });

    it('never sends the upstream key back', async () => {
      const response = await fetch(`${baseUrl}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        body,
      });
      expect(await response.text()).not.toContain(upstreamSecret);
    });
  });
});
