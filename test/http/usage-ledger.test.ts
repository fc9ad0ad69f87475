// The usage ledger over real HTTP on both databases, driven by the official clients over fakes
// that report usage with cached tokens: each route writes exactly one record per model call, with
// the tokens the provider reported and the cost to the micro-dollar at the model's prices; a
// streamed call whose client did not ask for usage is counted all the same, and its client sees
// no usage chunk; an agent's tool loop records one per model turn; a model without a price records
// its cost as unknown.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { startFakeVendor, type FakeVendor } from '../support/fake-vendors.js';
import { bearer, createKey } from '../support/test-app.js';
import { connect } from '../support/ws-client.js';

const numbersWav = new URL('../fixtures/audio/numbers.wav', import.meta.url);

interface LedgerRow {
  account_id: string;
  api_key_id: string | null;
  end_user: string | null;
  route: string;
  model: string;
  provider: string;
  execution_id: string | null;
  input_tokens: number | string;
  output_tokens: number | string;
  cached_input_tokens: number | string;
  cache_write_tokens: number | string;
  reasoning_tokens: number | string;
  status: string;
  cost_micros: number | string | null;
}

/** The reply the fake OpenAI-compatible upstream gives: 1,000 in (400 cached), 200 out (50 reasoning). */
const reportedUsage = {
  kind: 'reply' as const,
  content: 'Priced answer.',
  usage: { prompt_tokens: 1000, completion_tokens: 200 },
  usageDetails: { cached_tokens: 400, reasoning_tokens: 50 },
};
/** At 2.5 / 1.25 cached / 10 USD per million: 600 × 2.5 + 400 × 1.25 + 200 × 10 micro-dollars. */
const reportedCost = 600 * 2.5 + 400 * 1.25 + 200 * 10;

