// Tools, images, structured outputs and every sampling parameter through /v1/chat/completions,
// driven by the official `openai` client and by the Vercel AI SDK (generateText and streamText
// with tools, through its OpenAI-compatible provider pointed at the platform), with the fake
// OpenAI-compatible upstream behind it: what the upstream receives (byte for byte where the
// platform passes a field on), what the client gets back (every response and chunk validated
// against OpenAI's published schemas), two-step tool loops, parallel calls, and the 400 a model
// without a needed capability answers before any upstream call.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import type { AddressInfo } from 'node:net';
import OpenAI, { BadRequestError } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import type { RecordedRequest } from '../support/fake-upstream.js';
import {
  assembledToolCalls,
  collectChunks,
  pixelDataUrl,
  timeTool,
  weatherTool,
} from '../support/openai-tools.js';
import { openAISchemas, type OpenAISchemaName } from '../support/openai-schemas.js';
import { bearer, createKey } from '../support/test-app.js';

const schemas = openAISchemas();

function expectValid(name: OpenAISchemaName, value: unknown): void {
  expect(schemas.problems(name, value), `${name}: ${JSON.stringify(value)}`).toEqual([]);
}

/** The chat requests the upstream received, parsed. */
function chatBodies(harness: ChatHarness): Record<string, unknown>[] {
  return harness.upstream.requests
    .filter((request: RecordedRequest) => request.endpoint === 'chat')
    .map((request) => request.body as Record<string, unknown>);
}

