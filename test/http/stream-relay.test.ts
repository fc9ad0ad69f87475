// A stateless Chat Completions stream over an OpenAI-compatible upstream is relayed as the upstream
// sent it (issue 32: the hot path), on both databases: its own fields (service_tier, its ids) reach
// the client under the platform's model name, every chunk valid against OpenAI's schema, the usage
// still in the ledger; a stored stream, or one the response cache keeps, is the platform's own; an
// upstream that sends no usage still gives a client that asked for it a usage chunk, counted here.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { openAISchemas } from '../support/openai-schemas.js';
import { bearer, metricLine, startTestApp, type TestApp } from '../support/test-app.js';

type Chunk = Record<string, unknown> & { usage?: Record<string, number> | null };

/** The JSON of each `data:` event of an event stream, and whether `[DONE]` ended it. */
function chunksOf(body: string): { chunks: Chunk[]; done: boolean } {
  const data = body
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => frame.slice('data: '.length));
  return {
    chunks: data.filter((item) => item !== '[DONE]').map((item) => JSON.parse(item) as Chunk),
    done: data.at(-1) === '[DONE]',
  };
}

describe.each(allDialects)('Chat Completions streams relayed as they came ($name)', (dialect) => {
  let upstream: FakeUpstream;
  let harness: TestApp;
  const schemas = openAISchemas();

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    const model = {
      provider: 'openai-compatible' as const,
      base_url: upstream.baseUrl,
      model: 'gpt-4o-mini',
      max_tokens: 256,
      context_length: 4096,
      pricing: { input_per_mtok: 1, output_per_mtok: 2 },
    };
    harness = await startTestApp({
      dialect,
      overrides: {
        models: [
          { name: 'relayed', ...model },
          { name: 'kept', ...model, cache: { enabled: true, ttl_s: 600 } },
        ],
      },
    });
  });
  afterAll(async () => {
    await harness.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  const stream = async (body: Record<string, unknown>) => {
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { ...bearer(harness.adminKey), 'content-type': 'application/json' },
      payload: { model: 'relayed', stream: true, ...body },
    });
    expect(response.statusCode, response.body).toBe(200);
    return chunksOf(response.body);
  };
  const ledger = async () => {
    await harness.services.usageLedger.ledger.flush();
    return harness.services.storage.db
      .selectFrom('usage_records')
      .select(['model', 'input_tokens', 'output_tokens', 'status'])
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
  };
  const expectValid = (chunks: Chunk[]) => {
    for (const chunk of chunks) {
      expect(schemas.problems('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
    }
  };

  it("relays the upstream's chunks under the platform's model name, usage counted", async () => {
    const { chunks, done } = await stream({
      messages: [{ role: 'user', content: 'one two three' }],
    });
    expect(done).toBe(true);
    expectValid(chunks);
    // The upstream's own fields and id in every chunk: its events, not the platform's.
    expect(chunks.every((chunk) => chunk.service_tier === 'default')).toBe(true);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks.every((chunk) => chunk.model === 'relayed')).toBe(true);
    expect(chunks.some((chunk) => 'usage' in chunk)).toBe(false);
    const text = chunks
      .map((chunk) => (chunk.choices as Array<{ delta: { content?: string } }>)[0]?.delta.content)
      .join('');
    expect(text).toBe('Echo: one two three');
    // The platform asked for the usage, and metered it.
    expect(
      (upstream.requests[0]!.body as { stream_options?: unknown }).stream_options,
    ).toMatchObject({ include_usage: true });
    expect(await ledger()).toMatchObject({ model: 'relayed', status: 'ok' });
    expect(Number((await ledger()).output_tokens)).toBeGreaterThan(0);
  });

  it("goes out with the reply's headers and is counted once it has finished", async () => {
    const counted = async () => {
      const line = await metricLine(
        harness,
        (text) =>
          text.startsWith('platform_http_requests_total{') &&
          text.includes('route="/v1/chat/completions"') &&
          text.includes('status="200"'),
      );
      return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    const before = await counted();
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: {
        ...bearer(harness.adminKey),
        'content-type': 'application/json',
        'x-request-id': 'req_streamheaders1',
      },
      payload: { model: 'relayed', stream: true, messages: [{ role: 'user', content: 'a b' }] },
    });
    expect(response.statusCode).toBe(200);
    // Set on Fastify's reply before the stream opened, written with it.
    expect(response.headers['x-request-id']).toBe('req_streamheaders1');
    expect(response.headers['x-ratelimit-limit-requests']).toBeDefined();
    expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.headers['x-accel-buffering']).toBe('no');
    expect(chunksOf(response.body).done).toBe(true);
    // The onResponse hooks ran when it finished: the request is counted under its route.
    expect(await counted()).toBe(before + 1);
  });

  it("relays the upstream's usage chunk to a client that asked for it", async () => {
    const { chunks } = await stream({
      messages: [{ role: 'user', content: 'count me' }],
      stream_options: { include_usage: true },
    });
    expectValid(chunks);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.service_tier).toBe('default');
    const row = await ledger();
    expect(last.usage).toMatchObject({
      prompt_tokens: Number(row.input_tokens),
      completion_tokens: Number(row.output_tokens),
    });
  });

  it('writes the usage chunk itself when the upstream sends none', async () => {
    upstream.enqueue({ kind: 'reply', streamUsage: false });
    const { chunks, done } = await stream({
      messages: [{ role: 'user', content: 'no usage upstream' }],
      stream_options: { include_usage: true },
    });
    expect(done).toBe(true);
    expectValid(chunks);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.model).toBe('relayed');
    expect(last.id).toBe(chunks[0]!.id);
    const row = await ledger();
    expect(row.status).toBe('ok');
    // Counted here: the prompt by the tokenizer, the answer from the relayed text.
    expect(Number(row.output_tokens)).toBeGreaterThan(0);
    expect(last.usage).toEqual({
      prompt_tokens: Number(row.input_tokens),
      completion_tokens: Number(row.output_tokens),
      total_tokens: Number(row.input_tokens) + Number(row.output_tokens),
    });
  });

  it("answers a stored stream with the platform's own chunks (its text is kept)", async () => {
    const { chunks } = await stream({
      messages: [{ role: 'user', content: 'keep this' }],
      user_id: 'relay-user',
    });
    expectValid(chunks);
    expect(chunks.some((chunk) => 'service_tier' in chunk)).toBe(false);
    expect(chunks[0]).toHaveProperty('conversation_id');
  });

  it("answers a stream the response cache keeps with the platform's own chunks, then replays it", async () => {
    const body = { model: 'kept', temperature: 0, messages: [{ role: 'user', content: 'cache' }] };
    const first = await stream(body);
    const second = await stream(body);
    for (const { chunks } of [first, second]) {
      expectValid(chunks);
      expect(chunks.some((chunk) => 'service_tier' in chunk)).toBe(false);
    }
    expect(upstream.requests.filter((request) => request.endpoint === 'chat')).toHaveLength(1);
  });
});
