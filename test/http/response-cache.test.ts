// The exact response cache (issue 32), over HTTP on both databases: the same request in another key
// order is a hit; another account, another tool list, or Cache-Control: no-cache is a miss; a
// request that samples is not kept unless it names a seed; a streamed hit is replayed as chunks
// that validate against OpenAI's chunk schema; the ledger shows a hit with cache_hit at cost 0.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { allDialects, redisTestUrl } from '../support/dialects.js';
import { openAISchemas } from '../support/openai-schemas.js';
import { redisReachable } from '../support/redis.js';
import { bearer, createAccount, startTestApp, type TestApp } from '../support/test-app.js';

const upstreamKey = 'sk-cache-upstream';

describe.each(allDialects)('the exact response cache ($name)', (dialect) => {
  let upstream: FakeUpstream;
  let harness: TestApp;
  let otherKey = '';

  beforeAll(async () => {
    upstream = await startFakeUpstream({ requireApiKey: upstreamKey });
    harness = await startTestApp({
      dialect,
      env: { FAKE_UPSTREAM_KEY: upstreamKey },
      overrides: {
        cache: { enabled: true, ttl_s: 600 },
        models: [
          {
            name: 'cached',
            provider: 'openai-compatible',
            base_url: upstream.baseUrl,
            api_key_env: 'FAKE_UPSTREAM_KEY',
            model: 'gpt-4o-mini',
            max_tokens: 256,
            context_length: 4096,
            structured_outputs: true,
            pricing: { input_per_mtok: 1, output_per_mtok: 2 },
          },
          {
            name: 'uncached',
            provider: 'openai-compatible',
            base_url: upstream.baseUrl,
            api_key_env: 'FAKE_UPSTREAM_KEY',
            model: 'gpt-4o-mini',
            cache: { enabled: false },
          },
        ],
      },
    });
    otherKey = (await createAccount(harness.app, harness.adminKey, 'other')).admin_key;
  });
  afterAll(async () => {
    await harness.close();
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  const calls = () => upstream.requests.filter((request) => request.endpoint === 'chat').length;

  /** POSTs `body` exactly as written (its key order is the client's). */
  const post = (body: string, key = harness.adminKey, headers: Record<string, string> = {}) =>
    harness.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { ...bearer(key), 'content-type': 'application/json', ...headers },
      payload: body,
    });

  const tool = (name: string) => ({
    type: 'function',
    function: { name, parameters: { type: 'object', properties: { city: { type: 'string' } } } },
  });

  it('answers the same request in another key order from the cache, once asked upstream', async () => {
    const first = await post(
      JSON.stringify({
        model: 'cached',
        temperature: 0,
        messages: [{ role: 'user', content: 'order one' }],
        tools: [tool('weather')],
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'x',
            schema: {
              type: 'object',
              properties: { a: { type: 'string' }, b: { type: 'number' } },
            },
          },
        },
      }),
    );
    expect(first.statusCode, first.body).toBe(200);
    expect(first.headers['x-cache']).toBe('miss');
    const second = await post(
      JSON.stringify({
        response_format: {
          json_schema: {
            schema: {
              properties: { b: { type: 'number' }, a: { type: 'string' } },
              type: 'object',
            },
            name: 'x',
          },
          type: 'json_schema',
        },
        tools: [
          {
            function: {
              parameters: { properties: { city: { type: 'string' } }, type: 'object' },
              name: 'weather',
            },
            type: 'function',
          },
        ],
        messages: [{ content: 'order one', role: 'user' }],
        temperature: 0,
        model: 'cached',
      }),
    );
    expect(second.statusCode, second.body).toBe(200);
    expect(second.headers['x-cache']).toBe('hit');
    expect(calls()).toBe(1);
    const answer = (response: typeof first) =>
      response.json<{ choices: { message: unknown }[] }>().choices[0]!.message;
    expect(answer(second)).toEqual(answer(first));
  });

  it('misses for another account, another tool list, and Cache-Control: no-cache', async () => {
    const body = (tools: string[]) =>
      JSON.stringify({
        model: 'cached',
        temperature: 0,
        messages: [{ role: 'user', content: 'shared question' }],
        tools: tools.map(tool),
      });
    expect((await post(body(['a']))).headers['x-cache']).toBe('miss');
    expect((await post(body(['a']))).headers['x-cache']).toBe('hit');
    expect(calls()).toBe(1);
    const other = await post(body(['a']), otherKey);
    expect(other.statusCode, other.body).toBe(200);
    expect(other.headers['x-cache']).toBe('miss');
    expect((await post(body(['a', 'b']))).headers['x-cache']).toBe('miss');
    const fresh = await post(body(['a']), harness.adminKey, { 'cache-control': 'no-cache' });
    expect(fresh.headers['x-cache']).toBe('miss');
    expect(calls()).toBe(4);
  });

  it('keeps a sampled answer only when the request names a seed; a model may opt out', async () => {
    const sampled = (seed?: number) =>
      JSON.stringify({
        model: 'cached',
        temperature: 0.7,
        ...(seed === undefined ? {} : { seed }),
        messages: [{ role: 'user', content: 'a poem' }],
      });
    await post(sampled());
    expect((await post(sampled())).headers['x-cache']).toBe('miss');
    await post(sampled(7));
    expect((await post(sampled(7))).headers['x-cache']).toBe('hit');
    expect(calls()).toBe(3);
    const plain = JSON.stringify({
      model: 'uncached',
      temperature: 0,
      messages: [{ role: 'user', content: 'x' }],
    });
    await post(plain);
    const again = await post(plain);
    expect(again.headers['x-cache']).toBeUndefined();
    expect(calls()).toBe(5);
  });

  it('replays a streamed answer as OpenAI chunks, and records the hit at cost 0', async () => {
    const schemas = openAISchemas();
    const body = JSON.stringify({
      model: 'cached',
      temperature: 0,
      stream: true,
      messages: [{ role: 'user', content: 'stream me a few words please' }],
    });
    const chunksOf = (text: string) =>
      text
        .split('\n')
        .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
        .map((line) => JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[] });
    const { ledger } = harness.services.usageLedger;
    const records = () =>
      harness.services.storage.db
        .selectFrom('usage_records')
        .select(['id', 'cache_hit', 'cost_micros', 'status', 'output_tokens'])
        .where('model', '=', 'cached')
        .execute();
    await ledger.flush();
    const earlier = new Set((await records()).map((row) => row.id));
    const first = await post(body);
    expect(first.headers['x-cache']).toBe('miss');
    const second = await post(body);
    expect(second.headers['x-cache']).toBe('hit');
    expect(calls()).toBe(1);
    const replayed = chunksOf(second.body);
    expect(replayed.length).toBeGreaterThan(3);
    for (const chunk of replayed) {
      expect(schemas.problems('CreateChatCompletionStreamResponse', chunk)).toEqual([]);
    }
    const text = (chunks: typeof replayed) =>
      chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text(replayed)).toBe(text(chunksOf(first.body)));
    expect(text(replayed)).toBe('Echo: stream me a few words please');
    expect(second.body.trimEnd().endsWith('data: [DONE]')).toBe(true);

    // The two calls' records, told apart by what they say rather than by their order: the streamed
    // miss is recorded when its stream ends, which on a loaded machine can come after the hit's.
    let rows: Awaited<ReturnType<typeof records>> = [];
    for (;;) {
      await ledger.flush();
      rows = (await records()).filter((row) => !earlier.has(row.id));
      if (rows.length >= 2) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(rows).toHaveLength(2);
    const hit = rows.find((row) => Boolean(row.cache_hit));
    const miss = rows.find((row) => !row.cache_hit);
    expect(hit).toBeDefined();
    expect(miss).toBeDefined();
    expect(Boolean(hit!.cache_hit)).toBe(true);
    expect(Number(hit!.cost_micros)).toBe(0);
    expect(hit!.status).toBe('ok');
    expect(Boolean(miss!.cache_hit)).toBe(false);
    expect(Number(miss!.cost_micros)).toBeGreaterThan(0);
    expect(Number(hit!.output_tokens)).toBe(Number(miss!.output_tokens));
  });
});

