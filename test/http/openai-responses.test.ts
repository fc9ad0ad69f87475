// OpenAI's Responses API (POST /v1/responses, GET/DELETE /v1/responses/{id}, …/input_items)
// driven by the official `openai` client and by the OpenAI Agents SDK over real HTTP, with the
// fake OpenAI-compatible upstream behind the platform: plain, streamed (event order and sequence
// numbers), a function tool loop through `previous_response_id` (one conversation per chain, the
// whole history replayed upstream), forks, JSON-schema formats, images, `store: false`, the
// stored responses and their input items, accounts and scopes, and built-in tools refused. Every
// response, event, item list and error is validated against OpenAI's published schemas.
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import type { AddressInfo } from 'node:net';
import OpenAI, { BadRequestError, NotFoundError, PermissionDeniedError } from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import type {
  FunctionTool,
  Response,
  ResponseStreamEvent,
} from 'openai/resources/responses/responses';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  echoOf,
  startChatHarness,
  upstreamSecret,
  type ChatHarness,
} from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import {
  startFakeUpstream,
  type FakeUpstream,
  type RecordedRequest,
} from '../support/fake-upstream.js';
import { openAISchemas } from '../support/openai-schemas.js';
import { bearer, createAccount, createKey } from '../support/test-app.js';

const schemas = openAISchemas('responses-audio');

function expectValid(name: string, value: unknown): void {
  expect(schemas.problems(name, value), `${name}: ${JSON.stringify(value)}`).toEqual([]);
}

/** Each event against its own schema (clear messages), and against the union of them all. */
const eventSchemas: Record<string, string> = {
  'response.created': 'ResponseCreatedEvent',
  'response.in_progress': 'ResponseInProgressEvent',
  'response.output_item.added': 'ResponseOutputItemAddedEvent',
  'response.content_part.added': 'ResponseContentPartAddedEvent',
  'response.output_text.delta': 'ResponseTextDeltaEvent',
  'response.output_text.done': 'ResponseTextDoneEvent',
  'response.content_part.done': 'ResponseContentPartDoneEvent',
  'response.output_item.done': 'ResponseOutputItemDoneEvent',
  'response.function_call_arguments.delta': 'ResponseFunctionCallArgumentsDeltaEvent',
  'response.function_call_arguments.done': 'ResponseFunctionCallArgumentsDoneEvent',
  'response.completed': 'ResponseCompletedEvent',
  'response.incomplete': 'ResponseIncompleteEvent',
  'response.failed': 'ResponseFailedEvent',
  error: 'ResponseErrorEvent',
};

function expectValidEvent(event: { type: string }): void {
  const name = eventSchemas[event.type];
  expect(name, `a schema for ${event.type}`).toBeDefined();
  expectValid(name!, event);
  expectValid('ResponseStreamEvent', event);
}

const weatherTool: FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

/** A 1×1 PNG, as a data URL. */
const pixel =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** The chat requests the upstream received, parsed. */
function chatBodies(harness: ChatHarness): Record<string, unknown>[] {
  return harness.upstream.requests
    .filter((request: RecordedRequest) => request.endpoint === 'chat')
    .map((request) => request.body as Record<string, unknown>);
}

