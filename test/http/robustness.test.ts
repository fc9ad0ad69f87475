// What one request must never do to the service: hold the event loop (token counting on a long
// run of one character: measured against 1 MB of words, never against a wall-clock bound), grow
// memory without bound, or get past validation with input the databases refuse.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BpeTokenCounter, tokenCacheBytes } from '../../src/models/bpe-token-counter.js';
import { startChatHarness, type ChatHarness } from '../support/chat-harness.js';
import { allDialects } from '../support/dialects.js';
import { allowedBlockMs, measureLoopBlock, remeasured } from '../support/loop-block.js';
import { bearer } from '../support/test-app.js';

describe.each(allDialects)(
  'one request cannot take the service down ($name)',
  remeasured,
  (dialect) => {
    let harness: ChatHarness;
    let baseUrl: string;
    beforeAll(async () => {
      harness = await startChatHarness({
        dialect,
        overrides: {
          models: [
            {
              provider: 'openai-compatible',
              name: 'wide',
              model: 'gpt-4o-mini',
              base_url: 'http://127.0.0.1:9/v1',
              api_key_env: 'FAKE_UPSTREAM_KEY',
              max_tokens: 256,
              context_length: 2_000_000,
              max_retries: 0,
            },
          ],
          default_model: 'wide',
        },
      });
      await harness.app.listen({ host: '127.0.0.1', port: 0 });
      baseUrl = `http://127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await harness.close();
    });

    it.each([
      ['/v1/chat', (content: string) => ({ user_id: 'u', messages: [{ role: 'user', content }] })],
      [
        '/chat/completions',
        (content: string) => ({
          model: 'wide',
          user_id: 'u',
          messages: [{ role: 'user', content }],
        }),
      ],
    ])(
      'holds the event loop no longer for a 1 MB run of one character than for 1 MB of words (%s)',
      async (path, body) => {
        const send = (content: string) =>
          fetch(`${baseUrl}${path}`, {
            method: 'POST',
            headers: { ...bearer(harness.adminKey), 'content-type': 'application/json' },
            body: JSON.stringify(body(content)),
          }).then((response) => response.arrayBuffer());
        await send('warm up');
        const control = await measureLoopBlock(() => send('word '.repeat(200_000)));
        const hostile = await measureLoopBlock(() => send('a'.repeat(1_000_000)));
        expect(hostile.maxBlockMs).toBeLessThan(allowedBlockMs(control.maxBlockMs, hostile));
      },
    );
  },
);

describe('the token-count cache', () => {
  it('stays within its byte budget whatever the texts weigh', async () => {
    const counter = new BpeTokenCounter();
    for (let index = 0; index < 40; index += 1) {
      await counter.countText(`${index} ${'word '.repeat(180_000)}`);
    }
    // 40 texts of 900 KB are held as digests: a few kilobytes, far under the budget.
    expect(counter.cachedBytes).toBeLessThan(40 * 200);
    expect(counter.cachedBytes).toBeLessThanOrEqual(tokenCacheBytes);
    const small = new BpeTokenCounter(64 * 1024);
    for (let index = 0; index < 5_000; index += 1) await small.countText(`short text ${index}`);
    expect(small.cachedBytes).toBeGreaterThan(60 * 1024);
    expect(small.cachedBytes).toBeLessThanOrEqual(64 * 1024);
  });
});

interface ErrorJson {
  error: { message: string; type: string; code: string; param: string | null };
}

describe.each(allDialects)('input no database can store is refused up front ($name)', (dialect) => {
  let harness: ChatHarness;
  const lists = [
    '/v1/api-keys',
    '/v1/accounts',
    '/v1/conversations?user_id=u',
    '/v1/knowledge-bases',
    '/v1/agents',
    '/v1/pipelines',
  ];
  beforeAll(async () => {
    harness = await startChatHarness({ dialect });
  });
  afterAll(async () => {
    await harness.close();
  });

  const send = (method: 'POST' | 'GET' | 'PATCH', url: string, payload?: string) =>
    harness.app.inject({
      method,
      url,
      headers: { ...bearer(harness.adminKey), 'content-type': 'application/json' },
      ...(payload === undefined ? {} : { payload }),
    });

  const expect400 = (
    response: Awaited<ReturnType<typeof send>>,
    param: string | null | RegExp,
    words: RegExp,
  ) => {
    expect(response.statusCode, response.body).toBe(400);
    const { error } = response.json<ErrorJson>();
    expect(error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_parameter',
      param,
    });
    expect(error.message).toMatch(words);
  };

  it('refuses a NUL character in any string field, naming it, before the model is called', async () => {
    const chat = await send(
      'POST',
      '/v1/chat',
      JSON.stringify({ user_id: 'u', messages: [{ role: 'user', content: 'hi\u0000there' }] }),
    );
    expect400(chat, 'messages[0].content', /NUL/);
    expect(harness.upstream.requests).toHaveLength(0);
    const conversation = await send(
      'POST',
      '/v1/conversations',
      JSON.stringify({ title: 'ok', metadata: { note: { deep: 'x\u0000' } } }),
    );
    expect400(conversation, 'metadata.note.deep', /NUL/);
    const key = await send('POST', '/v1/api-keys', JSON.stringify({ 'na\u0000me': 'x' }));
    expect400(key, 'na\u0000me', /key that contains a NUL/);
  });

  it('refuses a lone surrogate in metadata', async () => {
    const response = await send(
      'POST',
      '/v1/conversations',
      '{"title":"t","metadata":{"label":"\\ud800 alone"}}',
    );
    expect400(response, 'metadata.label', /lone surrogate/);
  });

  it('refuses %00 in a path id and in a query value', async () => {
    expect400(await send('GET', '/v1/conversations/conv_%00abc'), 'conversation_id', /NUL/);
    expect400(await send('GET', '/v1/agents/agent_x%00'), 'agent_id', /NUL/);
    expect400(await send('GET', '/v1/conversations?user_id=a%00b'), 'user_id', /NUL/);
  });

  it('refuses numbers that are not finite or too large, on every list', async () => {
    for (const list of lists) {
      const joiner = list.includes('?') ? '&' : '?';
      for (const offset of ['1e999', 'Infinity', '99999999999999999999', '-1', 'NaN']) {
        const response = await send('GET', `${list}${joiner}offset=${offset}`);
        expect(response.statusCode, `${list} offset=${offset}: ${response.body}`).toBe(400);
        expect(response.json<ErrorJson>().error.param).toBe('offset');
      }
    }
    const body = await send(
      'POST',
      '/v1/feedback',
      '{"conversation_id":"conv_x","message_id":"msg_x","feedback_type":"rating","feedback_value":1e999}',
    );
    expect400(body, 'feedback_value', /finite/);
  });

  it('refuses JSON nested deeper than 32 levels, wherever it is', async () => {
    const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
    const agent = await send(
      'POST',
      '/v1/agents',
      `{"name":"n","agent_type":"GenerationAgent","configuration":${deep(2000)}}`,
    );
    expect400(agent, /^configuration(\.a)+$/, /nested deeper than 32/);
    const metadata = await send('POST', '/v1/conversations', `{"metadata":${deep(40)}}`);
    expect(metadata.statusCode).toBe(400);
    const shallow = await send('POST', '/v1/conversations', `{"metadata":${deep(20)}}`);
    expect(shallow.statusCode, shallow.body).toBe(201);
  });
});