describe('the response cache in Redis, shared by two instances', async () => {
  const reachable = await redisReachable('response-cache.test.ts');
  const dialect = allDialects[0]!;
  it.runIf(reachable)('answers on one instance what the other asked upstream', async () => {
    const upstream = await startFakeUpstream({ requireApiKey: upstreamKey });
    const database = await dialect.create({ migrated: true });
    const env = {
      FAKE_UPSTREAM_KEY: upstreamKey,
      REDIS_URL: redisTestUrl,
      REDIS_KEY_PREFIX: `test-cache-${randomBytes(6).toString('hex')}`,
    };
    const overrides = {
      cache: { enabled: true },
      models: [
        {
          name: 'cached',
          provider: 'openai-compatible' as const,
          base_url: upstream.baseUrl,
          api_key_env: 'FAKE_UPSTREAM_KEY',
          model: 'gpt-4o-mini',
        },
      ],
    };
    const first = await startTestApp({ dialect, database, env, overrides });
    const second = await startTestApp({
      dialect,
      database,
      env,
      overrides,
      adminKey: first.adminKey,
    });
    try {
      const ask = (app: TestApp) =>
        app.app.inject({
          method: 'POST',
          url: '/v1/chat/completions',
          headers: bearer(app.adminKey),
          payload: { model: 'cached', seed: 1, messages: [{ role: 'user', content: 'shared' }] },
        });
      expect((await ask(first)).headers['x-cache']).toBe('miss');
      // Kept without waiting for the client: wait for the write, not for a time.
      for (;;) {
        const answer = await ask(second);
        if (answer.headers['x-cache'] === 'hit') break;
      }
      expect(
        upstream.requests.filter((request) => request.endpoint === 'chat').length,
      ).toBeLessThanOrEqual(3);
    } finally {
      await first.close();
      await second.close();
      await database.drop();
      await upstream.close();
    }
  });
});
