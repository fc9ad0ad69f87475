// Conversations keep everything, on every dialect, through /v1/chat against an OpenAI-compatible
// upstream over real HTTP (a scripted one of this file, in OpenAI's wire format): a two-step tool
// loop stored and replayed exactly (the answer's tool calls, the client's tool result), whole and
// streamed; tools, tool_choice and response_format reaching the upstream; images stored as their
// URL or data URL and replayed; 413 for inline data past `chat.max_stored_data_url_bytes`; and
// the chat routes' own body limit, larger than other routes'.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';

interface ToolCallJson {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** What the scripted upstream answers one request with: text, tool calls, or both. */
interface Script {
  content?: string;
  toolCalls?: ToolCallJson[];
}

interface ScriptedUpstream {
  baseUrl: string;
  /** Request bodies received, parsed, in order. */
  requests: Array<Record<string, unknown>>;
  /** Answers for the next requests, in order; without one it echoes the last message's text. */
  script: Script[];
  close(): Promise<void>;
}

const upstreamKey = 'sk-scripted-upstream-0123456789';

/**
 * A Chat Completions endpoint in OpenAI's wire format. Streamed, a tool call goes out as OpenAI
 * sends it: an opening delta with its index, id, name and empty arguments, then the arguments in
 * two fragments; then the finish chunk, the usage chunk and `[DONE]`.
 */
async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  const requests: Array<Record<string, unknown>> = [];
  const script: Script[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.headers.authorization !== `Bearer ${upstreamKey}`) {
        response.writeHead(401, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ error: { message: 'bad key', type: 'invalid_request_error' } }),
        );
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      requests.push(body);
      const messages = body.messages as Array<{ content: unknown }>;
      const last = messages.at(-1)!.content;
      const next = script.shift() ?? {
        content: `Echo: ${typeof last === 'string' ? last : JSON.stringify(last)}`,
      };
      const calls = next.toolCalls;
      const finishReason = calls === undefined ? 'stop' : 'tool_calls';
      const usage = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
      const base = { id: 'chatcmpl-up', created: 1_700_000_000, model: String(body.model) };
      if (body.stream !== true) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            ...base,
            object: 'chat.completion',
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content: next.content ?? null,
                  refusal: null,
                  ...(calls === undefined ? {} : { tool_calls: calls }),
                },
                logprobs: null,
                finish_reason: finishReason,
              },
            ],
            usage,
          }),
        );
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
        response.write(
          `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`,
        );
      const delta = (fields: Record<string, unknown>, finish: string | null = null) =>
        send([{ index: 0, delta: fields, logprobs: null, finish_reason: finish }]);
      delta({ role: 'assistant', content: next.content === undefined ? null : '' });
      if (next.content !== undefined) delta({ content: next.content });
      calls?.forEach((call, index) => {
        delta({
          tool_calls: [
            {
              index,
              id: call.id,
              type: 'function',
              function: { name: call.function.name, arguments: '' },
            },
          ],
        });
        const half = Math.floor(call.function.arguments.length / 2);
        for (const piece of [
          call.function.arguments.slice(0, half),
          call.function.arguments.slice(half),
        ]) {
          delta({ tool_calls: [{ index, function: { arguments: piece } }] });
        }
      });
      delta({}, finishReason);
      send([], { usage });
      response.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error === undefined ? resolve() : reject(error)));
      }),
  };
}

function parseEvents(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>);
}

interface ChatJson {
  message: string;
  tool_calls?: ToolCallJson[];
  conversation_id: string;
  message_id: string;
  finish_reason: string;
}

interface MessageJson {
  id: string;
  role: string;
  content: string;
  content_parts?: unknown[];
  tool_calls?: ToolCallJson[];
  tool_call_id?: string;
  name?: string;
}

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
    strict: true,
  },
};

const parisCall: ToolCallJson = {
  id: 'call_paris_1',
  type: 'function',
  function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
};
const romeCall: ToolCallJson = {
  id: 'call_rome_2',
  type: 'function',
  function: { name: 'get_weather', arguments: '{"city":"Rome","unit":"c"}' },
};

/** A PNG data URL of `bytes` characters in all (base64 of zero bytes). */
function dataUrl(bytes: number): string {
  const prefix = 'data:image/png;base64,';
  return prefix + 'A'.repeat(bytes - prefix.length);
}

