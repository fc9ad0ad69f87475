// Tools, images, JSON-schema answers and sampling parameters sent by the official `openai` client
// to /v1/chat/completions and answered by Anthropic and Google models (fakes speaking each
// vendor's real wire format over HTTP): what each vendor receives (`tools[].input_schema` and
// `tool_result` blocks; `functionDeclarations` and `functionResponse` parts), what the client gets
// back (every response and chunk validated against OpenAI's published schemas), and the 400 for a
// parameter a vendor cannot honour, before any upstream call.
import type { AddressInfo } from 'node:net';
import OpenAI, { BadRequestError } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startFakeVendor, type FakeVendor, type Vendor } from '../support/fake-vendors.js';
import {
  assembledToolCalls,
  collectChunks,
  pixelBase64,
  pixelDataUrl,
  timeTool,
  weatherTool,
} from '../support/openai-tools.js';
import { openAISchemas, type OpenAISchemaName } from '../support/openai-schemas.js';
import { createKey, startTestApp, type TestApp } from '../support/test-app.js';

const schemas = openAISchemas();

function expectValid(name: OpenAISchemaName, value: unknown): void {
  expect(schemas.problems(name, value), `${name}: ${JSON.stringify(value)}`).toEqual([]);
}

const vendorModel: Record<Vendor, string> = {
  anthropic: 'claude-sonnet-4-5',
  google: 'gemini-2.5-flash',
};

type Json = Record<string, unknown>;

/** Every block (Anthropic) or part (Google) of the messages a vendor received. */
function piecesOf(vendor: Vendor, body: Json): Json[] {
  if (vendor === 'anthropic') {
    return (body.messages as { content: Json[] | string }[]).flatMap((message) =>
      typeof message.content === 'string' ? [] : message.content,
    );
  }
  return (body.contents as { parts: Json[] }[]).flatMap((content) => content.parts);
}

