// The lean OpenAI-compatible client (src/models/providers/openai-compatible-chat-model.ts) on the
// wire: against the fake OpenAI upstream for the request it writes and the pooled connection it
// reuses, and against a raw server that sends Server-Sent Events the way real servers do —
// split mid-line across TCP writes, CRLF line ends, content as parts, a refusal, no usage — for
// the hand-written reading of the stream.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RemoteModelDefinition } from '../src/config/config.js';
import { BpeTokenCounter } from '../src/models/bpe-token-counter.js';
import { createRemoteChatModel } from '../src/models/providers/remote-models.js';
import {
  UpstreamError,
  type ChatModel,
  type GenerationRequest,
  type StreamPart,
} from '../src/models/spec.js';
import { startFakeUpstream, type FakeUpstream } from './support/fake-upstream.js';

const apiKey = 'sk-lean-path-test-key';

function modelAt(baseUrl: string, overrides: Partial<RemoteModelDefinition> = {}): ChatModel {
  const definition: RemoteModelDefinition = {
    name: 'lean',
    displayName: 'lean',
    maker: null,
    type: 'chat',
    maxTokens: 512,
    contextLength: 8192,
    fallbacks: [],
    timeoutMs: 5_000,
    idleTimeoutMs: 2_000,
    maxRetries: 0,
    provider: 'openai-compatible',
    model: 'upstream-model-id',
    baseUrl,
    apiKeyEnv: 'LEAN_KEY',
    structuredOutputs: false,
    capabilities: ['tools', 'vision', 'json_schema'],
    routing: {
      inputCostPerMillion: null,
      outputCostPerMillion: null,
      quality: null,
      typicalLatencyMs: null,
    },
    speech: null,
    ...overrides,
  } as RemoteModelDefinition;
  return createRemoteChatModel(
    definition,
    { get: (name) => (name === 'LEAN_KEY' ? apiKey : undefined) },
    new BpeTokenCounter(),
  );
}

function request(overrides: Partial<GenerationRequest> = {}): GenerationRequest {
  return {
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Name a colour.' },
    ],
    maxTokens: 64,
    temperature: 0.2,
    signal: new AbortController().signal,
    fairnessKey: 'acct_test',
    ...overrides,
  };
}

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const collected: StreamPart[] = [];
  for await (const part of parts) collected.push(part);
  return collected;
}