const storedLimit = 64 * 1024;
const serverBodyLimit = 32 * 1024;
const chatBodyLimit = 256 * 1024;

describe.each(allDialects)('conversations with tools and images on $name', (dialect) => {
  let upstream: ScriptedUpstream;
  let harness: TestApp;
  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    harness = await startTestApp({
      dialect,
      env: {
        SCRIPTED_UPSTREAM_KEY: upstreamKey,
        BODY_LIMIT_BYTES: String(serverBodyLimit),
        CHAT_BODY_LIMIT_BYTES: String(chatBodyLimit),
      },
      overrides: {
        default_model: 'tool-model',
        models: [
          {
            name: 'tool-model',
            provider: 'openai-compatible',
            base_url: upstream.baseUrl,
            api_key_env: 'SCRIPTED_UPSTREAM_KEY',
            model: 'gpt-4o-mini',
            max_tokens: 256,
            context_length: 1_000_000,
            max_retries: 0,
            timeout_ms: 5000,
            capabilities: ['tools', 'vision', 'json_schema', 'audio_input'],
          },
        ],
        chat: { max_stored_data_url_bytes: storedLimit },
        rate_limits: {
          default_tier: 'test',
          tiers: { test: { per_minute: 100_000, per_day: 1_000_000 } },
        },
      },
    });
  });
  afterAll(async () => {
    await harness?.close();
    await upstream?.close();
  });
  beforeEach(() => {
    upstream.requests.length = 0;
    upstream.script.length = 0;
  });

  const chat = (payload: Record<string, unknown>) =>
    harness.app.inject({
      method: 'POST',
      url: '/v1/chat',
      headers: bearer(harness.adminKey),
      payload,
    });
  const history = async (conversationId: string) => {
    const response = await harness.app.inject({
      method: 'GET',
      url: `/v1/conversations/${conversationId}/messages`,
      headers: bearer(harness.adminKey),
    });
    expect(response.statusCode).toBe(200);
    return response.json<{ messages: MessageJson[]; total: number }>().messages;
  };
  const conversationCount = async (userId: string) =>
    (
      await harness.app.inject({
        method: 'GET',
        url: `/v1/conversations?user_id=${userId}&status=all`,
        headers: bearer(harness.adminKey),
      })
    ).json<{ total: number }>().total;
  const sentMessages = (index: number) => upstream.requests[index]!.messages as unknown[];

  it('runs a two-step tool loop: the calls stored with the answer, the result replayed with them', async () => {
    upstream.script.push({ toolCalls: [parisCall, romeCall] }, { content: 'Sunny in both.' });
    const question = { role: 'user', content: 'Weather in Paris and Rome?' };
    const first = await chat({
      user_id: 'tia',
      tools: [weatherTool],
      tool_choice: 'auto',
      messages: [question],
    });
    expect(first.statusCode).toBe(200);
    const answer = first.json<ChatJson>();
    expect(answer).toMatchObject({
      message: '',
      tool_calls: [parisCall, romeCall],
      finish_reason: 'tool_calls',
    });
    // The extensions reach the upstream as the client wrote them.
    expect(upstream.requests[0]).toMatchObject({ tools: [weatherTool], tool_choice: 'auto' });

    const results = [
      { role: 'tool', tool_call_id: parisCall.id, content: '{"temp":21}' },
      { role: 'tool', tool_call_id: romeCall.id, content: [{ type: 'text', text: '{"temp":25}' }] },
    ];
    const second = await chat({
      user_id: 'tia',
      conversation_id: answer.conversation_id,
      tools: [weatherTool],
      messages: results,
    });
    expect(second.statusCode).toBe(200);
    expect(second.json<ChatJson>()).toMatchObject({
      message: 'Sunny in both.',
      finish_reason: 'stop',
    });
    expect(second.json<ChatJson>().tool_calls).toBeUndefined();
    // The upstream got the whole loop back: the question, the calls (no content, as OpenAI writes
    // a turn that only calls tools), and each result with the call it answers.
    expect(sentMessages(1)).toEqual([
      question,
      { role: 'assistant', content: null, tool_calls: [parisCall, romeCall] },
      { role: 'tool', tool_call_id: parisCall.id, content: '{"temp":21}' },
      { role: 'tool', tool_call_id: romeCall.id, content: '{"temp":25}' },
    ]);

    const stored = await history(answer.conversation_id);
    expect(stored.map(({ id: _id, ...message }) => message)).toEqual([
      expect.objectContaining({ role: 'user', content: question.content }),
      expect.objectContaining({
        role: 'assistant',
        content: '',
        tool_calls: [parisCall, romeCall],
      }),
      expect.objectContaining({ role: 'tool', content: '{"temp":21}', tool_call_id: parisCall.id }),
      expect.objectContaining({ role: 'tool', content: '{"temp":25}', tool_call_id: romeCall.id }),
      expect.objectContaining({ role: 'assistant', content: 'Sunny in both.' }),
    ]);
    expect(stored[1]!.id).toBe(answer.message_id);
    expect(stored[0]!.tool_calls).toBeUndefined();
    expect(stored[4]!.tool_calls).toBeUndefined();

    // A third turn replays all of it again, exactly.
    await chat({
      user_id: 'tia',
      conversation_id: answer.conversation_id,
      messages: [{ role: 'user', content: 'Thanks!', name: 'tia' }],
    });
    expect(sentMessages(2)).toEqual([
      ...sentMessages(1),
      { role: 'assistant', content: 'Sunny in both.' },
      { role: 'user', content: 'Thanks!', name: 'tia' },
    ]);
    expect((await history(answer.conversation_id)).at(-2)).toMatchObject({ name: 'tia' });
  });

  it('streams a tool loop: tool_call events as they come, the calls whole in end, then continues', async () => {
    upstream.script.push({ toolCalls: [parisCall, romeCall] }, { content: 'Both warm.' });
    const first = await chat({
      user_id: 'uma',
      stream: true,
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      messages: [{ role: 'user', content: 'Paris and Rome?' }],
    });
    expect(first.statusCode).toBe(200);
    expect(upstream.requests[0]).toMatchObject({
      stream: true,
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    const events = parseEvents(first.body);
    const start = events[0]!;
    const end = events.at(-1)!;
    expect(events.map((event) => event.type)).toEqual([
      'start',
      ...Array<string>(6).fill('tool_call'),
      'end',
    ]);
    // Each call opens with its id and name, then its arguments come in pieces.
    expect(events.slice(1, -1)).toEqual([
      { type: 'tool_call', index: 0, id: parisCall.id, name: 'get_weather', arguments: '' },
      { type: 'tool_call', index: 0, arguments: '{"city":' },
      { type: 'tool_call', index: 0, arguments: '"Paris"}' },
      { type: 'tool_call', index: 1, id: romeCall.id, name: 'get_weather', arguments: '' },
      { type: 'tool_call', index: 1, arguments: romeCall.function.arguments.slice(0, 13) },
      { type: 'tool_call', index: 1, arguments: romeCall.function.arguments.slice(13) },
    ]);
    expect(end).toMatchObject({
      type: 'end',
      message: '',
      tool_calls: [parisCall, romeCall],
      finish_reason: 'tool_calls',
      conversation_id: start.conversation_id,
      message_id: start.message_id,
    });
    const conversationId = String(start.conversation_id);
    expect((await history(conversationId))[1]).toMatchObject({
      id: start.message_id,
      role: 'assistant',
      tool_calls: [parisCall, romeCall],
    });

    const second = await chat({
      user_id: 'uma',
      conversation_id: conversationId,
      stream: true,
      messages: [
        { role: 'tool', tool_call_id: parisCall.id, content: '21' },
        { role: 'tool', tool_call_id: romeCall.id, content: '25' },
      ],
    });
    const secondEvents = parseEvents(second.body);
    expect(secondEvents.at(-1)).toMatchObject({ type: 'end', message: 'Both warm.' });
    expect(secondEvents.at(-1)!.tool_calls).toBeUndefined();
    expect(sentMessages(1)).toEqual([
      { role: 'user', content: 'Paris and Rome?' },
      { role: 'assistant', content: null, tool_calls: [parisCall, romeCall] },
      { role: 'tool', tool_call_id: parisCall.id, content: '21' },
      { role: 'tool', tool_call_id: romeCall.id, content: '25' },
    ]);
    expect((await history(conversationId)).map((message) => message.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
    ]);
  });

  it('passes response_format through and answers the structured text', async () => {
    const format = {
      type: 'json_schema',
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
    upstream.script.push({ content: '{"name":"Paris"}' });
    const response = await chat({
      user_id: 'ava',
      response_format: format,
      messages: [{ role: 'user', content: 'A city, as JSON.' }],
    });
    expect(response.statusCode).toBe(200);
    expect(response.json<ChatJson>().message).toBe('{"name":"Paris"}');
    expect(upstream.requests[0]!.response_format).toEqual(format);
  });

  it('stores an image as its URL and a data URL as sent, and replays both', async () => {
    const image = {
      type: 'image_url',
      image_url: { url: 'https://images.example/cat.png', detail: 'low' },
    };
    const inline = { type: 'image_url', image_url: { url: dataUrl(storedLimit) } };
    const parts = [
      { type: 'text', text: 'What is in ' },
      image,
      { type: 'text', text: 'and this?' },
      inline,
    ];
    const first = await chat({ user_id: 'ivy', messages: [{ role: 'user', content: parts }] });
    expect(first.statusCode).toBe(200);
    const { conversation_id: conversationId } = first.json<ChatJson>();
    expect(sentMessages(0)).toEqual([{ role: 'user', content: parts }]);

    const stored = await history(conversationId);
    expect(stored[0]).toMatchObject({
      role: 'user',
      content: 'What is in and this?',
      content_parts: parts,
    });
    // The exact data URL came back, not a copy cut short.
    expect((stored[0]!.content_parts![3] as typeof inline).image_url.url).toBe(
      inline.image_url.url,
    );
    expect(stored[1]!.content_parts).toBeUndefined();

    await chat({
      user_id: 'ivy',
      conversation_id: conversationId,
      messages: [{ role: 'user', content: 'And the colours?' }],
    });
    expect(sentMessages(1)[0]).toEqual({ role: 'user', content: parts });
  });

  it('answers 413 for inline data longer than chat.max_stored_data_url_bytes, storing nothing', async () => {
    const before = await conversationCount('zed');
    const cases: Array<[unknown, string]> = [
      [{ type: 'image_url', image_url: { url: dataUrl(storedLimit + 1) } }, 'image_url.url'],
      [
        { type: 'input_audio', input_audio: { data: 'A'.repeat(storedLimit + 1), format: 'wav' } },
        'input_audio.data',
      ],
      [
        { type: 'file', file: { filename: 'a.pdf', file_data: dataUrl(storedLimit + 1) } },
        'file.file_data',
      ],
    ];
    for (const [part, field] of cases) {
      const response = await chat({
        user_id: 'zed',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'look' }, part] }],
      });
      expect(response.statusCode).toBe(413);
      expect(response.json()).toEqual({
        error: {
          message: expect.stringContaining(
            `more than the ${storedLimit} a stored conversation keeps`,
          ),
          type: 'invalid_request_error',
          code: 'payload_too_large',
          param: `messages[0].content[1].${field}`,
        },
      });
    }
    expect(upstream.requests).toHaveLength(0);
    expect(await conversationCount('zed')).toBe(before);
  });

  it('takes chat bodies up to the chat limit while other routes keep the server limit', async () => {
    // Between the two limits: refused elsewhere, taken by /v1/chat.
    const size = serverBodyLimit + 1024;
    const elsewhere = await harness.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: bearer(harness.adminKey),
      payload: { user_id: 'bo', title: 'x', description: 'd'.repeat(size) },
    });
    expect(elsewhere.statusCode).toBe(413);
    const taken = await chat({
      user_id: 'bo',
      messages: [
        { role: 'user', content: [{ type: 'image_url', image_url: { url: dataUrl(size) } }] },
      ],
    });
    expect(taken.statusCode).toBe(200);

    const tooLarge = await chat({
      user_id: 'bo',
      messages: [{ role: 'user', content: 'x'.repeat(chatBodyLimit) }],
    });
    expect(tooLarge.statusCode).toBe(413);
    expect(tooLarge.json()).toEqual({
      error: {
        message: `The request body is larger than the ${chatBodyLimit} bytes accepted (CHAT_BODY_LIMIT_BYTES).`,
        type: 'invalid_request_error',
        code: 'payload_too_large',
        param: null,
      },
    });
  });
});
