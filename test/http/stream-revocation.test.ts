// Answers that outlive a request end when their key is revoked, on both dialects: a streamed
// /v1/chat ends with an `error` event carrying revoked_api_key, /chat/completions with a last chunk
// carrying it, whether the key was revoked on this instance or on another sharing the database;
// a followed execution's event stream ends with an `error` event; a /v1/ws socket closes with
// 4401. The fake provider streams slowly (or, for the execution, never answers), far longer than
// the test runs: only the revocation can end these streams, and only the test's own timeout bounds
// waiting.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeCodes } from '../../src/modules/voice/realtime/close-codes.js';
import { allDialects } from '../support/dialects.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { bearer, createKey, startTestApp, type TestApp } from '../support/test-app.js';
import { connect } from '../support/ws-client.js';

/** Reads a Server-Sent Events body as it arrives; `next()` answers the next `data:` payload. */
function eventReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  return {
    /** The next event's data, or null once the stream has ended. */
    async next(): Promise<string | null> {
      for (;;) {
        const end = buffered.indexOf('\n\n');
        if (end !== -1) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (frame.startsWith('data: ')) return frame.slice('data: '.length);
          continue;
        }
        const { done, value } = await reader.read();
        if (done) return null;
        buffered += decoder.decode(value, { stream: true });
      }
    },
  };
}

async function rest(events: ReturnType<typeof eventReader>): Promise<string[]> {
  const all: string[] = [];
  for (let data = await events.next(); data !== null; data = await events.next()) all.push(data);
  return all;
}

describe.each(allDialects)('streams and sockets of a revoked key ($name)', (dialect) => {
  let upstream: FakeUpstream;
  let harness: TestApp;
  let other: TestApp;
  let base: string;
  const endless = () =>
    upstream.enqueue({
      kind: 'reply',
      chunks: Array.from({ length: 10_000 }, (_, index) => `word${index} `),
    });

  beforeAll(async () => {
    // After the first two events, one every 200 ms: 10,000 of them would take half an hour.
    upstream = await startFakeUpstream({ chunkDelayMs: 200 });
    const overrides = {
      default_model: 'slow',
      models: [
        {
          name: 'slow',
          provider: 'openai-compatible' as const,
          model: 'gpt-4o-mini',
          base_url: upstream.baseUrl,
          max_tokens: 100_000,
          context_length: 200_000,
          max_retries: 0,
          timeout_ms: 3_600_000,
          idle_timeout_ms: 600_000,
        },
      ],
    };
    harness = await startTestApp({ dialect, overrides });
    other = await startTestApp({
      dialect,
      database: harness.database,
      adminKey: harness.adminKey,
      overrides,
    });
    await harness.app.listen({ port: 0, host: '127.0.0.1' });
    base = `127.0.0.1:${(harness.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await other.app.close();
    await other.services.close();
    await harness.close();
    await upstream.close();
  });

  const revoke = async (instance: TestApp, keyId: string) => {
    const response = await instance.app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${keyId}`,
      headers: bearer(harness.adminKey),
    });
    expect(response.statusCode, response.body).toBe(200);
  };

  const open = async (path: string, key: string, body: Record<string, unknown>) => {
    const response = await fetch(`http://${base}${path}`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
    });
    expect(response.status).toBe(200);
    return eventReader(response.body!);
  };

  for (const where of ['this instance', 'another instance'] as const) {
    it(`ends a streamed /v1/chat with an error event when the key is revoked on ${where}`, async () => {
      const { id, key } = await createKey(harness.app, harness.adminKey, {
        scopes: ['chat:write'],
      });
      endless();
      const events = await open('/v1/chat', key, {
        user_id: 'u',
        messages: [{ role: 'user', content: 'Talk forever' }],
      });
      expect(JSON.parse((await events.next())!)).toMatchObject({ type: 'start' });
      expect(JSON.parse((await events.next())!)).toMatchObject({ type: 'delta' });
      await revoke(where === 'this instance' ? harness : other, id);
      const after = (await rest(events)).map((data) => JSON.parse(data) as Record<string, unknown>);
      expect(after.at(-1)).toMatchObject({
        type: 'error',
        error: { type: 'authentication_error', code: 'revoked_api_key' },
      });
      expect(after.filter((event) => event.type === 'end')).toEqual([]);
    });

    it(`ends a streamed /chat/completions with the error chunk when the key is revoked on ${where}`, async () => {
      const { id, key } = await createKey(harness.app, harness.adminKey, {
        scopes: ['chat:write'],
      });
      endless();
      const events = await open('/v1/chat/completions', key, {
        model: 'slow',
        messages: [{ role: 'user', content: 'Talk forever' }],
      });
      expect(JSON.parse((await events.next())!)).toMatchObject({
        object: 'chat.completion.chunk',
      });
      await revoke(where === 'this instance' ? harness : other, id);
      const after = await rest(events);
      expect(after.at(-1)).toBe('[DONE]');
      expect(JSON.parse(after.at(-2)!)).toMatchObject({
        error: { type: 'authentication_error', code: 'revoked_api_key' },
      });
    });
  }

  it('ends a followed execution with an error event when another instance revokes its key', async () => {
    const { id, key } = await createKey(harness.app, harness.adminKey, { scopes: ['agents:read'] });
    const post = async (url: string, payload: Record<string, unknown>, status: number) => {
      const response = await harness.app.inject({
        method: 'POST',
        url,
        headers: bearer(harness.adminKey),
        payload,
      });
      expect(response.statusCode, response.body).toBe(status);
      return response.json<Record<string, string>>();
    };
    const writer = await post(
      '/v1/agents',
      { name: 'writer', agent_type: 'GenerationAgent', configuration: {} },
      201,
    );
    const pipeline = await post(
      '/v1/pipelines',
      {
        name: 'waits',
        stages: [{ name: 'write', agent_id: writer.id, input_mapping: { query: '$.input.query' } }],
      },
      201,
    );
    // The stage's model call gets no answer: the execution is still running when the key goes.
    upstream.enqueue({ kind: 'hang' });
    const run = await post(
      `/v1/pipelines/${pipeline.pipeline_id}/execute`,
      { query: 'Hello', async: true },
      202,
    );
    const response = await fetch(`http://${base}/v1/executions/${run.execution_id}/events`, {
      headers: bearer(key),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const events = eventReader(response.body!);
    expect(JSON.parse((await events.next())!)).toMatchObject({
      type: 'stage-start',
      stage: 'write',
    });
    await revoke(other, id);
    const after = (await rest(events)).map((data) => JSON.parse(data) as Record<string, unknown>);
    expect(after).toEqual([
      {
        type: 'error',
        error: expect.objectContaining({
          type: 'authentication_error',
          code: 'revoked_api_key',
        }) as unknown,
      },
    ]);
  });

  it('closes a /v1/ws socket with 4401 when another instance revokes its key', async () => {
    const { id, key } = await createKey(harness.app, harness.adminKey, { scopes: ['chat:write'] });
    const socket = await connect(`ws://${base}/v1/ws`, bearer(key));
    socket.sendJson({ type: 'init' });
    await socket.next('ready');
    endless();
    socket.sendJson({ type: 'text', text: 'Talk forever' });
    await socket.next('text_response');
    await revoke(other, id);
    const closed = await socket.closed;
    expect(closed.code).toBe(closeCodes.credentialsInvalid);
  });
});