describe.each(allDialects)(
  'tools, images and parameters through the OpenAI API ($name)',
  (dialect) => {
    let harness: ChatHarness;
    let client: OpenAI;
    let key: string;
    let baseUrl: string;

    beforeAll(async () => {
      harness = await startChatHarness({
        dialect,
        extraModels: (baseUrl) => [
          {
            name: 'fake-vision',
            provider: 'openai-compatible',
            base_url: baseUrl,
            model: 'gpt-4o',
            api_key_env: 'FAKE_UPSTREAM_KEY',
            capabilities: ['tools', 'vision', 'json_schema'],
            max_tokens: 256,
            context_length: 4096,
            max_retries: 0,
          },
        ],
      });
      await harness.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = harness.app.server.address() as AddressInfo;
      baseUrl = `http://127.0.0.1:${port}`;
      key = (
        await createKey(harness.app, harness.adminKey, { scopes: ['chat:write', 'models:read'] })
      ).key;
      client = new OpenAI({ apiKey: key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    });

    afterAll(async () => {
      await harness?.close();
    });

    beforeEach(() => {
      harness.upstream.reset();
    });

    it('runs a two-step tool loop: the call comes back as OpenAI sends it, the result goes up', async () => {
      harness.upstream.enqueue({
        kind: 'reply',
        toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      });
      const messages: ChatCompletionMessageParam[] = [
        { role: 'user', content: 'Weather in Paris?' },
      ];
      const first = await client.chat.completions.create({
        model: 'fake-chat',
        messages,
        tools: [weatherTool],
        tool_choice: 'auto',
      });
      expectValid('CreateChatCompletionResponse', first);
      const choice = first.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      expect(choice.message.tool_calls).toEqual([
        {
          id: 'call_w1',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
        },
      ]);
      expect(chatBodies(harness)[0]!.tools).toEqual([weatherTool]);
      expect(chatBodies(harness)[0]!.tool_choice).toBe('auto');

      harness.upstream.enqueue({ kind: 'reply', content: 'It is sunny in Paris.' });
      const second = await client.chat.completions.create({
        model: 'fake-chat',
        messages: [
          ...messages,
          choice.message,
          { role: 'tool', tool_call_id: 'call_w1', content: '{"sky":"sunny"}' },
        ],
        tools: [weatherTool],
      });
      expectValid('CreateChatCompletionResponse', second);
      expect(second.choices[0]!.message.content).toBe('It is sunny in Paris.');
      expect(second.choices[0]!.finish_reason).toBe('stop');
      const sent = chatBodies(harness)[1]!.messages as unknown[];
      expect(sent.slice(1)).toEqual([
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
        { role: 'tool', tool_call_id: 'call_w1', content: '{"sky":"sunny"}' },
      ]);
    });

    it('streams parallel tool calls as deltas by index, every chunk in OpenAI’s schema', async () => {
      harness.upstream.enqueue({
        kind: 'reply',
        toolCalls: [
          { id: 'call_a', name: 'get_weather', arguments: '{"city":"Oslo"}' },
          { id: 'call_b', name: 'get_time', arguments: '{"zone":"Europe/Oslo"}' },
        ],
      });
      const chunks = await collectChunks(
        await client.chat.completions.create({
          model: 'fake-chat',
          messages: [{ role: 'user', content: 'Weather and time in Oslo?' }],
          tools: [weatherTool, timeTool],
          parallel_tool_calls: true,
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      for (const chunk of chunks) expectValid('CreateChatCompletionStreamResponse', chunk);
      expect(assembledToolCalls(chunks)).toEqual([
        { id: 'call_a', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        { id: 'call_b', name: 'get_time', arguments: '{"zone":"Europe/Oslo"}' },
      ]);
      // More than one delta per call: the arguments were relayed as they came.
      const deltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
      expect(deltas.length).toBeGreaterThan(2);
      const finishes = chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean);
      expect(finishes).toEqual(['tool_calls']);
      expect(chunks[chunks.length - 1]!.usage?.total_tokens).toBeGreaterThan(0);
      expect(chatBodies(harness)[0]!.parallel_tool_calls).toBe(true);
    });

    it('continues a streamed loop with the tool result', async () => {
      harness.upstream.enqueue({
        kind: 'reply',
        toolCalls: [{ id: 'call_s', name: 'get_weather', arguments: '{"city":"Rome"}' }],
      });
      const request = {
        model: 'fake-chat',
        tools: [weatherTool],
        tool_choice: { type: 'function' as const, function: { name: 'get_weather' } },
      };
      const first = await collectChunks(
        await client.chat.completions.create({
          ...request,
          messages: [{ role: 'user', content: 'Rome?' }],
          stream: true,
        }),
      );
      const [call] = assembledToolCalls(first);
      expect(chatBodies(harness)[0]!.tool_choice).toEqual(request.tool_choice);
      harness.upstream.enqueue({ kind: 'reply', content: 'Warm in Rome.' });
      const second = await collectChunks(
        await client.chat.completions.create({
          ...request,
          tool_choice: 'none',
          messages: [
            { role: 'user', content: 'Rome?' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: call!.id,
                  type: 'function',
                  function: { name: call!.name, arguments: call!.arguments },
                },
              ],
            },
            { role: 'tool', tool_call_id: call!.id, content: 'warm' },
          ],
          stream: true,
        }),
      );
      for (const chunk of second) expectValid('CreateChatCompletionStreamResponse', chunk);
      expect(second.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(
        'Warm in Rome.',
      );
      const sent = chatBodies(harness)[1]!.messages as { role: string }[];
      expect(sent.map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
    });

    it('passes every sampling parameter, and one it does not know, byte for byte', async () => {
      const parameters = {
        top_p: 0.25,
        stop: ['END', '###'],
        seed: 1234567,
        presence_penalty: 0.5,
        frequency_penalty: -0.75,
        logit_bias: { '50256': -100, '198': 2.5 },
        user: 'end-user-7',
        metadata: { app: 'tests', run: '1' },
        logprobs: true,
        top_logprobs: 3,
        reasoning_effort: 'low',
        some_future_field: { nested: [1, 'two', { three: null }] },
      };
      const completion = await client.chat.completions.create({
        model: 'fake-chat',
        messages: [{ role: 'user', content: 'Hi' }],
        ...(parameters as object),
      } as never);
      expectValid('CreateChatCompletionResponse', completion);
      const received = harness.upstream.requests.find((request) => request.endpoint === 'chat')!;
      const body = received.body as Record<string, unknown>;
      for (const [field, value] of Object.entries(parameters)) {
        expect(JSON.stringify(body[field]), field).toBe(JSON.stringify(value));
      }
      // The model is the upstream's own id, and the service's extension fields never go up.
      expect(body.model).toBe('gpt-4o-mini');
      expect(body).not.toHaveProperty('user_id');
      expect(body).not.toHaveProperty('conversation_id');
    });

    it('asks for JSON against a strict schema and hands the JSON back', async () => {
      const format = {
        type: 'json_schema' as const,
        json_schema: {
          name: 'city',
          strict: true,
          schema: {
            type: 'object',
            properties: { name: { type: 'string' } },
            required: ['name'],
            additionalProperties: false,
          },
        },
      };
      harness.upstream.enqueue({ kind: 'reply', content: '{"name":"Lyon"}' });
      const completion = await client.chat.completions.create({
        model: 'fake-vision',
        messages: [{ role: 'user', content: 'A French city.' }],
        response_format: format,
      });
      expectValid('CreateChatCompletionResponse', completion);
      expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ name: 'Lyon' });
      expect(chatBodies(harness)[0]!.response_format).toEqual(format);
    });

    it('sends an image as URL and as data URL to a model with vision', async () => {
      for (const url of ['https://images.example.com/cat.png', pixelDataUrl]) {
        harness.upstream.reset();
        const completion = await client.chat.completions.create({
          model: 'fake-vision',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is this?' },
                { type: 'image_url', image_url: { url, detail: 'low' } },
              ],
            },
          ],
        });
        expectValid('CreateChatCompletionResponse', completion);
        const sent = chatBodies(harness)[0]!.messages as { content: unknown }[];
        expect(sent[0]!.content).toEqual([
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url, detail: 'low' } },
        ]);
      }
    });

    it('refuses an image for a model without vision, and json_schema without it, before any upstream call', async () => {
      const image = await client.chat.completions
        .create({
          model: 'fake-chat',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image_url', image_url: { url: 'https://images.example.com/a.png' } },
              ],
            },
          ],
        })
        .catch((error: unknown) => error);
      expect(image).toBeInstanceOf(BadRequestError);
      const imageError = image as BadRequestError;
      expect(imageError.param).toBe('messages[0].content[0]');
      expect(imageError.message).toContain("'fake-chat'");
      const schema = await client.chat.completions
        .create({
          model: 'fake-chat',
          messages: [{ role: 'user', content: 'x' }],
          response_format: { type: 'json_schema', json_schema: { name: 'x', schema: {} } },
        })
        .catch((error: unknown) => error);
      expect((schema as BadRequestError).param).toBe('response_format');
      expect(chatBodies(harness)).toEqual([]);
    });

    it('routes model "auto" only to a model that can serve the request', async () => {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const completion = await client.chat.completions.create({
          model: 'auto',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: `Describe this picture, attempt ${attempt}.` },
                { type: 'image_url', image_url: { url: pixelDataUrl } },
              ],
            },
          ],
        });
        expect(completion.model).toBe('fake-vision');
      }
    });

    it('refuses a tool result that answers no call', async () => {
      const error = await client.chat.completions
        .create({
          model: 'fake-chat',
          messages: [
            { role: 'user', content: 'x' },
            { role: 'tool', tool_call_id: 'call_nowhere', content: '1' },
          ],
        })
        .catch((caught: unknown) => caught);
      expect((error as BadRequestError).param).toBe('messages[1].tool_call_id');
      expect(chatBodies(harness)).toEqual([]);
    });

    it('serves the Vercel AI SDK’s generateText and streamText tool loops', async () => {
      const platform = createOpenAICompatible({
        name: 'platform',
        baseURL: `${baseUrl}/v1`,
        apiKey: key,
        includeUsage: true,
      });
      const executed: string[] = [];
      const tools = {
        get_weather: tool({
          description: 'The weather in a city.',
          inputSchema: z.object({ city: z.string() }),
          execute: ({ city }) => {
            executed.push(city);
            return Promise.resolve({ sky: 'clear' });
          },
        }),
      };
      harness.upstream.enqueue(
        {
          kind: 'reply',
          toolCalls: [{ id: 'call_g', name: 'get_weather', arguments: '{"city":"Bern"}' }],
        },
        { kind: 'reply', content: 'Clear skies in Bern.' },
      );
      const generated = await generateText({
        model: platform.chatModel('fake-chat'),
        tools,
        stopWhen: stepCountIs(3),
        prompt: 'Weather in Bern?',
        maxRetries: 0,
      });
      expect(generated.text).toBe('Clear skies in Bern.');
      expect(executed).toEqual(['Bern']);
      expect(generated.steps).toHaveLength(2);
      const results = chatBodies(harness)[1]!.messages as { role: string; tool_call_id?: string }[];
      expect(results.find((message) => message.role === 'tool')?.tool_call_id).toBe('call_g');

      harness.upstream.reset();
      harness.upstream.enqueue(
        {
          kind: 'reply',
          toolCalls: [{ id: 'call_h', name: 'get_weather', arguments: '{"city":"Graz"}' }],
        },
        { kind: 'reply', content: 'Clear in Graz.' },
      );
      const streamed = streamText({
        model: platform.chatModel('fake-chat'),
        tools,
        stopWhen: stepCountIs(3),
        prompt: 'Weather in Graz?',
        maxRetries: 0,
      });
      let text = '';
      for await (const delta of streamed.textStream) text += delta;
      expect(text).toBe('Clear in Graz.');
      expect(executed).toEqual(['Bern', 'Graz']);
      expect((await streamed.steps).length).toBe(2);
    });

    it('lists each model’s capabilities', async () => {
      const response = await fetch(`${baseUrl}/v1/models`, { headers: bearer(key) });
      const listing = (await response.json()) as {
        data: { id: string; capabilities: string[] }[];
      };
      const byName = new Map(listing.data.map((entry) => [entry.id, entry.capabilities]));
      expect(byName.get('fake-chat')).toEqual(['tools']);
      expect(byName.get('fake-vision')).toEqual(['tools', 'vision', 'json_schema']);
      expect(byName.get('fake-embed')).toEqual([]);
    });
  },
);
