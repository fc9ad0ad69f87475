// A cloud speech call through the shared time-limit and retry block, against a real local server
// scripted per request: a busy answer retried after the wait its Retry-After asks for, the
// mapping of what is left when retries run out, the model's time limit over a server that never
// answers, and the client's hang-up during a wait.
import type http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RemoteModelDefinition } from '../../../config/config.js';
import {
  sendJson,
  startTestServer,
  type RecordedRequest,
  type TestServer,
} from '../../../../test/support/web-servers.js';
import { RequestAbortedError, UpstreamError } from '../../spec.js';
import { callSpeechApi, jsonOf } from './speech-http.js';

type Script = (request: RecordedRequest, response: http.ServerResponse) => void;

const answers: Script[] = [];
let server: TestServer;

function definition(overrides: Partial<RemoteModelDefinition> = {}): RemoteModelDefinition {
  return {
    name: 'cloud-stt',
    displayName: 'Cloud STT',
    maker: 'OpenAI',
    type: 'transcription',
    maxTokens: 0,
    contextLength: 0,
    fallbacks: [],
    timeoutMs: 60_000,
    idleTimeoutMs: 20_000,
    maxRetries: 2,
    provider: 'openai',
    model: 'whisper-1',
    baseUrl: server.origin,
    apiKeyEnv: 'SPEECH_KEY',
    structuredOutputs: false,
    maxAttempts: 4,
    deployments: [],
    cache: null,
    capabilities: [],
    routing: {
      inputCostPerMillion: null,
      outputCostPerMillion: null,
      quality: null,
      typicalLatencyMs: null,
    },
    speech: null,
    pricing: null,
    ...overrides,
  };
}

const failWith =
  (status: number, headers: Record<string, string> = {}): Script =>
  (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end('{"error":{"message":"Simulated vendor detail sk-secret"}}');
  };
const hang: Script = () => undefined;

function call(model: RemoteModelDefinition, signal = new AbortController().signal) {
  return callSpeechApi(
    model,
    () => ({ url: `${server.origin}/audio/transcriptions`, init: { method: 'POST', body: 'x' } }),
    signal,
    (response) => jsonOf<{ text: string }>(model, response),
  );
}

async function failure(pending: Promise<unknown>): Promise<unknown> {
  return pending.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
}

beforeAll(async () => {
  server = await startTestServer((request, response) => {
    const answer = answers.shift() ?? ((_r, res) => sendJson(res, 200, { text: 'hello' }));
    answer(request, response);
  });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  answers.length = 0;
  server.reset();
});

describe('a cloud speech call', () => {
  it('retries a busy answer after the wait it asks for, then reads the answer', async () => {
    answers.push(failWith(503, { 'retry-after-ms': '20' }), failWith(429, { 'retry-after': '0' }));
    const started = Date.now();
    await expect(call(definition())).resolves.toEqual({ text: 'hello' });
    expect(server.requests).toHaveLength(3);
    // The first wait was the 20 ms asked for (the backoff would have been 500 ms; not asserted).
    expect(Date.now() - started).toBeGreaterThanOrEqual(20);
  });

  it('reports the last answer when retries run out, without the vendor’s body', async () => {
    answers.push(failWith(503), failWith(429, { 'retry-after': '7' }));
    const error = await failure(call(definition({ maxRetries: 1 })));
    expect(server.requests).toHaveLength(2);
    expect(error).toBeInstanceOf(UpstreamError);
    const upstream = error as UpstreamError;
    expect(upstream.code).toBe('model_unavailable');
    expect(upstream.message).toBe(
      "The provider of model 'cloud-stt' is busy or rate-limited (HTTP 429).",
    );
    expect(upstream.headers).toEqual({ 'retry-after': '7' });
    expect(upstream.message).not.toContain('sk-secret');
  });

  it('does not retry a refused key, and names the variable that holds it', async () => {
    answers.push(failWith(401));
    const error = (await failure(call(definition()))) as UpstreamError;
    expect(server.requests).toHaveLength(1);
    expect(error.code).toBe('upstream_error');
    expect(error.message).toContain('check SPEECH_KEY');
  });

  it('ends a call the server never answers at the model’s timeout, and says which limit fired', async () => {
    answers.push(hang);
    const error = (await failure(call(definition({ timeoutMs: 200 })))) as UpstreamError;
    expect(error.code).toBe('upstream_timeout');
    expect(error.message).toBe('The model did not finish its answer within 200 ms (timeout_ms).');
    expect(server.requests).toHaveLength(1);
  });

  it('stops waiting to retry when the client leaves', async () => {
    answers.push(failWith(503, { 'retry-after': '5' }));
    const client = new AbortController();
    const pending = failure(call(definition(), client.signal));
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    client.abort();
    expect(await pending).toBeInstanceOf(RequestAbortedError);
    expect(server.requests).toHaveLength(1);
  });
});