describe.each(allDialects)('OpenAI clients over Anthropic and Google models ($name)', (dialect) => {
  const fakes = {} as Record<Vendor, FakeVendor>;
  let harness: TestApp;
  let client: OpenAI;

  beforeAll(async () => {
    fakes.anthropic = await startFakeVendor('anthropic');
    fakes.google = await startFakeVendor('google');
    const entry = (vendor: Vendor) => ({
      name: `${vendor}-fake`,
      provider: vendor,
      model: vendorModel[vendor],
      base_url: fakes[vendor].baseUrl,
      api_key_env: `${vendor.toUpperCase()}_FAKE_KEY`,
      max_tokens: 512,
      context_length: 100_000,
      max_retries: 0,
    });
    harness = await startTestApp({
      dialect,
      env: { ANTHROPIC_FAKE_KEY: fakes.anthropic.apiKey, GOOGLE_FAKE_KEY: fakes.google.apiKey },
      overrides: {
        default_model: 'anthropic-fake',
        models: [entry('anthropic'), entry('google')],
        rate_limits: {
          default_tier: 'test',
          tiers: { test: { per_minute: 100_000, per_day: 1_000_000 } },
        },
      },
    });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = harness.app.server.address() as AddressInfo;
    const key = (
      await createKey(harness.app, harness.adminKey, { scopes: ['chat:write', 'models:read'] })
    ).key;
    client = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });

  afterAll(async () => {
    await harness?.close();
    await fakes.anthropic?.close();
    await fakes.google?.close();
  });

  beforeEach(() => {
    fakes.anthropic.reset();
    fakes.google.reset();
  });

  describe.each(['anthropic', 'google'] as const)('%s', (vendor) => {
    const model = `${vendor}-fake`;
    const bodyOf = (index: number) => fakes[vendor].requests[index]!.body;

    it('runs a two-step tool loop: tools and the tool result reach the vendor in its format', async () => {
      fakes[vendor].enqueue({
        kind: 'reply',
        toolCalls: [{ id: 'toolu_w1', name: 'get_weather', input: { city: 'Paris' } }],
      });
      const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Paris?' }];
      const first = await client.chat.completions.create({
        model,
        messages,
        tools: [weatherTool],
      });
      expectValid('CreateChatCompletionResponse', first);
      const choice = first.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      const [call] = choice.message.tool_calls!;
      expect(call!.type === 'function' && call!.function.name).toBe('get_weather');
      expect(call!.type === 'function' && JSON.parse(call!.function.arguments)).toEqual({
        city: 'Paris',
      });
      if (vendor === 'anthropic') {
        expect((bodyOf(0).tools as Json[])[0]).toMatchObject({
          name: 'get_weather',
          input_schema: weatherTool.function.parameters,
        });
      } else {
        const declarations = (bodyOf(0).tools as { functionDeclarations: Json[] }[])[0]!
          .functionDeclarations;
        expect(declarations[0]).toMatchObject({ name: 'get_weather' });
      }

      fakes[vendor].enqueue({ kind: 'reply', text: 'Sunny in Paris.' });
      const second = await client.chat.completions.create({
        model,
        messages: [
          ...messages,
          choice.message,
          { role: 'tool', tool_call_id: call!.id, content: '{"sky":"sunny"}' },
        ],
        tools: [weatherTool],
      });
      expectValid('CreateChatCompletionResponse', second);
      expect(second.choices[0]!.message.content).toBe('Sunny in Paris.');
      const pieces = piecesOf(vendor, bodyOf(1));
      if (vendor === 'anthropic') {
        expect(pieces).toContainEqual(
          expect.objectContaining({ type: 'tool_use', id: 'toolu_w1', name: 'get_weather' }),
        );
        expect(pieces).toContainEqual(
          expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_w1' }),
        );
      } else {
        expect(pieces).toContainEqual(
          expect.objectContaining({
            functionCall: expect.objectContaining({ name: 'get_weather' }),
          }),
        );
        expect(pieces).toContainEqual(
          expect.objectContaining({
            functionResponse: expect.objectContaining({ name: 'get_weather' }),
          }),
        );
      }
    });

    it('streams parallel tool calls as OpenAI deltas, every chunk in OpenAI’s schema', async () => {
      fakes[vendor].enqueue({
        kind: 'reply',
        toolCalls: [
          { id: 'toolu_a', name: 'get_weather', input: { city: 'Oslo' } },
          { id: 'toolu_b', name: 'get_time', input: { zone: 'Europe/Oslo' } },
        ],
      });
      const chunks = await collectChunks(
        await client.chat.completions.create({
          model,
          messages: [{ role: 'user', content: 'Oslo?' }],
          tools: [weatherTool, timeTool],
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      for (const chunk of chunks) expectValid('CreateChatCompletionStreamResponse', chunk);
      const calls = assembledToolCalls(chunks);
      expect(calls.map((call) => call.name)).toEqual(['get_weather', 'get_time']);
      expect(calls.map((call) => JSON.parse(call.arguments) as unknown)).toEqual([
        { city: 'Oslo' },
        { zone: 'Europe/Oslo' },
      ]);
      expect(new Set(calls.map((call) => call.id)).size).toBe(2);
      const finishes = chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean);
      expect(finishes).toEqual(['tool_calls']);
    });

    it('honours tool_choice naming a function', async () => {
      fakes[vendor].enqueue({
        kind: 'reply',
        toolCalls: [{ name: 'get_time', input: { zone: 'UTC' } }],
      });
      await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'Time?' }],
        tools: [weatherTool, timeTool],
        tool_choice: { type: 'function', function: { name: 'get_time' } },
      });
      if (vendor === 'anthropic') {
        expect(bodyOf(0).tool_choice).toMatchObject({ type: 'tool', name: 'get_time' });
      } else {
        expect(bodyOf(0).toolConfig).toEqual({
          functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_time'] },
        });
      }
    });

    it('sends an image given as a data URL inline', async () => {
      fakes[vendor].enqueue({ kind: 'reply', text: 'A pixel.' });
      const completion = await client.chat.completions.create({
        model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: `${pixelDataUrl}` } },
            ],
          },
        ],
      });
      expectValid('CreateChatCompletionResponse', completion);
      const pieces = piecesOf(vendor, bodyOf(0));
      if (vendor === 'anthropic') {
        expect(pieces).toContainEqual({
          type: 'image',
          source: { type: 'base64', media_type: 'image/png', data: pixelBase64 },
        });
      } else {
        expect(pieces).toContainEqual({ inlineData: { mimeType: 'image/png', data: pixelBase64 } });
      }
    });

    it('asks for JSON against a schema and passes the sampling parameters it honours', async () => {
      fakes[vendor].enqueue({ kind: 'reply', text: '{"name":"Lyon"}' });
      const schema = {
        type: 'object',
        properties: { name: { type: 'string' } },
        required: ['name'],
        additionalProperties: false,
      };
      const completion = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: 'A French city.' }],
        response_format: { type: 'json_schema', json_schema: { name: 'city', schema } },
        top_p: 0.5,
        stop: ['END'],
        ...(vendor === 'google' ? { seed: 7 } : {}),
      });
      expectValid('CreateChatCompletionResponse', completion);
      expect(JSON.parse(completion.choices[0]!.message.content!)).toEqual({ name: 'Lyon' });
      const body = bodyOf(0);
      if (vendor === 'anthropic') {
        expect(body.top_p).toBe(0.5);
        expect(body.stop_sequences).toEqual(['END']);
      } else {
        const config = body.generationConfig as Json;
        expect(config.topP).toBe(0.5);
        expect(config.stopSequences).toEqual(['END']);
        expect(config.seed).toBe(7);
        expect(config.responseMimeType).toBe('application/json');
        expect(config.responseSchema).toBeDefined();
      }
    });

    it('refuses logit_bias with a 400 naming it, before any request to the vendor', async () => {
      const error = await client.chat.completions
        .create({
          model,
          messages: [{ role: 'user', content: 'Hi' }],
          logit_bias: { '50256': -100 },
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(BadRequestError);
      expect((error as BadRequestError).param).toBe('logit_bias');
      expect(fakes[vendor].requests).toEqual([]);
    });
  });
});
