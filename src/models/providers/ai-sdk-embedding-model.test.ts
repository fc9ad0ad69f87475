// Embeddings through the AI SDK's provider packages, retried and bounded in time by the shared
// block (not the SDK's own retries): against the fake OpenAI-compatible upstream over real HTTP.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RemoteModelDefinition } from '../../config/config.js';
import { startFakeUpstream, type FakeUpstream } from '../../../test/support/fake-upstream.js';
import { UpstreamError } from '../spec.js';
import { createRemoteEmbeddingModel } from './remote-models.js';

let upstream: FakeUpstream;

function model(overrides: Partial<RemoteModelDefinition> = {}) {
  const definition: RemoteModelDefinition = {
    name: 'fake-embed',
    displayName: 'Fake embed',
    maker: 'OpenAI',
    type: 'embedding',
    maxTokens: 0,
    contextLength: 8192,
    fallbacks: [],
    timeoutMs: 60_000,
    idleTimeoutMs: 20_000,
    maxRetries: 2,
    provider: 'openai-compatible',
    model: 'text-embedding-3-small',
    baseUrl: upstream.baseUrl,
    apiKeyEnv: null,
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
  return createRemoteEmbeddingModel(definition, { get: () => undefined });
}

async function failure(pending: Promise<unknown>): Promise<UpstreamError> {
  const error = await pending.then(
    () => new Error('expected the call to fail'),
    (caught: unknown) => caught,
  );
  if (error instanceof UpstreamError) return error;
  throw error;
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  await upstream.close();
});
beforeEach(() => {
  upstream.reset();
});

describe('an AI SDK embedding model', () => {
  it('retries a retryable failure after the wait it asks for, then embeds', async () => {
    upstream.enqueueFor('embeddings', {
      kind: 'error',
      status: 503,
      headers: { 'retry-after-ms': '10' },
    });
    const result = await model().embed(['a lighthouse'], new AbortController().signal);
    expect(result.embeddings).toHaveLength(1);
    expect(upstream.requests.map((request) => request.status)).toEqual([503, 200]);
  });

  it('says how many attempts failed and what the provider answered last', async () => {
    upstream.enqueueFor(
      'embeddings',
      { kind: 'error', status: 500, headers: { 'retry-after-ms': '1' } },
      { kind: 'error', status: 500, headers: { 'retry-after-ms': '1' } },
    );
    const error = await failure(
      model({ maxRetries: 1 }).embed(['x'], new AbortController().signal),
    );
    expect(upstream.requests).toHaveLength(2);
    expect(error.code).toBe('upstream_error');
    expect(error.message).toBe(
      "The provider of model 'fake-embed' answered HTTP 500 after 2 attempts.",
    );
  });

  it('makes one attempt when max_retries is 0 (the SDK adds none of its own)', async () => {
    upstream.enqueueFor('embeddings', { kind: 'error', status: 500 });
    const error = await failure(
      model({ maxRetries: 0 }).embed(['x'], new AbortController().signal),
    );
    expect(upstream.requests).toHaveLength(1);
    expect(error.message).toBe("The provider of model 'fake-embed' answered HTTP 500.");
  });

  it('ends a call the provider never answers at timeout_ms, and says so', async () => {
    upstream.enqueueFor('embeddings', { kind: 'hang' });
    const error = await failure(
      model({ timeoutMs: 200 }).embed(['x'], new AbortController().signal),
    );
    expect(error.code).toBe('upstream_timeout');
    expect(error.message).toBe('The model did not finish its answer within 200 ms (timeout_ms).');
  });
});
