// /v1/chat against a fake upstream over real HTTP: answers and their storage, the event stream,
// validation, history trimming, retries honouring retry-after, fallback, timeout, a stream cut
// mid-way, a client that hangs up, and missing credentials.
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startChatHarness, upstreamSecret, type ChatHarness } from '../support/chat-harness.js';
import { bearer, startTestApp } from '../support/test-app.js';
import { fakeModelCatalog } from '../support/chat-harness.js';

interface ChatJson {
  message: string;
  conversation_id: string;
  message_id: string;
  model: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  finish_reason: string;
  latency_ms: number;
}

interface ErrorJson {
  error: { message: string; type: string; code: string; param: string | null };
}

type UpstreamMessage = { role: string; content: string };

function parseEvents(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>);
}

function words(count: number, word: string): string {
  return Array.from({ length: count }, (_, index) => `${word}${index}`).join(' ');
}

describe.each(allDialects)('chat through /v1/chat on $name', (dialect) => {
  let harness: ChatHarness;
  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
  });

  const chat = (payload: Record<string, unknown>, key = harness.adminKey) =>
    harness.app.inject({ method: 'POST', url: '/v1/chat', headers: bearer(key), payload });

  const upstreamMessages = (index: number) =>
    (harness.upstream.requests[index]!.body as { messages: UpstreamMessage[] }).messages;

  it('answers, stores both turns with model, usage, latency and finish reason', async () => {
    const response = await chat({
      user_id: 'alice',
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
    });
    expect(response.statusCode).toBe(200);
    const body = response.json<ChatJson>();
    expect(body).toMatchObject({
      message: 'Echo: What is the capital of France?',
      model: 'fake-chat',
      finish_reason: 'stop',
    });
    expect(body.conversation_id).toMatch(/^conv_/);
    expect(body.message_id).toMatch(/^msg_/);
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(body.usage.completion_tokens).toBe(7);
    expect(response.headers['x-ratelimit-limit-requests']).toBeDefined();

    const history = await harness.app.inject({
      method: 'GET',
      url: `/v1/conversations/${body.conversation_id}/messages`,
      headers: bearer(harness.adminKey),
    });
    const { messages } = history.json<{ messages: Array<Record<string, unknown>> }>();
    expect(messages).toHaveLength(2);
    expect(messages[0]).toMatchObject({ role: 'user', content: 'What is the capital of France?' });
    expect(messages[1]).toMatchObject({
      id: body.message_id,
      role: 'assistant',
      content: body.message,
      model: 'fake-chat',
      finish_reason: 'stop',
      usage: body.usage,
    });
    expect(messages[1]!.latency_ms).toEqual(expect.any(Number));
  });

  it('continues a conversation with its history, and lets a system message override the prompt', async () => {
    const first = (
      await chat({ user_id: 'bob', messages: [{ role: 'user', content: 'one' }] })
    ).json<ChatJson>();
    const second = await chat({
      user_id: 'bob',
      conversation_id: first.conversation_id,
      messages: [
        { role: 'system', content: 'Answer in French.' },
        { role: 'user', content: 'two' },
      ],
    });
    expect(second.statusCode).toBe(200);
    expect(upstreamMessages(1)).toEqual([
      { role: 'system', content: 'Answer in French.' },
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'Echo: one' },
      { role: 'user', content: 'two' },
    ]);
    const detail = await harness.app.inject({
      method: 'GET',
      url: `/v1/conversations/${first.conversation_id}`,
      headers: bearer(harness.adminKey),
    });
    expect(detail.json<{ message_count: number; title: string }>()).toMatchObject({
      message_count: 4,
      title: 'one',
    });
  });

  it('streams start, deltas and end as Server-Sent Events, then stores the turn', async () => {
    const response = await chat({
      user_id: 'carol',
      stream: true,
      messages: [{ role: 'user', content: 'tell me three words' }],
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(response.headers['ratelimit']).toBeDefined();
    const events = parseEvents(response.body);
    const [start, ...rest] = events;
    const end = rest.pop()!;
    expect(start).toMatchObject({ type: 'start', model: 'fake-chat' });
    expect(rest.length).toBeGreaterThan(1);
    expect(rest.every((event) => event.type === 'delta')).toBe(true);
    const streamed = rest.map((event) => event.content as string).join('');
    expect(streamed).toBe('Echo: tell me three words');
    expect(end).toMatchObject({
      type: 'end',
      message: streamed,
      conversation_id: start!.conversation_id,
      message_id: start!.message_id,
      finish_reason: 'stop',
      usage: { completion_tokens: 5 },
    });
    const history = await harness.app.inject({
      method: 'GET',
      url: `/v1/conversations/${String(start!.conversation_id)}/messages`,
      headers: bearer(harness.adminKey),
    });
    expect(history.json<{ total: number }>().total).toBe(2);
  });

  it.each([
    [{ messages: [{ role: 'user', content: 'x' }] }, 'missing_parameter', 'user_id'],
    [{ user_id: 'u', messages: [] }, 'invalid_parameter', 'messages'],
    [
      { user_id: 'u', temperature: 1.5, messages: [{ role: 'user', content: 'x' }] },
      'invalid_parameter',
      'temperature',
    ],
    [
      { user_id: 'u', max_tokens: 257, messages: [{ role: 'user', content: 'x' }] },
      'invalid_parameter',
      'max_tokens',
    ],
    [
      { user_id: 'u', model: 'nope', messages: [{ role: 'user', content: 'x' }] },
      'unknown_model',
      'model',
    ],
    [
      { user_id: 'u', model: 'fake-embed', messages: [{ role: 'user', content: 'x' }] },
      'invalid_parameter',
      'model',
    ],
    [
      {
        user_id: 'u',
        messages: [
          { role: 'user', content: 'x' },
          { role: 'assistant', content: 'y' },
        ],
      },
      'invalid_parameter',
      'messages[1].role',
    ],
    [
      { user_id: 'u', messages: [{ role: 'tool', content: 'x' }] },
      'missing_parameter',
      'messages[0].tool_call_id',
    ],
    [
      { user_id: 'u', messages: [{ role: 'user', content: 'x', tool_call_id: 'call_1' }] },
      'invalid_parameter',
      'messages[0].tool_call_id',
    ],
    [
      {
        user_id: 'u',
        messages: [
          {
            role: 'user',
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
        ],
      },
      'invalid_parameter',
      'messages[0].tool_calls',
    ],
    [{ user_id: 'u', messages: [{ role: 'user' }] }, 'missing_parameter', 'messages[0].content'],
    [
      {
        user_id: 'u',
        messages: [
          {
            role: 'system',
            content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }],
          },
          { role: 'user', content: 'x' },
        ],
      },
      'invalid_parameter',
      'messages[0].content[0]',
    ],
    [
      {
        user_id: 'u',
        messages: [
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/a.png' } }] },
        ],
      },
      'invalid_parameter',
      'messages[0].content[0].image_url.url',
    ],
    [
      {
        user_id: 'u',
        tool_choice: 'auto',
        messages: [{ role: 'user', content: 'x' }],
      },
      'invalid_parameter',
      'tool_choice',
    ],
    [
      {
        user_id: 'u',
        tools: [{ type: 'function', function: { name: 'lookup' } }],
        tool_choice: { type: 'function', function: { name: 'other' } },
        messages: [{ role: 'user', content: 'x' }],
      },
      'invalid_parameter',
      'tool_choice.function.name',
    ],
    [
      {
        user_id: 'u',
        tools: [{ type: 'function', function: { name: 'not a name' } }],
        messages: [{ role: 'user', content: 'x' }],
      },
      'invalid_parameter',
      'tools[0].function.name',
    ],
    [
      {
        user_id: 'u',
        tools: [
          {
            type: 'function',
            function: {
              name: 'big',
              parameters: { type: 'object', description: 'x'.repeat(100_001) },
            },
          },
        ],
        messages: [{ role: 'user', content: 'x' }],
      },
      'invalid_parameter',
      'tools[0].function.parameters',
    ],
    [
      { user_id: 'u', conversation_id: 'conv_missing', messages: [{ role: 'user', content: 'x' }] },
      'not_found',
      null,
    ],
  ])('refuses %j with %s naming %s, calling no model', async (payload, code, param) => {
    const response = await chat(payload);
    expect(response.statusCode).toBe(code === 'not_found' ? 404 : 400);
    expect(response.json<ErrorJson>().error).toMatchObject({ code, param });
    expect(harness.upstream.requests).toHaveLength(0);
  });

  it('trims history oldest-first to the context window minus max_tokens', async () => {
    // fake-small: context 120, max_tokens 20 → 100 tokens of input.
    let conversationId: string | undefined;
    for (const word of ['alpha', 'bravo', 'charlie', 'delta']) {
      const response = await chat({
        user_id: 'dave',
        model: 'fake-small',
        ...(conversationId === undefined ? {} : { conversation_id: conversationId }),
        messages: [{ role: 'user', content: words(12, word) }],
      });
      expect(response.statusCode, response.body).toBe(200);
      conversationId = response.json<ChatJson>().conversation_id;
    }
    const sent = upstreamMessages(3);
    // The newest message is always there; the oldest turns are gone; a user turn comes first.
    expect(sent[sent.length - 1]).toEqual({ role: 'user', content: words(12, 'delta') });
    expect(JSON.stringify(sent)).not.toContain('alpha0');
    expect(sent[0]!.role).toBe('user');
    expect(sent.length).toBeLessThan(7);
    // Stored history is not trimmed: all eight messages remain.
    const detail = await harness.app.inject({
      method: 'GET',
      url: `/v1/conversations/${conversationId}`,
      headers: bearer(harness.adminKey),
    });
    expect(detail.json<{ message_count: number }>().message_count).toBe(8);

    const tooLong = await chat({
      user_id: 'dave',
      model: 'fake-small',
      messages: [{ role: 'user', content: words(200, 'x') }],
    });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json<ErrorJson>().error).toMatchObject({
      code: 'invalid_parameter',
      param: 'messages',
    });
  });

  it('retries 429 and 500 answers, waiting as retry-after says', async () => {
    harness.upstream.enqueue(
      { kind: 'error', status: 429, headers: { 'retry-after': '1' } },
      { kind: 'error', status: 500, headers: { 'retry-after-ms': '50' } },
    );
    const response = await chat({
      user_id: 'erin',
      messages: [{ role: 'user', content: 'persist' }],
    });
    expect(response.statusCode).toBe(200);
    expect(response.json<ChatJson>()).toMatchObject({
      message: 'Echo: persist',
      model: 'fake-chat',
    });
    const [first, second, third] = harness.upstream.requests;
    expect([first!.status, second!.status, third!.status]).toEqual([429, 500, 200]);
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(990);
    expect(third!.receivedAt - second!.receivedAt).toBeGreaterThanOrEqual(45);
  });

  it('falls back to the next model when the first keeps failing, streamed or not', async () => {
    for (const stream of [false, true]) {
      harness.upstream.reset();
      const failure = { kind: 'error' as const, status: 503, headers: { 'retry-after-ms': '1' } };
      harness.upstream.enqueue(failure, failure, failure);
      const response = await chat({
        user_id: 'frank',
        stream,
        messages: [{ role: 'user', content: 'anyone there' }],
      });
      expect(response.statusCode).toBe(200);
      const model = stream ? parseEvents(response.body)[0]!.model : response.json<ChatJson>().model;
      expect(model).toBe('fake-backup');
      const models = harness.upstream.requests.map(
        (request) => (request.body as { model: string }).model,
      );
      expect(models).toEqual(['gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o']);
    }
  });

  it('answers 502 when every model fails, without leaking the upstream body or key', async () => {
    const failure = {
      kind: 'error' as const,
      status: 500,
      headers: { 'retry-after-ms': '1' },
      body: { error: { message: `internal detail ${upstreamSecret}`, type: 'server_error' } },
    };
    harness.upstream.enqueue(failure, failure, failure, failure);
    const response = await chat({ user_id: 'gina', messages: [{ role: 'user', content: 'x' }] });
    expect(response.statusCode).toBe(502);
    expect(response.json<ErrorJson>().error).toMatchObject({
      type: 'upstream_error',
      code: 'upstream_error',
    });
    expect(response.body).not.toContain('internal detail');
    expect(response.body).not.toContain(upstreamSecret);
    expect(JSON.stringify(response.headers)).not.toContain(upstreamSecret);
    expect(harness.upstream.requests).toHaveLength(4);
  });

  it('answers 504 when the model exceeds its timeout, and stops the upstream call', async () => {
    // Five minutes of delay: only the model's 300 ms timeout can answer within the test.
    harness.upstream.enqueue({ kind: 'delay', ms: 300_000 });
    const response = await chat({
      user_id: 'hal',
      model: 'fake-slow',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(response.statusCode).toBe(504);
    expect(response.json<ErrorJson>().error).toMatchObject({
      type: 'upstream_error',
      code: 'upstream_timeout',
    });
    await harness.upstream.settled();
    expect(harness.upstream.requests[0]!.aborted).toBe(true);
  });

  it('ends a stream cut mid-way with an error event and stores nothing of the turn', async () => {
    harness.upstream.enqueue({ kind: 'cut', afterChunks: 3 });
    const response = await chat({
      user_id: 'ivy',
      model: 'fake-slow',
      stream: true,
      messages: [{ role: 'user', content: 'a long answer please' }],
    });
    expect(response.statusCode).toBe(200);
    const events = parseEvents(response.body);
    expect(events[0]!.type).toBe('start');
    expect(events.some((event) => event.type === 'delta')).toBe(true);
    const last = events[events.length - 1]!;
    expect(last).toMatchObject({
      type: 'error',
      error: { type: 'upstream_error', code: 'upstream_error' },
    });
    expect(events.some((event) => event.type === 'end')).toBe(false);
    // A first turn that failed leaves no conversation behind.
    const detail = await harness.app.inject({
      method: 'GET',
      url: `/v1/conversations/${String(events[0]!.conversation_id)}`,
      headers: bearer(harness.adminKey),
    });
    expect(detail.statusCode).toBe(404);
    const listed = await harness.app.inject({
      method: 'GET',
      url: '/v1/conversations?user_id=ivy',
      headers: bearer(harness.adminKey),
    });
    expect(listed.json<{ total: number }>().total).toBe(0);
  });

  it('aborts the upstream call when the client hangs up before the answer', async () => {
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = harness.app.server.address() as AddressInfo;
    harness.upstream.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    // The client's own connection pool: an aborted fetch leaves its socket open for the pool's
    // keep-alive time (4 s), which the app's close would wait out; it is closed at the end.
    const client = new Agent();
    const pending = fetch(`http://127.0.0.1:${port}/v1/chat`, {
      method: 'POST',
      headers: { ...bearer(harness.adminKey), 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: 'jack',
        model: 'fake-slow',
        messages: [{ role: 'user', content: 'x' }],
      }),
      signal: controller.signal,
      dispatcher: client,
    }).catch((error: unknown) => error);
    try {
      await harness.upstream.waitForRequests(1);
      controller.abort();
      await pending;
      await harness.upstream.settled();
      expect(harness.upstream.requests[0]!.aborted).toBe(true);
      expect(harness.upstream.requests).toHaveLength(1);
    } finally {
      await client.destroy();
    }
  });
});

