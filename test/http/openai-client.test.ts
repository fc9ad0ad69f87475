// The OpenAI-compatible surface (/chat/completions, /models, /embeddings) driven by the official
// `openai` client over real HTTP, against root_url and base_url, with a fake upstream behind it:
// response and chunk shapes, typed client errors, the user_id / conversation_id extensions, and
// that the platform's upstream key never reaches the client.
import type { AddressInfo } from 'node:net';
import OpenAI, { type APIError, type BadRequestError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import {
  echoOf,
  startChatHarness,
  upstreamSecret,
  type ChatHarness,
} from '../support/chat-harness.js';
import { fakeEmbedding, type UpstreamBehaviour } from '../support/fake-upstream.js';
import { bearer, createKey } from '../support/test-app.js';

/** One HTTP exchange the official client made, as it saw it. */
interface Exchange {
  method: string;
  url: URL;
  requestHeaders: Headers;
  requestBody: string | undefined;
  status: number;
  responseHeaders: Headers;
  body: Promise<string>;
}

interface Extensions {
  conversation_id?: string;
  message_id?: string;
}

type UpstreamMessage = { role: string; content: unknown };

const exchanges: Exchange[] = [];

/** The client's fetch, recording every request and response it sees (bodies read from a clone). */
const recordingFetch = async (
  input: string | URL | Request,
  init?: RequestInit,
): Promise<Response> => {
  const response = await fetch(input, init);
  const url = new URL(input instanceof Request ? input.url : input.toString());
  exchanges.push({
    method: init?.method ?? (input instanceof Request ? input.method : 'GET'),
    url,
    requestHeaders: new Headers(init?.headers ?? (input instanceof Request ? input.headers : {})),
    requestBody: typeof init?.body === 'string' ? init.body : undefined,
    status: response.status,
    responseHeaders: response.headers,
    body: response
      .clone()
      .text()
      .catch((error: unknown) => `<body failed: ${String(error)}>`),
  });
  return response;
};

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

/** Runs `action` and returns what it threw (failing when it did not throw). */
async function thrown(action: () => Promise<unknown>): Promise<unknown> {
  try {
    await action();
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Everything the client received in `list`, headers included, as one string. */
async function everythingReceived(list: readonly Exchange[]): Promise<string> {
  const parts: string[] = [];
  for (const exchange of list) {
    parts.push(JSON.stringify([...exchange.responseHeaders.entries()]));
    parts.push(await exchange.body);
  }
  return parts.join('\n');
}

const user = (content: string): ChatCompletionMessageParam[] => [{ role: 'user', content }];

describe.each(allDialects)('the official openai client on $name', (dialect) => {
  let harness: ChatHarness;
  let rootUrl: string;
  /** A platform key with exactly what these calls need. */
  let chatKey: string;
  let modelsOnlyKey: string;

  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = harness.app.server.address() as AddressInfo;
    rootUrl = `http://127.0.0.1:${port}`;
    chatKey = (
      await createKey(harness.app, harness.adminKey, {
        scopes: ['chat:write', 'models:read', 'conversations:read', 'chat:read'],
      })
    ).key;
    modelsOnlyKey = (await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] }))
      .key;
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
    exchanges.length = 0;
  });

  const clientFor = (baseURL: string, apiKey = chatKey) =>
    new OpenAI({ baseURL, apiKey, maxRetries: 0, fetch: recordingFetch });

  const upstreamMessages = (index: number) =>
    (harness.upstream.requests[index]!.body as { messages: UpstreamMessage[] }).messages;

  const countRows = async (table: 'conversations' | 'messages') => {
    const { db } = harness.services.storage;
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  };

  describe.each([
    { label: 'root_url', prefix: '' },
    { label: 'base_url (root_url + /v1)', prefix: '/v1' },
  ])('with baseURL = $label', ({ prefix }) => {
    let client: OpenAI;
    beforeAll(() => {
      client = clientFor(rootUrl + prefix);
    });

    it('lists the catalog, retrieves a model, and answers NotFoundError for an unknown one', async () => {
      const page = await client.models.list();
      const models = page.data;
      expect(models.map((model) => model.id).sort()).toEqual(
        ['fake-backup', 'fake-chat', 'fake-embed', 'fake-slow', 'fake-small'].sort(),
      );
      for (const model of models) {
        expect(model).toMatchObject({ object: 'model', owned_by: 'OpenAI' });
        expect(Number.isInteger(model.created)).toBe(true);
      }
      expect(exchanges[0]!.url.pathname).toBe(`${prefix}/models`);
      const raw = JSON.parse(await exchanges[0]!.body) as { object: string; models: unknown[] };
      expect(raw.object).toBe('list');
      expect(raw.models).toHaveLength(models.length);

      const model = await client.models.retrieve('fake-chat');
      expect(model).toMatchObject({
        id: 'fake-chat',
        object: 'model',
        owned_by: 'OpenAI',
      });
      expect(exchanges[1]!.url.pathname).toBe(`${prefix}/models/fake-chat`);

      const error = await thrown(() => client.models.retrieve('no-such-model'));
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error).toMatchObject({ status: 404, type: 'not_found_error', code: 'not_found' });
    });

    it('completes: OpenAI shape, echo, consistent usage, and the upstream key stays hidden', async () => {
      const { data: completion, response } = await client.chat.completions
        .create({ model: 'fake-chat', messages: user('Hello there platform') })
        .withResponse();
      expect(response.headers.get('x-ratelimit-limit-requests')).toBe('100000');
      expect(response.headers.get('ratelimit')).toBeTruthy();
      expect(completion.id).toMatch(/^chatcmpl-/);
      expect(completion).toMatchObject({
        object: 'chat.completion',
        model: 'fake-chat',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: echoOf('Hello there platform') },
            finish_reason: 'stop',
          },
        ],
      });
      expect(completion.choices).toHaveLength(1);
      expect(Number.isInteger(completion.created)).toBe(true);
      const usage = completion.usage!;
      expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
      expect(usage.prompt_tokens).toBe(3);
      expect(usage.completion_tokens).toBe(4);

      // What the client sent: the platform's key, to the platform's path.
      expect(exchanges).toHaveLength(1);
      expect(exchanges[0]!.url.pathname).toBe(`${prefix}/chat/completions`);
      expect(exchanges[0]!.requestHeaders.get('authorization')).toBe(`Bearer ${chatKey}`);
      // What the upstream got: the configured upstream key, never the platform's.
      expect(harness.upstream.requests).toHaveLength(1);
      expect(harness.upstream.requests[0]).toMatchObject({
        path: '/v1/chat/completions',
        apiKey: upstreamSecret,
      });
      expect(JSON.stringify(harness.upstream.requests[0]!.headers)).not.toContain(chatKey);
      const received = await everythingReceived(exchanges);
      expect(received).toContain('Echo: Hello there platform');
      expect(received).not.toContain(upstreamSecret);
    });

    it('streams chat.completion.chunk events with one id, role first, finish_reason last', async () => {
      const question = 'stream these few words';
      const plain = await client.chat.completions.create({
        model: 'fake-chat',
        messages: user(question),
      });

      const { data: stream, response } = await client.chat.completions
        .create({ model: 'fake-chat', messages: user(question), stream: true })
        .withResponse();
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const chunks = await collect(stream);
      expect(chunks.length).toBeGreaterThan(3);
      for (const chunk of chunks) expect(chunk.object).toBe('chat.completion.chunk');
      expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
      expect(chunks[0]!.id).toMatch(/^chatcmpl-/);
      expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
      const withChoices = chunks.filter((chunk) => chunk.choices.length > 0);
      const text = withChoices.map((chunk) => chunk.choices[0]!.delta.content ?? '').join('');
      expect(text).toBe(plain.choices[0]!.message.content);
      expect(withChoices.at(-1)!.choices[0]!.finish_reason).toBe('stop');
      expect(
        withChoices.slice(0, -1).every((chunk) => chunk.choices[0]!.finish_reason === null),
      ).toBe(true);
      // Without stream_options.include_usage no chunk carries usage.
      expect(chunks.filter((chunk) => chunk.usage != null)).toEqual([]);
      expect(exchanges.at(-1)!.url.pathname).toBe(`${prefix}/chat/completions`);
      expect(await everythingReceived(exchanges)).not.toContain(upstreamSecret);
    });
  });

  describe('chat completions', () => {
    let client: OpenAI;
    beforeAll(() => {
      client = clientFor(rootUrl);
    });

    it('passes a system message and assistant history through, in order', async () => {
      const completion = await client.chat.completions.create({
        model: 'fake-chat',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'first question' },
          { role: 'assistant', content: 'first answer' },
          { role: 'user', content: 'second question' },
        ],
      });
      expect(completion.choices[0]!.message.content).toBe(echoOf('second question'));
      expect(upstreamMessages(0)).toEqual([
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'first question' },
        { role: 'assistant', content: 'first answer' },
        { role: 'user', content: 'second question' },
      ]);
    });

    it('accepts text content parts and the developer role', async () => {
      const completion = await client.chat.completions.create({
        model: 'fake-chat',
        messages: [
          { role: 'developer', content: 'Answer briefly.' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hello' },
              { type: 'text', text: ' world' },
            ],
          },
        ],
      });
      expect(completion.choices[0]!.message.content).toBe(echoOf('hello world'));
      expect(upstreamMessages(0)).toEqual([
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'hello world' },
      ]);
    });

    it('honours max_tokens and max_completion_tokens with finish_reason length', async () => {
      const byMaxTokens = await client.chat.completions.create({
        model: 'fake-chat',
        messages: user('one two three four five six'),
        max_tokens: 2,
      });
      expect(byMaxTokens.choices[0]).toMatchObject({
        message: { content: 'Echo: one' },
        finish_reason: 'length',
      });
      expect(byMaxTokens.usage!.completion_tokens).toBe(2);

      const byCompletionTokens = await client.chat.completions.create({
        model: 'fake-chat',
        messages: user('one two three four five six'),
        max_completion_tokens: 3,
      });
      expect(byCompletionTokens.choices[0]).toMatchObject({
        message: { content: 'Echo: one two' },
        finish_reason: 'length',
      });

      const limits = harness.upstream.requests.map((request) => {
        const body = request.body as { max_tokens?: number; max_completion_tokens?: number };
        return body.max_completion_tokens ?? body.max_tokens;
      });
      expect(limits).toEqual([2, 3]);
    });

    it('is stateless without user_id and conversation_id', async () => {
      const before = {
        conversations: await countRows('conversations'),
        messages: await countRows('messages'),
      };
      const listConversations = () =>
        harness.app.inject({
          method: 'GET',
          url: '/v1/conversations?user_id=stateless-user',
          headers: bearer(harness.adminKey),
        });
      const listedBefore = await listConversations();
      expect(listedBefore.statusCode).toBe(200);

      const { data, response } = await client.chat.completions
        .create({ model: 'fake-chat', messages: user('remember nothing'), user: 'stateless-user' })
        .withResponse();
      expect(data.choices[0]!.message.content).toBe(echoOf('remember nothing'));
      expect(data).not.toHaveProperty('conversation_id');
      expect(data).not.toHaveProperty('message_id');
      expect(response.headers.get('x-conversation-id')).toBeNull();

      const chunks = await collect(
        await client.chat.completions.create({
          model: 'fake-chat',
          messages: user('remember nothing'),
          stream: true,
        }),
      );
      expect(chunks[0]).not.toHaveProperty('conversation_id');

      expect(await countRows('conversations')).toBe(before.conversations);
      expect(await countRows('messages')).toBe(before.messages);
      const listedAfter = await listConversations();
      expect(listedAfter.json()).toEqual(listedBefore.json());
    });

    it('adds a final usage chunk with stream_options.include_usage', async () => {
      const plain = await client.chat.completions.create({
        model: 'fake-chat',
        messages: user('count my tokens'),
      });
      const chunks = await collect(
        await client.chat.completions.create({
          model: 'fake-chat',
          messages: user('count my tokens'),
          stream: true,
          stream_options: { include_usage: true },
        }),
      );
      const last = chunks.at(-1)!;
      expect(last.object).toBe('chat.completion.chunk');
      expect(last.choices).toEqual([]);
      // The upstream's own usage chunk, relayed as it came (with every detail it reports).
      expect(last.usage).toMatchObject({
        prompt_tokens: plain.usage!.prompt_tokens,
        completion_tokens: plain.usage!.completion_tokens,
        total_tokens: plain.usage!.prompt_tokens + plain.usage!.completion_tokens,
        // The fake reports its details as OpenAI does (0 cached, 0 reasoning); they are relayed.
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      });
      const others = chunks.slice(0, -1);
      expect(others.every((chunk) => chunk.usage == null)).toBe(true);
      expect(others.at(-1)!.choices[0]!.finish_reason).toBe('stop');
      expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    });

    it('speaks the raw SSE wire format, with rate-limit headers on the stream', async () => {
      const response = await fetch(`${rootUrl}/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(chatKey), 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'fake-chat',
          messages: user('raw wire please'),
          stream: true,
        }),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(response.headers.get('x-ratelimit-limit-requests')).toBe('100000');
      expect(response.headers.get('x-ratelimit-remaining-requests')).toMatch(/^\d+$/);
      expect(response.headers.get('ratelimit')).toBeTruthy();
      expect(response.headers.get('ratelimit-policy')).toBeTruthy();

      const body = await response.text();
      expect(body.endsWith('\n\n')).toBe(true);
      const lines = body.split('\n').filter((line) => line !== '');
      for (const line of lines) expect(line).toMatch(/^data: /);
      expect(lines.at(-1)).toBe('data: [DONE]');
      expect(lines.filter((line) => line === 'data: [DONE]')).toHaveLength(1);
      const chunks = lines
        .slice(0, -1)
        .map((line) => JSON.parse(line.slice('data: '.length)) as ChatCompletionChunk);
      expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
      const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe(echoOf('raw wire please'));
      expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    });
  });

  describe('errors as typed client errors in OpenAI error shape', () => {
    let client: OpenAI;
    beforeAll(() => {
      client = clientFor(rootUrl);
    });

    it('refuses an unknown model with BadRequestError unknown_model', async () => {
      const error = await thrown(() =>
        client.chat.completions.create({ model: 'no-such-model', messages: user('x') }),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({
        status: 400,
        code: 'unknown_model',
        type: 'invalid_request_error',
        param: 'model',
      });
      expect((error as BadRequestError).error).toMatchObject({
        code: 'unknown_model',
        message: expect.stringContaining('no-such-model'),
      });
      expect(harness.upstream.requests).toHaveLength(0);
    });

    it.each([
      {
        what: 'temperature 3',
        params: { temperature: 3 },
        param: 'temperature',
      },
      {
        what: "max_tokens above the model's maximum",
        params: { max_tokens: 257 },
        param: 'max_tokens',
      },
      {
        what: "max_completion_tokens above the model's maximum",
        params: { max_completion_tokens: 257 },
        param: 'max_completion_tokens',
      },
      { what: 'no messages', params: { messages: [] }, param: 'messages' },
      {
        what: 'a tool message',
        params: {
          messages: [
            { role: 'user', content: 'call it' },
            { role: 'tool', content: '42', tool_call_id: 'call_1' },
            { role: 'user', content: 'and now' },
          ],
        },
        param: 'messages[1].tool_call_id',
      },
    ] satisfies Array<{
      what: string;
      params: Partial<ChatCompletionCreateParamsNonStreaming>;
      param: string;
    }>)('refuses $what with BadRequestError', async ({ params, param }) => {
      const error = await thrown(() =>
        client.chat.completions.create({ model: 'fake-chat', messages: user('x'), ...params }),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', param });
      expect((error as BadRequestError).code).toMatch(/^(invalid|missing)_parameter$/);
      expect(harness.upstream.requests).toHaveLength(0);
    });

    it('answers AuthenticationError for an invalid or missing platform key', async () => {
      const invalid = await thrown(() =>
        clientFor(rootUrl, 'sk-not-a-real-key').chat.completions.create({
          model: 'fake-chat',
          messages: user('x'),
        }),
      );
      expect(invalid).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(invalid).toMatchObject({
        status: 401,
        code: 'invalid_api_key',
        type: 'authentication_error',
      });

      // The upstream's key is no key of the platform's.
      const upstreamKey = await thrown(() => clientFor(rootUrl, upstreamSecret).models.list());
      expect(upstreamKey).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(upstreamKey).toMatchObject({ code: 'invalid_api_key' });

      const missing = await thrown(() =>
        clientFor(rootUrl).chat.completions.create(
          { model: 'fake-chat', messages: user('x') },
          { headers: { Authorization: null } },
        ),
      );
      expect(exchanges.at(-1)!.requestHeaders.has('authorization')).toBe(false);
      expect(missing).toBeInstanceOf(OpenAI.AuthenticationError);
      expect(missing).toMatchObject({
        status: 401,
        code: 'missing_api_key',
        type: 'authentication_error',
      });
      expect(harness.upstream.requests).toHaveLength(0);
    });

    it('answers PermissionDeniedError for a key without chat:write', async () => {
      const limited = clientFor(rootUrl, modelsOnlyKey);
      expect((await limited.models.list()).data.length).toBeGreaterThan(0);
      const error = await thrown(() =>
        limited.chat.completions.create({ model: 'fake-chat', messages: user('x') }),
      );
      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect(error).toMatchObject({
        status: 403,
        code: 'insufficient_permissions',
        type: 'permission_error',
      });
      expect(harness.upstream.requests).toHaveLength(0);
    });

    it('answers 502 upstream_error when fake-chat and fake-backup keep failing, hiding the upstream body', async () => {
      const failure: UpstreamBehaviour = {
        kind: 'error',
        status: 500,
        headers: { 'retry-after-ms': '1' },
        body: {
          error: { message: `internal detail ${upstreamSecret}`, type: 'server_error' },
        },
      };
      // fake-chat: 1 attempt + 2 retries; then fake-backup: 1 attempt, no retries.
      harness.upstream.enqueue(failure, failure, failure, failure);
      const error = await thrown(() =>
        client.chat.completions.create({ model: 'fake-chat', messages: user('x') }),
      );
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect(error).toMatchObject({ status: 502, code: 'upstream_error', type: 'upstream_error' });
      expect((error as APIError).message).not.toContain('internal detail');
      const models = harness.upstream.requests.map(
        (request) => (request.body as { model: string }).model,
      );
      expect(models).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o']);
      expect(harness.upstream.pendingBehaviours).toBe(0);
      const received = await everythingReceived(exchanges);
      expect(received).not.toContain('internal detail');
      expect(received).not.toContain(upstreamSecret);
    });

    it('fails a streamed request that cannot start with a plain typed error, not a stream', async () => {
      const unknown = await thrown(async () =>
        collect(
          await client.chat.completions.create({
            model: 'no-such-model',
            messages: user('x'),
            stream: true,
          }),
        ),
      );
      expect(unknown).toBeInstanceOf(OpenAI.BadRequestError);
      expect(unknown).toMatchObject({ status: 400, code: 'unknown_model', param: 'model' });

      const failure: UpstreamBehaviour = {
        kind: 'error',
        status: 500,
        headers: { 'retry-after-ms': '1' },
      };
      harness.upstream.enqueue(failure, failure, failure, failure);
      const upstreamDown = await thrown(async () =>
        collect(
          await client.chat.completions.create({
            model: 'fake-chat',
            messages: user('x'),
            stream: true,
          }),
        ),
      );
      expect(upstreamDown).toBeInstanceOf(OpenAI.InternalServerError);
      expect(upstreamDown).toMatchObject({ status: 502, code: 'upstream_error' });
      expect(harness.upstream.requests).toHaveLength(4);
      expect(exchanges.map((exchange) => exchange.responseHeaders.get('content-type'))).toEqual([
        expect.stringMatching(/^application\/json/),
        expect.stringMatching(/^application\/json/),
      ]);
    });

    it('answers 504 upstream_timeout when fake-slow exceeds its 300 ms timeout', async () => {
      // Five minutes of delay: only the model's own 300 ms timeout can answer within the test.
      harness.upstream.enqueue({ kind: 'delay', ms: 300_000 });
      const error = await thrown(() =>
        client.chat.completions.create({ model: 'fake-slow', messages: user('x') }),
      );
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect(error).toMatchObject({
        status: 504,
        code: 'upstream_timeout',
        type: 'upstream_error',
      });
      expect(harness.upstream.requests).toHaveLength(1);
    });

    it('rejects the client stream with an APIError when the upstream stream is cut', async () => {
      harness.upstream.enqueue({ kind: 'cut', afterChunks: 3 });
      const stream = await client.chat.completions.create({
        model: 'fake-small',
        messages: user('a long answer please'),
        stream: true,
      });
      const received: ChatCompletionChunk[] = [];
      const error = await thrown(async () => {
        for await (const chunk of stream) received.push(chunk);
      });
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error).toMatchObject({ code: 'upstream_error', type: 'upstream_error' });
      // Some of the answer arrived before the cut, and no chunk claimed a normal finish.
      expect(received.length).toBeGreaterThan(0);
      expect(received[0]!.choices[0]!.delta.role).toBe('assistant');
      expect(received.some((chunk) => chunk.choices[0]?.finish_reason != null)).toBe(false);
      expect(harness.upstream.requests).toHaveLength(1);
      expect(await everythingReceived(exchanges)).not.toContain(upstreamSecret);
    });
  });

  describe('the user_id and conversation_id extensions', () => {
    let client: OpenAI;
    beforeAll(() => {
      client = clientFor(rootUrl);
    });

    it('stores the turn and continues the conversation with its history', async () => {
      const first: ChatCompletionCreateParamsNonStreaming & { user_id: string } = {
        model: 'fake-chat',
        messages: user('my name is Ada'),
        user_id: 'ada',
      };
      const { data, response } = await client.chat.completions.create(first).withResponse();
      const stored = data as ChatCompletion & Extensions;
      expect(stored.choices[0]!.message.content).toBe(echoOf('my name is Ada'));
      expect(stored.conversation_id).toMatch(/^conv_/);
      expect(stored.message_id).toMatch(/^msg_/);
      expect(response.headers.get('x-conversation-id')).toBe(stored.conversation_id);

      const second: ChatCompletionCreateParamsNonStreaming & { conversation_id: string } = {
        model: 'fake-chat',
        messages: user('what is my name'),
        conversation_id: stored.conversation_id!,
      };
      const next = (await client.chat.completions.create(second)) as ChatCompletion & Extensions;
      expect(next.conversation_id).toBe(stored.conversation_id);
      expect(next.message_id).toMatch(/^msg_/);
      expect(next.message_id).not.toBe(stored.message_id);
      expect(upstreamMessages(1)).toEqual([
        { role: 'user', content: 'my name is Ada' },
        { role: 'assistant', content: echoOf('my name is Ada') },
        { role: 'user', content: 'what is my name' },
      ]);

      const history = await harness.app.inject({
        method: 'GET',
        url: `/v1/conversations/${stored.conversation_id}/messages`,
        headers: bearer(harness.adminKey),
      });
      expect(history.statusCode).toBe(200);
      const { messages } = history.json<{ messages: Array<{ role: string; content: string }> }>();
      expect(messages.map(({ role, content }) => ({ role, content }))).toEqual([
        { role: 'user', content: 'my name is Ada' },
        { role: 'assistant', content: echoOf('my name is Ada') },
        { role: 'user', content: 'what is my name' },
        { role: 'assistant', content: echoOf('what is my name') },
      ]);
      const listed = await harness.app.inject({
        method: 'GET',
        url: '/v1/conversations?user_id=ada',
        headers: bearer(harness.adminKey),
      });
      expect(listed.json<{ conversations: Array<{ id: string }> }>().conversations).toEqual([
        expect.objectContaining({ id: stored.conversation_id }),
      ]);
    });

    it('answers NotFoundError for an unknown conversation_id', async () => {
      const params: ChatCompletionCreateParamsNonStreaming & { conversation_id: string } = {
        model: 'fake-chat',
        messages: user('hello again'),
        conversation_id: 'conv_doesnotexist',
      };
      const error = await thrown(() => client.chat.completions.create(params));
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect(error).toMatchObject({ status: 404, code: 'not_found', type: 'not_found_error' });
      expect(harness.upstream.requests).toHaveLength(0);
    });

    it('puts conversation_id in the first chunk when streaming with user_id', async () => {
      const params: ChatCompletionCreateParamsStreaming & { user_id: string } = {
        model: 'fake-chat',
        messages: user('stream and store'),
        stream: true,
        user_id: 'bea',
      };
      const chunks = (await collect(await client.chat.completions.create(params))) as Array<
        ChatCompletionChunk & Extensions
      >;
      const [first] = chunks;
      expect(first!.conversation_id).toMatch(/^conv_/);
      expect(first!.message_id).toMatch(/^msg_/);
      expect(first!.choices[0]!.delta.role).toBe('assistant');
      const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
      expect(text).toBe(echoOf('stream and store'));

      const detail = await harness.app.inject({
        method: 'GET',
        url: `/v1/conversations/${first!.conversation_id}`,
        headers: bearer(harness.adminKey),
      });
      expect(detail.statusCode).toBe(200);
      expect(detail.json<{ message_count: number }>().message_count).toBe(2);
    });
  });

  describe('embeddings', () => {
    let client: OpenAI;
    beforeAll(() => {
      client = clientFor(rootUrl);
    });

    it('returns base64-decoded vectors equal to the float ones', async () => {
      const decoded = await client.embeddings.create({ model: 'fake-embed', input: ['a b', 'c'] });
      // The client asked for base64 and decoded it itself.
      expect(JSON.parse(exchanges[0]!.requestBody ?? '{}')).toMatchObject({
        encoding_format: 'base64',
      });
      const raw = JSON.parse(await exchanges[0]!.body) as {
        data: Array<{ embedding: unknown }>;
      };
      expect(typeof raw.data[0]!.embedding).toBe('string');

      const floats = await client.embeddings.create({
        model: 'fake-embed',
        input: ['a b', 'c'],
        encoding_format: 'float',
      });
      expect(decoded.object).toBe('list');
      expect(decoded.data).toHaveLength(2);
      expect(decoded.data.map((entry) => entry.index)).toEqual([0, 1]);
      for (const [index, entry] of decoded.data.entries()) {
        expect(entry.object).toBe('embedding');
        expect(entry.embedding).toHaveLength(64);
        expect(entry.embedding).toEqual(floats.data[index]!.embedding);
      }
      expect(decoded.data[0]!.embedding).toEqual(fakeEmbedding('a b'));
      expect(decoded.data[1]!.embedding).toEqual(fakeEmbedding('c'));
      expect(decoded.usage.total_tokens).toBe(floats.usage.total_tokens);
      expect(harness.upstream.requests.every((request) => request.apiKey === upstreamSecret)).toBe(
        true,
      );
      expect(await everythingReceived(exchanges)).not.toContain(upstreamSecret);
    });

    it('refuses an empty input string with BadRequestError, as OpenAI does (not a 502)', async () => {
      // A 502 would also make the official client retry an invalid request (it retries 5xx).
      const error = await thrown(() =>
        client.embeddings.create({ model: 'fake-embed', input: '' }),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'input' });
      expect(harness.upstream.requests).toHaveLength(0);
    });

    it('refuses a chat model as embedding model with BadRequestError', async () => {
      const error = await thrown(() =>
        client.embeddings.create({ model: 'fake-chat', input: 'hello' }),
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error).toMatchObject({ status: 400, param: 'model', type: 'invalid_request_error' });
      expect(harness.upstream.requests).toHaveLength(0);
    });
  });
});