describe.each(allDialects)('the usage ledger on $name', (dialect) => {
  let harness: ChatHarness;
  let anthropicFake: FakeVendor;
  let baseUrl: string;
  let key: { id: string; key: string };
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    anthropicFake = await startFakeVendor('anthropic');
    harness = await startChatHarness({
      dialect,
      env: { ANTHROPIC_FAKE_KEY: anthropicFake.apiKey },
      extraModels: (upstreamUrl) => [
        {
          name: 'priced-chat',
          provider: 'openai-compatible',
          base_url: upstreamUrl,
          model: 'gpt-4o',
          api_key_env: 'FAKE_UPSTREAM_KEY',
          capabilities: ['tools'],
          max_tokens: 256,
          context_length: 8192,
          max_retries: 0,
          pricing: { input_per_mtok: 2.5, cached_input_per_mtok: 1.25, output_per_mtok: 10 },
        },
        {
          name: 'priced-embed',
          provider: 'openai-compatible',
          base_url: upstreamUrl,
          model: 'text-embedding-3-small',
          api_key_env: 'FAKE_UPSTREAM_KEY',
          type: 'embedding',
          max_tokens: 1,
          context_length: 8191,
          pricing: { input_per_mtok: 0.02 },
        },
        // This machine's speech engines, priced to see their use counted.
        {
          name: 'pocketsphinx-en-us',
          provider: 'pocketsphinx',
          model: 'en-us',
          type: 'transcription',
          languages: ['en-US'],
          pricing: { per_audio_minute: 0.006 },
        },
        {
          name: 'espeak-ng',
          provider: 'espeak-ng',
          type: 'speech',
          default_voice: 'en-us',
          pricing: { per_mchar: 15 },
        },
        {
          name: 'claude-priced',
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          base_url: anthropicFake.baseUrl,
          api_key_env: 'ANTHROPIC_FAKE_KEY',
          max_tokens: 512,
          context_length: 100_000,
          max_retries: 0,
          pricing: {
            input_per_mtok: 3,
            cached_input_per_mtok: 0.3,
            cache_write_per_mtok: 3.75,
            output_per_mtok: 15,
          },
        },
      ],
    });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
    key = await createKey(harness.app, harness.adminKey, {
      scopes: [
        'chat:write',
        'models:read',
        'agents:write',
        'agents:read',
        'voice:write',
        'voice:read',
      ],
    });
    openai = new OpenAI({ apiKey: key.key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: key.key, baseURL: baseUrl, maxRetries: 0 });
  });
  afterAll(async () => {
    await harness?.close();
    await anthropicFake?.close();
  });
  beforeEach(() => {
    harness.upstream.reset();
    anthropicFake.reset();
  });

  /** The records written since `since` records were there, oldest first. */
  const ledger = async (): Promise<LedgerRow[]> => {
    await harness.services.usageLedger.ledger.flush();
    return await harness.services.storage.db
      .selectFrom('usage_records')
      .selectAll()
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
  };
  /** What one request added to the ledger. */
  const added = async (request: () => Promise<unknown>): Promise<LedgerRow[]> => {
    const before = (await ledger()).length;
    await request();
    return (await ledger()).slice(before);
  };
  const numbers = (row: LedgerRow) => ({
    input: Number(row.input_tokens),
    output: Number(row.output_tokens),
    cached: Number(row.cached_input_tokens),
    cacheWrite: Number(row.cache_write_tokens),
    reasoning: Number(row.reasoning_tokens),
    cost: row.cost_micros === null ? null : Number(row.cost_micros),
  });

  it('records a chat completion once, with the reported tokens, the end user and the cost to the micro-dollar', async () => {
    harness.upstream.enqueueFor('chat', reportedUsage);
    const rows = await added(() =>
      openai.chat.completions.create({
        model: 'priced-chat',
        messages: [{ role: 'user', content: 'How much?' }],
        user: 'bob',
      }),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      api_key_id: key.id,
      end_user: 'bob',
      route: 'POST /v1/chat/completions',
      model: 'priced-chat',
      provider: 'openai-compatible',
      status: 'ok',
    });
    expect(numbers(rows[0]!)).toEqual({
      input: 1000,
      output: 200,
      cached: 400,
      cacheWrite: 0,
      reasoning: 50,
      cost: reportedCost,
    });
  });

  it('counts a stream whose client did not ask for usage, and shows it no usage chunk', async () => {
    harness.upstream.enqueueFor('chat', reportedUsage);
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    const rows = await added(async () => {
      const stream = await openai.chat.completions.create({
        model: 'priced-chat',
        messages: [{ role: 'user', content: 'Stream it' }],
        stream: true,
      });
      for await (const chunk of stream) chunks.push(chunk);
    });
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((chunk) => chunk.usage === undefined || chunk.usage === null)).toBe(true);
    // The platform asked the upstream for the usage all the same.
    const sent = harness.upstream.requests.find((request) => request.endpoint === 'chat');
    expect((sent?.body as { stream_options?: unknown } | undefined)?.stream_options).toEqual({
      include_usage: true,
    });
    expect(rows).toHaveLength(1);
    expect(numbers(rows[0]!)).toMatchObject({ input: 1000, output: 200, cost: reportedCost });
  });

  it('records /v1/chat, /v1/responses and a translated /v1/messages once each', async () => {
    harness.upstream.enqueueFor('chat', reportedUsage, reportedUsage, reportedUsage);
    const chat = await added(() =>
      harness.app.inject({
        method: 'POST',
        url: '/v1/chat',
        headers: bearer(key.key),
        payload: {
          model: 'priced-chat',
          user_id: 'alice',
          messages: [{ role: 'user', content: 'Hi' }],
        },
      }),
    );
    const responses = await added(() =>
      openai.responses.create({ model: 'priced-chat', input: 'Hi', store: false, user: 'dan' }),
    );
    const messages = await added(() =>
      anthropic.messages.create({
        model: 'priced-chat',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Hi' }],
        metadata: { user_id: 'carol' },
      }),
    );
    for (const [rows, route, user] of [
      [chat, 'POST /v1/chat', 'alice'],
      [responses, 'POST /v1/responses', 'dan'],
      [messages, 'POST /v1/messages', 'carol'],
    ] as const) {
      expect(rows, route).toHaveLength(1);
      expect(rows[0], route).toMatchObject({ route, end_user: user, status: 'ok' });
      expect(numbers(rows[0]!).cost, route).toBe(reportedCost);
    }
  });

  it('records a passed-through Anthropic message with its cache reads at their own rate', async () => {
    anthropicFake.enqueue({
      kind: 'reply',
      text: 'From Claude.',
      inputTokens: 500,
      outputTokens: 100,
      cachedTokens: 300,
    });
    const rows = await added(() =>
      anthropic.messages.create({
        model: 'claude-priced',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    );
    expect(anthropicFake.requests).toHaveLength(1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ route: 'POST /v1/messages', provider: 'anthropic' });
    // Anthropic's input_tokens leaves the cache reads out: 500 + 300 read in all.
    expect(numbers(rows[0]!)).toEqual({
      input: 800,
      output: 100,
      cached: 300,
      cacheWrite: 0,
      reasoning: 0,
      cost: 500 * 3 + 300 * 0.3 + 100 * 15,
    });
  });

  it('records embeddings, and a model without a price with its cost unknown', async () => {
    const embedded = await added(() =>
      openai.embeddings.create({ model: 'priced-embed', input: ['one two three'], user: 'erin' }),
    );
    expect(embedded).toHaveLength(1);
    expect(embedded[0]).toMatchObject({ route: 'POST /v1/embeddings', end_user: 'erin' });
    const { input, cost } = numbers(embedded[0]!);
    expect(input).toBeGreaterThan(0);
    expect(cost).toBe(Math.round(input * 0.02));

    const unpriced = await added(() =>
      openai.chat.completions.create({
        model: 'fake-chat',
        messages: [{ role: 'user', content: 'Free?' }],
      }),
    );
    expect(unpriced).toHaveLength(1);
    expect(unpriced[0]).toMatchObject({ model: 'fake-chat', cost_micros: null });
  });

  it("records each model turn of an agent's tool loop, under its execution", async () => {
    const created = await harness.app.inject({
      method: 'POST',
      url: '/v1/agents',
      headers: bearer(harness.adminKey),
      payload: {
        name: 'calculator',
        agent_type: 'ToolAgent',
        model_id: 'priced-chat',
        configuration: {
          tools: [{ type: 'agent', name: 'helper', agent_id: 'agent_missing' }],
        },
      },
    });
    // The agent tool names an agent the account does not have: the save refuses it.
    expect(created.statusCode).toBe(404);
    const helper = await harness.app.inject({
      method: 'POST',
      url: '/v1/agents',
      headers: bearer(harness.adminKey),
      payload: {
        name: 'helper',
        agent_type: 'GenerationAgent',
        model_id: 'priced-chat',
        configuration: {},
      },
    });
    expect(helper.statusCode, helper.body).toBe(201);
    const helperId = helper.json<{ id: string }>().id;
    const agent = await harness.app.inject({
      method: 'POST',
      url: '/v1/agents',
      headers: bearer(harness.adminKey),
      payload: {
        name: 'asker',
        agent_type: 'ToolAgent',
        model_id: 'priced-chat',
        configuration: { tools: [{ type: 'agent', name: 'helper', agent_id: helperId }] },
      },
    });
    expect(agent.statusCode, agent.body).toBe(201);
    harness.upstream.enqueueFor(
      'chat',
      {
        ...reportedUsage,
        content: undefined,
        toolCalls: [{ id: 'c1', name: 'helper', arguments: '{"query":"help"}' }],
      },
      reportedUsage,
      reportedUsage,
    );
    let executionId = '';
    const rows = await added(async () => {
      const run = await harness.app.inject({
        method: 'POST',
        url: `/v1/agents/${agent.json<{ id: string }>().id}/execute`,
        headers: bearer(key.key),
        payload: { query: 'Ask the helper', user_id: 'fay' },
      });
      expect(run.json<{ success: boolean }>().success, run.body).toBe(true);
      executionId = run.json<{ execution_id: string }>().execution_id;
    });
    // Two turns of the loop and the nested agent's one: three model calls, three records.
    expect(rows).toHaveLength(3);
    const ofRun = rows.filter((row) => row.execution_id === executionId);
    expect(ofRun).toHaveLength(2);
    for (const row of ofRun) {
      expect(row).toMatchObject({
        api_key_id: key.id,
        end_user: 'fay',
        route: 'POST /v1/agents/:agent_id/execute',
      });
      expect(numbers(row).cost).toBe(reportedCost);
    }
  });

  it('records speech by its characters and transcription by the audio’s length, on OpenAI’s routes and /v1/speech', async () => {
    const text = 'one two three four five';
    const spoken = await added(() =>
      openai.audio.speech.create({
        model: 'espeak-ng',
        voice: 'alloy',
        input: text,
        response_format: 'wav',
      }),
    );
    expect(spoken).toHaveLength(1);
    expect(spoken[0]).toMatchObject({ route: 'POST /v1/audio/speech', model: 'espeak-ng' });
    expect(Number((spoken[0] as unknown as { characters: number }).characters)).toBe(text.length);
    expect(numbers(spoken[0]!).cost).toBe(text.length * 15);

    const heard = await added(() =>
      openai.audio.transcriptions.create({
        model: 'pocketsphinx-en-us',
        file: new File([readFileSync(numbersWav)], 'numbers.wav', { type: 'audio/wav' }),
      }),
    );
    expect(heard).toHaveLength(1);
    const audioMs = Number((heard[0] as unknown as { audio_ms: number }).audio_ms);
    expect(audioMs).toBeGreaterThan(1000);
    expect(heard[0]).toMatchObject({ route: 'POST /v1/audio/transcriptions' });
    expect(numbers(heard[0]!).cost).toBe(Math.round(audioMs * 0.1));

    const synthesized = await added(() =>
      harness.app.inject({
        method: 'POST',
        url: '/v1/speech/synthesize',
        headers: bearer(key.key),
        payload: { text: 'Hello there.', model: 'espeak-ng', format: 'wav' },
      }),
    );
    expect(synthesized).toHaveLength(1);
    expect(synthesized[0]).toMatchObject({ route: 'POST /v1/speech/synthesize' });
  });

  it('records a turn of a voice conversation over the WebSocket, under its user', async () => {
    harness.upstream.enqueueFor('chat', reportedUsage);
    const rows = await added(async () => {
      const socket = await connect(`${baseUrl.replace('http', 'ws')}/v1/ws`, bearer(key.key));
      socket.sendJson({ type: 'init', user_id: 'gus', model: 'priced-chat' });
      await socket.next('ready');
      socket.sendJson({ type: 'text', text: 'Hello over the socket.' });
      await socket.next('turn_end');
      socket.close();
      await socket.closed;
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ route: 'GET /v1/ws', end_user: 'gus', api_key_id: key.id });
    expect(numbers(rows[0]!).cost).toBe(reportedCost);
  });
});

describe('the usage ledger switched off (usage.enabled: false)', () => {
  it('writes no record, while an identical service with it on writes one', async () => {
    const recorded: number[] = [];
    for (const enabled of ['true', 'false']) {
      const harness = await startChatHarness({
        dialect: allDialects[0]!,
        env: { USAGE_LEDGER: enabled },
      });
      try {
        const answer = await harness.app.inject({
          method: 'POST',
          url: '/chat/completions',
          headers: bearer(harness.adminKey),
          payload: { messages: [{ role: 'user', content: 'Hello.' }] },
        });
        expect(answer.statusCode, answer.body).toBe(200);
        await harness.services.usageLedger.ledger.flush();
        const rows = await harness.services.storage.db
          .selectFrom('usage_records')
          .select('id')
          .execute();
        recorded.push(rows.length);
      } finally {
        await harness.close();
      }
    }
    expect(recorded).toEqual([1, 0]);
  });
});