describe.each(allDialects)('a streamed chat whose client hangs up mid-way on $name', (dialect) => {
  it('aborts the upstream stream and stores nothing', async () => {
    const harness = await startChatHarness({
      dialect,
      upstream: { chunkDelayMs: 50 },
    });
    try {
      await harness.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = harness.app.server.address() as AddressInfo;
      harness.upstream.enqueue({ kind: 'reply', content: words(200, 'w') });
      const body = JSON.stringify({
        user_id: 'kim',
        model: 'fake-slow',
        stream: true,
        messages: [{ role: 'user', content: 'x' }],
      });
      // A hang-up as the service sees one: the socket closes after the first event arrived.
      const start = await new Promise<Record<string, unknown>>((resolve, reject) => {
        const outgoing = request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/v1/chat',
            headers: {
              ...bearer(harness.adminKey),
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
            },
          },
          (incoming) => {
            incoming.once('data', (chunk: Buffer) => {
              outgoing.destroy();
              resolve(parseEvents(chunk.toString())[0]!);
            });
          },
        );
        outgoing.on('error', reject);
        outgoing.end(body);
      });
      expect(start.type).toBe('start');
      await harness.upstream.settled();
      expect(harness.upstream.requests[0]!.aborted).toBe(true);
      expect(harness.upstream.requests[0]!.chunksSent).toBeLessThan(100);
      // The abandoned first turn left no conversation behind.
      const detail = await harness.app.inject({
        method: 'GET',
        url: `/v1/conversations/${String(start.conversation_id)}`,
        headers: bearer(harness.adminKey),
      });
      expect(detail.statusCode).toBe(404);
    } finally {
      await harness.close();
    }
  });
});