describe('the lean OpenAI-compatible client against the fake upstream', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ requireApiKey: apiKey });
  });
  afterAll(async () => {
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  it("writes the request with the upstream's model id, the key, limits and turns", async () => {
    const model = modelAt(upstream.baseUrl);
    const answer = await model.generate(request());
    expect(answer.text).toBe('Echo: Name a colour.');
    expect(answer.finishReason).toBe('stop');
    expect(answer.usage).toEqual({ promptTokens: 5, completionTokens: 4 });
    await collect(model.stream(request({ temperature: undefined })));
    const [plain, streamed] = upstream.requests;
    expect(plain!.apiKey).toBe(apiKey);
    expect(plain!.body).toEqual({
      model: 'upstream-model-id',
      max_tokens: 64,
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Name a colour.' },
      ],
    });
    expect(streamed!.body).toMatchObject({
      model: 'upstream-model-id',
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(streamed!.body).not.toHaveProperty('temperature');
  });

  it('streams text parts then one finish with the usage the upstream reported', async () => {
    const parts = await collect(modelAt(upstream.baseUrl).stream(request()));
    const text = parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
    expect(text).toBe('Echo: Name a colour.');
    expect(parts[parts.length - 1]).toEqual({
      type: 'finish',
      finishReason: 'stop',
      usage: { promptTokens: 5, completionTokens: 4 },
    });
  });

  it('maps a 429 to model_unavailable with the retry-after it was given', async () => {
    upstream.enqueue({ kind: 'error', status: 429, headers: { 'retry-after': '7' } });
    const error = await modelAt(upstream.baseUrl)
      .generate(request())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe('model_unavailable');
    expect((error as UpstreamError).headers).toMatchObject({ 'retry-after': '7' });
  });
});

describe('the lean client reading Server-Sent Events as real servers send them', () => {
  let server: Server;
  let baseUrl: string;
  const sockets = new Set<Socket>();
  let respond: (response: ServerResponse) => void = () => undefined;

  beforeAll(async () => {
    server = createServer((incoming, response) => {
      sockets.add(incoming.socket);
      incoming.resume();
      incoming.on('end', () => respond(response));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => sockets.clear());

  /** Sends `text` in pieces of `size` bytes (a character may be split), a tick apart. */
  function sendInPieces(response: ServerResponse, text: string, size: number): void {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const bytes = Buffer.from(text, 'utf8');
    let offset = 0;
    const next = () => {
      if (offset >= bytes.length) {
        response.end();
        return;
      }
      response.write(bytes.subarray(offset, offset + size));
      offset += size;
      setTimeout(next, 1);
    };
    next();
  }

  const event = (payload: unknown) => `data: ${JSON.stringify(payload)}\r\n\r\n`;
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id: 'c1',
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  it('reads events split mid-line, CRLF ends and content parts, and counts usage when none is sent', async () => {
    const body =
      ': keep-alive comment\r\n\r\n' +
      event(chunk({ role: 'assistant', content: '' })) +
      event(chunk({ content: 'Blue ' })) +
      event(chunk({ content: [{ type: 'text', text: 'é😀' }] })) +
      event(chunk({ content: ' sky.' })) +
      event(chunk({}, 'length')) +
      'data: [DONE]\r\n\r\n';
    respond = (response) => sendInPieces(response, body, 3);
    const parts = await collect(modelAt(baseUrl).stream(request()));
    const text = parts.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
    expect(text).toBe('Blue é😀 sky.');
    const finish = parts[parts.length - 1]!;
    expect(finish.type).toBe('finish');
    if (finish.type !== 'finish') return;
    expect(finish.finishReason).toBe('length');
    // No usage on the wire: the model's own token counts.
    expect(finish.usage.promptTokens).toBeGreaterThan(0);
    expect(finish.usage.completionTokens).toBeGreaterThan(0);
  });

  /** Answers with `head`, then spaces without end, until the client hangs up. */
  function endless(response: ServerResponse, contentType: string, head: string): void {
    response.writeHead(200, { 'content-type': contentType });
    response.write(head);
    const piece = Buffer.alloc(256 * 1024, 0x78);
    const next = () => {
      if (response.destroyed || response.writableEnded) return;
      if (response.write(piece)) setImmediate(next);
      else response.once('drain', next);
    };
    response.on('close', () => response.destroy());
    next();
  }

  // Both would otherwise read until the 5 s total timeout (upstream_timeout), holding it all.
  it('refuses a stream line longer than its bound instead of buffering it', async () => {
    respond = (response) =>
      endless(response, 'text/event-stream', 'data: {"choices":[{"delta":{"content":"');
    const error = await collect(modelAt(baseUrl).stream(request())).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe('upstream_error');
    expect((error as UpstreamError).message).toContain('invalid chunk');
  });

  it('refuses a whole answer larger than its bound instead of buffering it', async () => {
    respond = (response) => endless(response, 'application/json', '{"choices":"');
    const error = await modelAt(baseUrl)
      .generate(request())
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe('upstream_error');
    expect((error as UpstreamError).message).toContain('could not be read');
  });

  it('passes a refusal on as text and finishes with content_filter', async () => {
    respond = (response) =>
      sendInPieces(
        response,
        event(chunk({ refusal: 'I cannot help with that.' })) + event(chunk({}, 'stop')),
        1000,
      );
    const parts = await collect(modelAt(baseUrl).stream(request()));
    expect(parts[0]).toEqual({ type: 'text', text: 'I cannot help with that.' });
    expect(parts[1]).toMatchObject({ type: 'finish', finishReason: 'content_filter' });
  });

  it('passes on the text before an invalid chunk, then reports the chunk as such', async () => {
    respond = (response) =>
      sendInPieces(
        response,
        event(chunk({ content: 'Fine so far' })) + event({ choices: 'not a list' }),
        1000,
      );
    const parts: StreamPart[] = [];
    const error = await (async () => {
      for await (const part of modelAt(baseUrl).stream(request())) parts.push(part);
    })().catch((caught: unknown) => caught);
    expect(parts).toEqual([{ type: 'text', text: 'Fine so far' }]);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toContain('invalid chunk');
  });

  it('reports a stream that ends without a finish reason as cut', async () => {
    respond = (response) => sendInPieces(response, event(chunk({ content: 'Half' })), 1000);
    const error = await collect(modelAt(baseUrl).stream(request())).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toContain('cut mid-answer');
  });

  it('keeps one pooled connection for calls one after another', async () => {
    respond = (response) => {
      const answer = JSON.stringify({
        id: 'c2',
        object: 'chat.completion',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      });
      response.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(answer),
      });
      response.end(answer);
    };
    const model = modelAt(baseUrl);
    for (let index = 0; index < 5; index += 1) {
      expect((await model.generate(request())).text).toBe('ok');
    }
    expect(sockets.size).toBe(1);
  });
});
