// The lean OpenAI client (src/models/providers/openai-compatible-chat-model.ts), the one path of
// providers `openai` and `openai-compatible`, on the wire: against the fake OpenAI upstream for the
// request it writes (every parameter passed through byte for byte, turns in OpenAI's form, the
// response format a schema asks for) and what it reads (tool calls whole and streamed, refusals,
// logprobs, usage details, the system fingerprint), and against a raw server that sends
// Server-Sent Events the way real servers do — split mid-line across TCP writes, CRLF line ends,
// content as parts, a refusal, no usage — for the hand-written reading of the stream.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RemoteModelDefinition } from '../src/config/config.js';
import { BpeTokenCounter } from '../src/models/bpe-token-counter.js';
import { finishReasonOf } from '../src/models/providers/openai-compatible-wire.js';
import { createRemoteChatModel } from '../src/models/providers/remote-models.js';
import {
  UpstreamError,
  type ChatModel,
  type ChatParams,
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
    expect(answer.usage).toEqual({
      promptTokens: 5,
      completionTokens: 4,
      cachedTokens: 0,
      reasoningTokens: 0,
    });
    expect(answer.systemFingerprint).toBe('fp_fakeupstream');
    expect(answer).not.toHaveProperty('toolCalls');
    expect(answer).not.toHaveProperty('refusal');
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
      usage: { promptTokens: 5, completionTokens: 4, cachedTokens: 0, reasoningTokens: 0 },
      systemFingerprint: 'fp_fakeupstream',
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

describe('the lean client passing OpenAI requests and answers through', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ requireApiKey: apiKey });
  });
  afterAll(async () => {
    await upstream.close();
  });
  beforeEach(() => upstream.reset());

  const weatherTool = {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, unit: { enum: ['c', 'f'] } },
        required: ['city', 'unit'],
        additionalProperties: false,
      },
      strict: true,
    },
  } as const;

  /** Every parameter the platform names, and one it does not know. */
  const everyParam: ChatParams = {
    top_p: 0.9,
    stop: ['\n\n', 'END'],
    seed: 42,
    presence_penalty: 0.5,
    frequency_penalty: -0.25,
    logit_bias: { '50256': -100, '1734': 5 },
    user: 'user-1234',
    metadata: { team: 'café', ticket: 'T-1' },
    reasoning_effort: 'low',
    logprobs: true,
    top_logprobs: 2,
    parallel_tool_calls: false,
    tools: [weatherTool],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    response_format: {
      type: 'json_schema',
      json_schema: {
        name: 'weather',
        schema: { type: 'object', properties: { ok: { type: 'boolean' } } },
        strict: true,
      },
    },
    some_future_field: { a: [1] },
  };

  /** Each parameter, as the client wrote it, appears in the raw body byte for byte. */
  function expectPassedThrough(rawBody: string, params: ChatParams): void {
    for (const [name, value] of Object.entries(params)) {
      expect(rawBody).toContain(`${JSON.stringify(name)}:${JSON.stringify(value)}`);
    }
  }

  it('forwards every parameter unchanged, known or not, whole and streamed', async () => {
    const model = modelAt(upstream.baseUrl);
    const answer = await model.generate(request({ params: everyParam }));
    await collect(
      model.stream(
        request({ params: { ...everyParam, stream_options: { include_obfuscation: false } } }),
      ),
    );
    const [plain, streamed] = upstream.requests;
    expectPassedThrough(plain!.rawBody, everyParam);
    expect(plain!.body).toEqual({
      ...everyParam,
      model: 'upstream-model-id',
      max_tokens: 64,
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Name a colour.' },
      ],
    });
    // The fake honoured `logprobs: true`; the choice's object comes back as sent.
    expect(answer.logprobs).toMatchObject({
      content: [
        { token: 'Echo:', top_logprobs: [{ token: 'Echo:' }, { token: 'Echo:1' }] },
        {},
        {},
        {},
      ],
    });
    expectPassedThrough(streamed!.rawBody, everyParam);
    // The caller's stream options are kept; the usage is always asked for.
    expect(streamed!.body).toMatchObject({
      stream: true,
      stream_options: { include_obfuscation: false, include_usage: true },
    });
  });

  it('sends stream options only with a stream', async () => {
    await modelAt(upstream.baseUrl).generate(
      request({ params: { stream_options: { include_usage: false } } }),
    );
    expect(upstream.requests[0]!.body).not.toHaveProperty('stream_options');
    expect(upstream.requests[0]!.body).not.toHaveProperty('stream');
  });

  it('writes images, tool calls, tool results and names in OpenAI’s form', async () => {
    const dataUrl = `data:image/png;base64,${Buffer.from('not really a png').toString('base64')}`;
    const call = {
      id: 'call_1',
      type: 'function' as const,
      function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
    };
    await modelAt(upstream.baseUrl).generate(
      request({
        messages: [
          { role: 'system', content: 'Be brief.' },
          {
            role: 'user',
            content: 'What is in these?',
            name: 'ada',
            parts: [
              { type: 'text', text: 'What is in these?' },
              {
                type: 'image_url',
                image_url: { url: 'https://example.com/cat.png', detail: 'low' },
              },
              { type: 'image_url', image_url: { url: dataUrl } },
            ],
          },
          { role: 'assistant', content: '', toolCalls: [call] },
          { role: 'tool', content: '{"temperature":18}', toolCallId: 'call_1' },
          { role: 'assistant', content: 'Let me check.', toolCalls: [call] },
        ],
      }),
    );
    expect((upstream.requests[0]!.body as { messages: unknown }).messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        name: 'ada',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: dataUrl } },
        ],
      },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"temperature":18}' },
      { role: 'assistant', content: 'Let me check.', tool_calls: [call] },
    ]);
  });

  it('reads the tool calls of a whole answer', async () => {
    upstream.enqueue({
      kind: 'reply',
      toolCalls: [
        { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
        { id: 'call_b', name: 'get_weather', arguments: '{"city":"Oslo","unit":"c"}' },
      ],
    });
    const answer = await modelAt(upstream.baseUrl).generate(
      request({ params: { tools: [weatherTool] } }),
    );
    expect(answer.text).toBe('');
    expect(answer.finishReason).toBe('tool_calls');
    expect(answer.toolCalls).toEqual([
      {
        id: 'call_a',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
      },
      {
        id: 'call_b',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Oslo","unit":"c"}' },
      },
    ]);
  });

  it('streams parallel tool calls as their deltas come, arguments in fragments', async () => {
    const calls = [
      { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' },
      { id: 'call_b', name: 'get_time', arguments: '{"zone":"Europe/Oslo"}' },
    ];
    upstream.enqueue({ kind: 'reply', toolCalls: calls });
    const parts = await collect(
      modelAt(upstream.baseUrl).stream(request({ params: { tools: [weatherTool] } })),
    );
    const deltas = parts.flatMap((part) => (part.type === 'tool-call' ? [part] : []));
    // Each call: its opening delta (id and name, no arguments) and several argument fragments.
    for (const index of [0, 1]) {
      const own = deltas.filter((delta) => delta.index === index);
      expect(own[0]).toEqual({
        type: 'tool-call',
        index,
        id: calls[index]!.id,
        name: calls[index]!.name,
        arguments: '',
      });
      expect(own.length).toBeGreaterThan(2);
      for (const later of own.slice(1)) {
        expect(later.id).toBeUndefined();
        expect(later.name).toBeUndefined();
      }
    }
    const rebuilt = new Map<number, { id: string; name: string; arguments: string }>();
    for (const delta of deltas) {
      const call = rebuilt.get(delta.index) ?? { id: '', name: '', arguments: '' };
      call.id ||= delta.id ?? '';
      call.name ||= delta.name ?? '';
      call.arguments += delta.arguments;
      rebuilt.set(delta.index, call);
    }
    expect([...rebuilt.values()]).toEqual(calls);
    expect(parts.filter((part) => part.type === 'text')).toEqual([]);
    expect(parts[parts.length - 1]).toMatchObject({ type: 'finish', finishReason: 'tool_calls' });
  });

  it('reads a refusal whole and streamed, with the finish reason as sent', async () => {
    const refusal = 'I cannot help with that request.';
    upstream.enqueue({ kind: 'reply', refusal }, { kind: 'reply', refusal });
    const model = modelAt(upstream.baseUrl);
    const answer = await model.generate(request());
    expect(answer).toMatchObject({ text: '', refusal, finishReason: 'stop' });
    const parts = await collect(model.stream(request()));
    const refused = parts.flatMap((part) => (part.type === 'refusal' ? [part.text] : []));
    expect(refused.length).toBeGreaterThan(1);
    expect(refused.join('')).toBe(refusal);
    expect(parts.filter((part) => part.type === 'text')).toEqual([]);
    expect(parts[parts.length - 1]).toMatchObject({ type: 'finish', finishReason: 'stop' });
  });

  it('reads cached and reasoning tokens and the system fingerprint, whole and streamed', async () => {
    const behaviour = {
      kind: 'reply' as const,
      usage: { prompt_tokens: 120, completion_tokens: 40 },
      usageDetails: { cached_tokens: 64, reasoning_tokens: 32 },
      systemFingerprint: 'fp_lean_test',
    };
    upstream.enqueue(behaviour, behaviour);
    const model = modelAt(upstream.baseUrl);
    const usage = {
      promptTokens: 120,
      completionTokens: 40,
      cachedTokens: 64,
      reasoningTokens: 32,
    };
    const answer = await model.generate(request());
    expect(answer.usage).toEqual(usage);
    expect(answer.systemFingerprint).toBe('fp_lean_test');
    const parts = await collect(model.stream(request()));
    expect(parts[parts.length - 1]).toEqual({
      type: 'finish',
      finishReason: 'stop',
      usage,
      systemFingerprint: 'fp_lean_test',
    });
  });

  it('gives each streamed text part the logprobs of its delta', async () => {
    const parts = await collect(
      modelAt(upstream.baseUrl).stream(request({ params: { logprobs: true, top_logprobs: 1 } })),
    );
    const texts = parts.flatMap((part) => (part.type === 'text' ? [part] : []));
    expect(texts.length).toBeGreaterThan(1);
    for (const part of texts) {
      expect(part.logprobs).toMatchObject({
        content: [{ token: part.text, top_logprobs: [{ token: part.text }] }],
      });
    }
  });

  it('asks for JSON mode, or the schema itself on a server that supports it, whole and streamed', async () => {
    const schema = {
      type: 'object' as const,
      properties: { answer: { type: 'string' as const } },
      required: ['answer'],
      additionalProperties: false,
    };
    await modelAt(upstream.baseUrl).generate(request({ responseSchema: schema }));
    const supporting = modelAt(upstream.baseUrl, { structuredOutputs: true });
    await supporting.generate(request({ responseSchema: schema }));
    await collect(supporting.stream(request({ responseSchema: schema })));
    const [plainMode, schemaMode, streamedSchema] = upstream.requests;
    expect(plainMode!.body).toMatchObject({ response_format: { type: 'json_object' } });
    const jsonSchema = {
      type: 'json_schema',
      json_schema: { name: 'result', schema, strict: true },
    };
    expect((schemaMode!.body as { response_format: unknown }).response_format).toEqual(jsonSchema);
    expect((streamedSchema!.body as { response_format: unknown }).response_format).toEqual(
      jsonSchema,
    );
    expect(streamedSchema!.stream).toBe(true);
  });

  it("serves provider 'openai' on the same path, its limit as max_completion_tokens", async () => {
    const model = modelAt(upstream.baseUrl, { provider: 'openai', structuredOutputs: true });
    upstream.enqueue({ kind: 'reply', toolCalls: [{ name: 'get_weather', arguments: '{}' }] });
    const answer = await model.generate(request({ params: { ...everyParam, max_tokens: 99 } }));
    expect(answer.finishReason).toBe('tool_calls');
    expect(answer.toolCalls?.[0]?.function.name).toBe('get_weather');
    const parts = await collect(model.stream(request({ params: everyParam })));
    expect(parts[parts.length - 1]).toMatchObject({ type: 'finish', finishReason: 'stop' });
    const [plain, streamed] = upstream.requests;
    expect(plain!.apiKey).toBe(apiKey);
    expect(plain!.path).toBe('/v1/chat/completions');
    expectPassedThrough(plain!.rawBody, everyParam);
    expect(plain!.body).toMatchObject({ model: 'upstream-model-id', max_completion_tokens: 64 });
    // One limit only: the reasoning models refuse `max_tokens`.
    expect(plain!.body).not.toHaveProperty('max_tokens');
    expectPassedThrough(streamed!.rawBody, everyParam);
    expect(streamed!.body).toMatchObject({ max_completion_tokens: 64, stream: true });
    expect(streamed!.body).not.toHaveProperty('max_tokens');
  });

  it("maps OpenAI's finish reasons, the legacy function_call as tool_calls", () => {
    expect(finishReasonOf('tool_calls')).toBe('tool_calls');
    expect(finishReasonOf('function_call')).toBe('tool_calls');
    expect(finishReasonOf('content_filter')).toBe('content_filter');
    expect(finishReasonOf('length')).toBe('length');
    expect(finishReasonOf('something_new')).toBe('other');
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

  it('reports a whole answer whose connection closes before its end, then reads the next one whole', async () => {
    // The body cut mid-way is a failure; the next answer, on a new connection, is read whole.
    respond = (response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '4096' });
      response.write('{"choices":[{"message":{"content":"Hal');
      setImmediate(() => response.socket?.destroy());
    };
    const model = modelAt(baseUrl);
    const error = await model.generate(request()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).code).toBe('upstream_error');
    respond = (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          choices: [{ index: 0, message: { content: 'Whole.' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 3, completion_tokens: 2 },
        }),
      );
    };
    const answer = await model.generate(request());
    expect(answer).toMatchObject({ text: 'Whole.', finishReason: 'stop' });
    expect(answer.usage).toMatchObject({ promptTokens: 3, completionTokens: 2 });
  });

  it('passes a refusal on as refusal parts, with the finish reason the server gave', async () => {
    respond = (response) =>
      sendInPieces(
        response,
        event(chunk({ refusal: 'I cannot help with that.' })) + event(chunk({}, 'stop')),
        1000,
      );
    const parts = await collect(modelAt(baseUrl).stream(request()));
    expect(parts[0]).toEqual({ type: 'refusal', text: 'I cannot help with that.' });
    expect(parts[1]).toMatchObject({ type: 'finish', finishReason: 'stop' });
  });

  it('reads tool-call deltas without an index by their place, and the legacy finish reason', async () => {
    respond = (response) =>
      sendInPieces(
        response,
        event(chunk({ tool_calls: [{ id: 'call_x', function: { name: 'f', arguments: '{}' } }] })) +
          event(chunk({}, 'function_call')),
        1000,
      );
    const parts = await collect(modelAt(baseUrl).stream(request()));
    expect(parts[0]).toEqual({
      type: 'tool-call',
      index: 0,
      id: 'call_x',
      name: 'f',
      arguments: '{}',
    });
    expect(parts[1]).toMatchObject({ type: 'finish', finishReason: 'tool_calls' });
  });

  it('reports a tool-call delta not in its shape as an invalid chunk', async () => {
    respond = (response) =>
      sendInPieces(
        response,
        event(chunk({ content: 'Calling' })) +
          event(chunk({ tool_calls: [{ index: 0, function: { arguments: 7 } }] })) +
          event(chunk({}, 'tool_calls')),
        1000,
      );
    const parts: StreamPart[] = [];
    const error = await (async () => {
      for await (const part of modelAt(baseUrl).stream(request())) parts.push(part);
    })().catch((caught: unknown) => caught);
    expect(parts).toEqual([{ type: 'text', text: 'Calling' }]);
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).message).toContain('invalid chunk');
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