async function collect(stream: AsyncIterable<ResponseStreamEvent>): Promise<ResponseStreamEvent[]> {
  const events: ResponseStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** The event types in order, runs of deltas folded into one `…delta*`. */
function shape(events: readonly { type: string }[]): string[] {
  const types: string[] = [];
  for (const { type } of events) {
    const folded = type.endsWith('.delta') ? `${type}*` : type;
    if (types[types.length - 1] !== folded || !folded.endsWith('*')) types.push(folded);
  }
  return types;
}

describe.each(allDialects)('the Responses API ($name)', (dialect) => {
  let harness: ChatHarness;
  let client: OpenAI;
  let key: string;
  let baseUrl: string;
  /** Streams one event every 200 ms after the first two: long enough to revoke a key midway. */
  let slowUpstream: FakeUpstream;

  beforeAll(async () => {
    slowUpstream = await startFakeUpstream({ requireApiKey: upstreamSecret, chunkDelayMs: 200 });
    harness = await startChatHarness({
      dialect,
      extraModels: (upstreamUrl) => [
        {
          name: 'fake-slow-stream',
          provider: 'openai-compatible',
          base_url: slowUpstream.baseUrl,
          model: 'gpt-4o-mini',
          api_key_env: 'FAKE_UPSTREAM_KEY',
          max_tokens: 100_000,
          context_length: 200_000,
          max_retries: 0,
          timeout_ms: 3_600_000,
        },
        {
          name: 'fake-vision',
          provider: 'openai-compatible',
          base_url: upstreamUrl,
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
      await createKey(harness.app, harness.adminKey, {
        scopes: ['chat:write', 'chat:read', 'conversations:read'],
      })
    ).key;
    client = new OpenAI({ apiKey: key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
  });

  afterAll(async () => {
    await harness?.close();
    await slowUpstream?.close();
  });

  beforeEach(() => {
    harness.upstream.reset();
  });

  const get = (path: string, withKey = key) =>
    harness.app.inject({ method: 'GET', url: path, headers: bearer(withKey) });

  it('answers a plain request with a Response, stored with its conversation', async () => {
    const response = await client.responses.create({
      model: 'fake-chat',
      input: 'Say hi',
      instructions: 'Be brief.',
      metadata: { topic: 'greeting' },
    });
    expectValid('Response', response);
    expect(response).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'fake-chat',
      instructions: 'Be brief.',
      metadata: { topic: 'greeting' },
      store: true,
      previous_response_id: null,
      error: null,
      incomplete_details: null,
    });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe(echoOf('Say hi'));
    expect(response.output).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: echoOf('Say hi'), annotations: [], logprobs: [] }],
      },
    ]);
    expect(response.usage).toMatchObject({
      input_tokens: expect.any(Number),
      output_tokens: 3,
      total_tokens: response.usage!.input_tokens + 3,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens_details: { reasoning_tokens: 0 },
    });
    // The upstream gets Chat Completions: the instructions as the system message.
    const [sent] = chatBodies(harness);
    expect(sent).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hi' },
      ],
    });
    expect(sent).not.toHaveProperty('metadata');
    expect(sent).not.toHaveProperty('store');

    // Stored: read back as it was returned, in a conversation /v1/conversations lists.
    const stored = await client.responses.retrieve(response.id);
    expectValid('Response', stored);
    expect(stored).toEqual(response);
    const conversationId = (response as Response & { conversation: { id: string } }).conversation
      .id;
    expect(conversationId).toMatch(/^conv_/);
    const listed = await get('/v1/conversations?all_users=true&limit=100');
    expect(
      listed.json<{ conversations: { id: string }[] }>().conversations.map(({ id }) => id),
    ).toContain(conversationId);
    const history = await get(`/v1/conversations/${conversationId}/messages`);
    const messages = history.json<{
      messages: { role: string; content: string; model: string | null; usage: unknown }[];
    }>().messages;
    expect(messages.map(({ role, content }) => [role, content])).toEqual([
      ['user', 'Say hi'],
      ['assistant', echoOf('Say hi')],
    ]);
    // The answer is stored with its model and tokens: usage records read them.
    expect(messages[1]).toMatchObject({
      model: 'fake-chat',
      usage: {
        prompt_tokens: response.usage!.input_tokens,
        completion_tokens: 3,
        total_tokens: response.usage!.total_tokens,
      },
    });
  });

  it('streams the Responses event sequence, numbered, named on each SSE event', async () => {
    harness.upstream.enqueue({ kind: 'reply', chunks: ['Hello', ' there', ', friend'] });
    const events = await collect(
      await client.responses.create({ model: 'fake-chat', input: 'Greet me', stream: true }),
    );
    events.forEach(expectValidEvent);
    expect(shape(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta*',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const deltas = events.filter((event) => event.type === 'response.output_text.delta');
    expect(deltas.map((event) => event.delta)).toEqual(['Hello', ' there', ', friend']);
    const completed = events[events.length - 1] as Extract<
      ResponseStreamEvent,
      { type: 'response.completed' }
    >;
    expect(completed.response.output).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'Hello there, friend', annotations: [], logprobs: [] },
        ],
      },
    ]);
    // The ids the events named are the items' ids; the stored response is the completed one.
    const added = events[2] as Extract<ResponseStreamEvent, { type: 'response.output_item.added' }>;
    expect(added.item.id).toBe(completed.response.output[0]!.id);
    const created = events[0] as Extract<ResponseStreamEvent, { type: 'response.created' }>;
    expect(created.response).toMatchObject({ id: completed.response.id, status: 'in_progress' });
    expect(await client.responses.retrieve(completed.response.id)).toEqual({
      ...completed.response,
      output_text: 'Hello there, friend',
    });

    // The SDK's stream helper puts the same response together from the events.
    harness.upstream.enqueue({ kind: 'reply', chunks: ['One', ' two'] });
    const final = await client.responses
      .stream({ model: 'fake-chat', input: 'Count' })
      .finalResponse();
    expect(final.output_text).toBe('One two');

    // On the wire: `event: <type>` before each data line, as OpenAI sends it; no [DONE].
    const raw = await fetch(`${baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fake-chat', input: 'Hi', stream: true }),
    });
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const frames = (await raw.text()).split('\n\n').filter((frame) => frame !== '');
    expect(frames.length).toBeGreaterThan(5);
    for (const frame of frames) {
      const [eventLine, dataLine, ...rest] = frame.split('\n');
      expect(rest).toEqual([]);
      const data = JSON.parse(dataLine!.slice('data: '.length)) as { type: string };
      expect(eventLine).toBe(`event: ${data.type}`);
    }
  });

  it('runs a function tool loop through previous_response_id, one conversation for the chain', async () => {
    harness.upstream.enqueue({
      kind: 'reply',
      toolCalls: [{ id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
    });
    const first = await client.responses.create({
      model: 'fake-vision',
      input: 'Weather in Paris?',
      instructions: 'Use the tools.',
      tools: [weatherTool],
      tool_choice: 'auto',
    });
    expectValid('Response', first);
    expect(first.output).toEqual([
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        status: 'completed',
        call_id: 'call_w1',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
    ]);
    expect(first.tools).toEqual([{ ...weatherTool }]);
    expect(chatBodies(harness)[0]).toMatchObject({
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'The weather in a city.',
            parameters: weatherTool.parameters,
            strict: true,
          },
        },
      ],
      tool_choice: 'auto',
    });

    harness.upstream.enqueue({ kind: 'reply', content: 'It is sunny in Paris.' });
    const second = await client.responses.create({
      model: 'fake-vision',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_w1', output: '{"sky":"sunny"}' }],
      tools: [weatherTool],
    });
    expectValid('Response', second);
    expect(second.output_text).toBe('It is sunny in Paris.');
    expect(second.previous_response_id).toBe(first.id);
    // The whole chain reached the model: the user's question, the call, its result (the first
    // response's instructions are not carried over, as OpenAI does).
    expect(chatBodies(harness)[1]!.messages).toEqual([
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
      { role: 'tool', tool_call_id: 'call_w1', content: '{"sky":"sunny"}' },
    ]);
    type WithConversation = Response & { conversation: { id: string } };
    const conversationId = (first as WithConversation).conversation.id;
    expect((second as WithConversation).conversation.id).toBe(conversationId);
    const history = await get(`/v1/conversations/${conversationId}/messages`);
    expect(
      history.json<{ messages: { role: string }[] }>().messages.map(({ role }) => role),
    ).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('streams a function call as its item, argument deltas and done events', async () => {
    harness.upstream.enqueue({
      kind: 'reply',
      toolCalls: [{ id: 'call_s1', name: 'get_weather', arguments: '{"city":"Oslo"}' }],
    });
    const events = await collect(
      await client.responses.create({
        model: 'fake-vision',
        input: 'Weather in Oslo?',
        tools: [weatherTool],
        stream: true,
      }),
    );
    events.forEach(expectValidEvent);
    expect(shape(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta*',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const deltas = events.filter(
      (event) => event.type === 'response.function_call_arguments.delta',
    );
    expect(deltas.map((event) => event.delta).join('')).toBe('{"city":"Oslo"}');
    const done = events.find((event) => event.type === 'response.output_item.done')!;
    expect(done.item).toEqual({
      id: expect.stringMatching(/^fc_/),
      type: 'function_call',
      status: 'completed',
      call_id: 'call_s1',
      name: 'get_weather',
      arguments: '{"city":"Oslo"}',
    });
  });

  it('forks from an earlier response of a chain: only the history up to it is sent', async () => {
    const first = await client.responses.create({ model: 'fake-chat', input: 'one' });
    const second = await client.responses.create({
      model: 'fake-chat',
      input: 'two',
      previous_response_id: first.id,
    });
    harness.upstream.reset();
    const fork = await client.responses.create({
      model: 'fake-chat',
      input: 'three',
      previous_response_id: first.id,
    });
    expect(chatBodies(harness)[0]!.messages).toEqual([
      { role: 'user', content: 'one' },
      { role: 'assistant', content: echoOf('one') },
      { role: 'user', content: 'three' },
    ]);
    type WithConversation = Response & { conversation: { id: string } };
    const chain = (second as WithConversation).conversation.id;
    expect((first as WithConversation).conversation.id).toBe(chain);
    // A new conversation for the fork, holding its whole history.
    const forked = (fork as WithConversation).conversation.id;
    expect(forked).not.toBe(chain);
    const history = await get(`/v1/conversations/${forked}/messages`);
    expect(
      history.json<{ messages: { content: string }[] }>().messages.map(({ content }) => content),
    ).toEqual(['one', echoOf('one'), 'three', echoOf('three')]);
  });

  it('asks for a JSON schema through text.format, parsed by the SDK', async () => {
    const City = z.object({ city: z.string(), country: z.string() });
    harness.upstream.enqueue({ kind: 'reply', content: '{"city":"Paris","country":"France"}' });
    const parsed = await client.responses.parse({
      model: 'fake-vision',
      input: 'A French city as JSON',
      text: { format: zodTextFormat(City, 'city') },
    });
    expectValid('Response', { ...parsed, output_parsed: undefined });
    expect(parsed.output_parsed).toEqual({ city: 'Paris', country: 'France' });
    expect(parsed.text!.format).toMatchObject({ type: 'json_schema', name: 'city', strict: true });
    expect(chatBodies(harness)[0]!.response_format).toEqual({
      type: 'json_schema',
      json_schema: {
        name: 'city',
        schema: (parsed.text!.format as { schema: unknown }).schema,
        strict: true,
      },
    });

    // A model without json_schema is refused before any upstream call, naming text.format.
    harness.upstream.reset();
    const refused = await client.responses
      .create({
        model: 'fake-chat',
        input: 'A city',
        text: { format: { type: 'json_schema', name: 'c', schema: { type: 'object' } } },
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BadRequestError);
    expectValid('ErrorResponse', { error: (refused as BadRequestError).error });
    expect((refused as BadRequestError).param).toBe('text.format');
    expect(chatBodies(harness)).toEqual([]);
  });

  it('sends an input image as an image_url part; a model without vision is refused', async () => {
    const response = await client.responses.create({
      model: 'fake-vision',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: pixel, detail: 'low' },
          ],
        },
      ],
    });
    expectValid('Response', response);
    expect(chatBodies(harness)[0]!.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: pixel, detail: 'low' } },
        ],
      },
    ]);
    // Listed as it was sent: the image with its detail.
    const items = await get(`/v1/responses/${response.id}/input_items`);
    expectValid('ResponseItemList', items.json());
    expect(items.json<{ data: unknown[] }>().data).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'user',
        status: 'completed',
        content: [
          { type: 'input_text', text: 'What is this?' },
          { type: 'input_image', image_url: pixel, detail: 'low' },
        ],
      },
    ]);

    const refused = await client.responses
      .create({
        model: 'fake-chat',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'What is this?' },
              { type: 'input_image', image_url: pixel, detail: 'auto' },
            ],
          },
        ],
      })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(BadRequestError);
    expect((refused as BadRequestError).param).toBe('input[0].content[1]');

    const byFile = await client.responses
      .create({
        model: 'fake-vision',
        input: [
          {
            role: 'user',
            content: [{ type: 'input_image', file_id: 'file-123', detail: 'auto' }],
          },
        ],
      })
      .catch((error: unknown) => error);
    expect(byFile).toBeInstanceOf(BadRequestError);
    expect((byFile as BadRequestError).param).toBe('input[0].content[0].file_id');
  });

  it('keeps nothing with store: false, and continues a chain statelessly', async () => {
    const conversations = async () =>
      (await get('/v1/conversations?all_users=true&limit=100')).json<{ total: number }>().total;
    const before = await conversations();
    const response = await client.responses.create({
      model: 'fake-chat',
      input: 'Forget me',
      store: false,
    });
    expectValid('Response', response);
    expect((response as unknown as { store: boolean }).store).toBe(false);
    expect((response as Response & { conversation: unknown }).conversation).toBeNull();
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(NotFoundError);
    expect(await conversations()).toBe(before);

    // Continuing a stored response without storing: its history is sent, nothing is kept.
    const stored = await client.responses.create({ model: 'fake-chat', input: 'Remember me' });
    harness.upstream.reset();
    const next = await client.responses.create({
      model: 'fake-chat',
      input: 'And now?',
      previous_response_id: stored.id,
      store: false,
    });
    expect(next.output_text).toBe(echoOf('And now?'));
    expect(chatBodies(harness)[0]!.messages).toEqual([
      { role: 'user', content: 'Remember me' },
      { role: 'assistant', content: echoOf('Remember me') },
      { role: 'user', content: 'And now?' },
    ]);
    const chain = (stored as Response & { conversation: { id: string } }).conversation.id;
    const history = await get(`/v1/conversations/${chain}/messages`);
    expect(history.json<{ messages: unknown[] }>().messages).toHaveLength(2);
  });

  it('continues a stored conversation named by `conversation`', async () => {
    const created = await harness.app.inject({
      method: 'POST',
      url: '/v1/conversations',
      headers: bearer(harness.adminKey),
      payload: { title: 'Named' },
    });
    const conversationId = created.json<{ id: string }>().id;
    const first = await client.responses.create({
      model: 'fake-chat',
      input: 'First',
      conversation: conversationId,
    });
    const second = await client.responses.create({
      model: 'fake-chat',
      input: 'Second',
      conversation: { id: conversationId },
    });
    expectValid('Response', second);
    expect((first as Response & { conversation: { id: string } }).conversation.id).toBe(
      conversationId,
    );
    expect(chatBodies(harness)[1]!.messages).toEqual([
      { role: 'user', content: 'First' },
      { role: 'assistant', content: echoOf('First') },
      { role: 'user', content: 'Second' },
    ]);
    const other = await createAccount(harness.app, harness.adminKey, `conv-${dialect.name}`);
    const foreign = await harness.app.inject({
      method: 'POST',
      url: '/v1/responses',
      headers: bearer(other.admin_key),
      payload: { model: 'fake-chat', input: 'Hi', conversation: conversationId },
    });
    expect(foreign.statusCode).toBe(404);
    expectValid('ErrorResponse', foreign.json());
  });

  it('lists input items, pages them, and deletes a response', async () => {
    const response = await client.responses.create({
      model: 'fake-vision',
      instructions: 'Not an item.',
      input: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: 'Which city?' },
        { role: 'user', content: [{ type: 'input_text', text: 'Paris' }] },
      ],
    });
    const raw = await get(`/v1/responses/${response.id}/input_items`);
    expect(raw.statusCode).toBe(200);
    const page = raw.json<{ data: { id: string; type: string; role: string }[] }>();
    expectValid('ResponseItemList', page);
    // Newest first by default; instructions are not an item.
    expect(page.data.map((item) => item.role)).toEqual(['user', 'assistant', 'user', 'developer']);
    expect(page).toMatchObject({
      object: 'list',
      has_more: false,
      first_id: page.data[0]!.id,
      last_id: page.data[3]!.id,
    });
    const ascending = await client.responses.inputItems.list(response.id, {
      order: 'asc',
      limit: 2,
    });
    expect(ascending.data.map((item) => (item as { role: string }).role)).toEqual([
      'developer',
      'user',
    ]);
    expect(ascending.has_more).toBe(true);
    const all: string[] = [];
    for await (const item of client.responses.inputItems.list(response.id, {
      order: 'asc',
      limit: 2,
    })) {
      all.push(item.id);
    }
    expect(all).toEqual([...page.data.map((item) => item.id)].reverse());

    const deleted = await harness.app.inject({
      method: 'DELETE',
      url: `/v1/responses/${response.id}`,
      headers: bearer(key),
    });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ id: response.id, object: 'response.deleted', deleted: true });
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.responses.delete(response.id)).rejects.toBeInstanceOf(NotFoundError);
    const gone = await client.responses
      .create({ model: 'fake-chat', input: 'Again', previous_response_id: response.id })
      .catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(BadRequestError);
    expect(gone).toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
      param: 'previous_response_id',
    });
  });

  it("treats another account's response as unknown", async () => {
    const response = await client.responses.create({ model: 'fake-chat', input: 'Mine' });
    const other = await createAccount(harness.app, harness.adminKey, `other-${dialect.name}`);
    const otherClient = new OpenAI({
      apiKey: other.admin_key,
      baseURL: `${baseUrl}/v1`,
      maxRetries: 0,
    });
    for (const path of [
      `/v1/responses/${response.id}`,
      `/v1/responses/${response.id}/input_items`,
    ]) {
      const answer = await get(path, other.admin_key);
      expect(answer.statusCode, path).toBe(404);
      expectValid('ErrorResponse', answer.json());
    }
    await expect(otherClient.responses.delete(response.id)).rejects.toBeInstanceOf(NotFoundError);
    const continued = await otherClient.responses
      .create({ model: 'fake-chat', input: 'Yours?', previous_response_id: response.id })
      .catch((error: unknown) => error);
    expect(continued).toMatchObject({ status: 400, code: 'previous_response_not_found' });
    // Still there for its own account.
    expect((await client.responses.retrieve(response.id)).id).toBe(response.id);
  });

  it('refuses built-in tools and unsupported items, naming them, before any upstream call', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tools: [weatherTool, { type: 'web_search' }] }, 'tools[1].type'],
      [{ tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }, 'tools[0].type'],
      [
        { tools: [weatherTool], tool_choice: { type: 'function', name: 'nope' } },
        'tool_choice.name',
      ],
      [{ input: [{ type: 'item_reference', id: 'msg_x' }] }, 'input[0].type'],
      [{ input: [] }, 'input'],
      [{ prompt: { id: 'pmpt_1' } }, 'prompt'],
    ];
    for (const [fields, param] of cases) {
      const answer = await harness.app.inject({
        method: 'POST',
        url: '/v1/responses',
        headers: bearer(key),
        payload: { model: 'fake-vision', input: 'Hi', ...fields },
      });
      expect(answer.statusCode, param).toBe(400);
      expectValid('ErrorResponse', answer.json());
      expect(answer.json<{ error: { param: string } }>().error.param).toBe(param);
    }
    expect(chatBodies(harness)).toEqual([]);
    const viaClient = await client.responses
      .create({ model: 'fake-vision', input: 'Search', tools: [{ type: 'web_search' }] })
      .catch((error: unknown) => error);
    expect(viaClient).toBeInstanceOf(BadRequestError);
    expect((viaClient as BadRequestError).message).toContain('web_search');
  });

  it('needs chat:write to create, and chat:read as well to read or delete', async () => {
    const response = await client.responses.create({ model: 'fake-chat', input: 'Scoped' });
    const writer = (await createKey(harness.app, harness.adminKey, { scopes: ['chat:write'] })).key;
    const reader = (await createKey(harness.app, harness.adminKey, { scopes: ['chat:read'] })).key;
    expect((await get(`/v1/responses/${response.id}`, writer)).statusCode).toBe(403);
    expect((await get(`/v1/responses/${response.id}/input_items`, reader)).statusCode).toBe(403);
    const readerClient = new OpenAI({ apiKey: reader, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    await expect(
      readerClient.responses.create({ model: 'fake-chat', input: 'No' }),
    ).rejects.toBeInstanceOf(PermissionDeniedError);
  });

  it('marks an answer cut by max_output_tokens incomplete', async () => {
    harness.upstream.enqueue({ kind: 'reply', content: 'A long answer', finishReason: 'length' });
    const response = await client.responses.create({
      model: 'fake-chat',
      input: 'Tell me everything',
      max_output_tokens: 16,
    });
    expectValid('Response', response);
    expect(response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      max_output_tokens: 16,
    });
    expect(response.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    expect(chatBodies(harness)[0]!.max_tokens).toBe(16);
  });

  it('ends a stream that fails midway with an error event and response.failed', async () => {
    harness.upstream.enqueue({ kind: 'cut', afterChunks: 3 });
    const events = await collect(
      await client.responses.create({
        model: 'fake-vision',
        input: 'one two three four five six',
        stream: true,
      }),
    );
    events.forEach(expectValidEvent);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(shape(events).slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(shape(events).slice(-2)).toEqual(['error', 'response.failed']);
    const failed = events[events.length - 1] as Extract<
      ResponseStreamEvent,
      { type: 'response.failed' }
    >;
    expect(failed.response.status).toBe('failed');
    expect(failed.response.error).toMatchObject({ code: 'server_error' });
    // A failed response is not stored.
    await expect(client.responses.retrieve(failed.response.id)).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('ends a stream whose key is revoked with an error event and response.failed', async () => {
    const { id, key: doomed } = await createKey(harness.app, harness.adminKey, {
      scopes: ['chat:write'],
    });
    slowUpstream.enqueue({
      kind: 'reply',
      chunks: Array.from({ length: 10_000 }, (_, index) => `word${index} `),
    });
    const doomedClient = new OpenAI({ apiKey: doomed, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    const stream = await doomedClient.responses.create({
      model: 'fake-slow-stream',
      input: 'Talk forever',
      stream: true,
    });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'response.output_text.delta' && events.length === 5) {
        const revoked = await harness.app.inject({
          method: 'DELETE',
          url: `/v1/api-keys/${id}`,
          headers: bearer(harness.adminKey),
        });
        expect(revoked.statusCode).toBe(200);
      }
    }
    events.forEach(expectValidEvent);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(shape(events).slice(-2)).toEqual(['error', 'response.failed']);
    expect(events.at(-2)).toMatchObject({ type: 'error', code: 'revoked_api_key' });
    expect(events.filter((event) => event.type === 'response.completed')).toEqual([]);
  });

  it('runs an OpenAI Agents SDK agent with a function tool against the platform', async () => {
    setTracingDisabled(true);
    // The Responses API mode, through the client pointed at the platform (this suite's own
    // provider rather than the SDK's global default: each dialect has its own platform).
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ openAIClient: client, useResponses: true }),
      tracingDisabled: true,
    });
    const asked: string[] = [];
    const getWeather = tool({
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: z.object({ city: z.string() }),
      execute: ({ city }) => {
        asked.push(city);
        return `Sunny in ${city}`;
      },
    });
    const agent = new Agent({
      name: 'Weather',
      instructions: 'Answer with the weather tool.',
      model: 'fake-vision',
      tools: [getWeather],
    });
    for (const stream of [false, true]) {
      harness.upstream.reset();
      asked.length = 0;
      harness.upstream.enqueue(
        {
          kind: 'reply',
          toolCalls: [{ id: 'call_a1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
        },
        { kind: 'reply', content: 'It is sunny in Paris.' },
      );
      let finalOutput: unknown;
      if (stream) {
        const result = await runner.run(agent, 'Weather in Paris?', { stream: true });
        for await (const event of result) void event;
        await result.completed;
        finalOutput = result.finalOutput;
      } else {
        finalOutput = (await runner.run(agent, 'Weather in Paris?')).finalOutput;
      }
      expect(asked, `stream: ${stream}`).toEqual(['Paris']);
      expect(finalOutput).toBe('It is sunny in Paris.');
      const [first, second] = chatBodies(harness);
      expect(first!.tools).toEqual([
        expect.objectContaining({
          type: 'function',
          function: expect.objectContaining({ name: 'get_weather' }),
        }),
      ]);
      expect(second!.messages).toEqual([
        { role: 'system', content: 'Answer with the weather tool.' },
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_a1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a1', content: 'Sunny in Paris' },
      ]);
    }
  });
});