describe.each(allDialects)('chat without the provider key on $name', (dialect) => {
  it('lists the model as unavailable with the reason, and answers 503 saying how to fix it', async () => {
    const harness = await startTestApp({
      dialect,
      overrides: fakeModelCatalog('http://127.0.0.1:9/v1'),
    });
    try {
      const models = await harness.app.inject({
        method: 'GET',
        url: '/v1/models',
        headers: bearer(harness.adminKey),
      });
      const entry = models
        .json<{ data: Array<{ id: string; available: boolean; unavailable_reason: string }> }>()
        .data.find((model) => model.id === 'fake-chat');
      // The spec's `provider` is the maker; how the service reaches the model is `connection`.
      expect(entry).toMatchObject({
        available: false,
        provider: 'OpenAI',
        owned_by: 'OpenAI',
        connection: 'openai-compatible',
        type: 'chat',
      });
      expect(entry!.unavailable_reason).toContain('FAKE_UPSTREAM_KEY');
      const response = await harness.app.inject({
        method: 'POST',
        url: '/v1/chat',
        headers: bearer(harness.adminKey),
        payload: { user_id: 'u', messages: [{ role: 'user', content: 'x' }] },
      });
      expect(response.statusCode).toBe(503);
      expect(response.json<ErrorJson>().error).toMatchObject({
        type: 'upstream_error',
        code: 'model_unavailable',
      });
      expect(response.json<ErrorJson>().error.message).toContain('FAKE_UPSTREAM_KEY');
    } finally {
      await harness.close();
    }
  });
});
