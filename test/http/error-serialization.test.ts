// Defence in depth behind the reserved-key rule (issue 17, item 1): even when an error body's
// serializer cannot be built, or Object.prototype has been changed after all, every error answer
// is the contract's `{"error": {message, type, code, param}}` and says nothing of the internals
// (no FST_ERR_FAILED_ERROR_SERIALIZATION, no schema message), and recording metrics never throws.
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors/app-error.js';
import { sendError } from '../../src/http/error-handler.js';
import { lazySerializerFactory } from '../../src/http/validation.js';
import { PlatformMetrics } from '../../src/modules/metrics/metrics.js';
import { allDialects } from '../support/dialects.js';
import { bearer, startTestApp, type TestApp } from '../support/test-app.js';

interface ErrorJson {
  error: { message: string; type: string; code: string; param: string | null };
}

/** The shape every error body has, and none of what a framework failure would say. */
function expectContractBody(body: string, status: number): ErrorJson['error'] {
  expect(body).not.toMatch(/FST_ERR|schema is invalid|Failed to serialize|statusCode/);
  const parsed = JSON.parse(body) as ErrorJson;
  expect(Object.keys(parsed)).toEqual(['error']);
  expect(parsed.error).toMatchObject({
    message: expect.any(String),
    type: expect.any(String),
    code: expect.any(String),
  });
  expect(parsed.error.param === null || typeof parsed.error.param === 'string').toBe(true);
  expect(status).toBeGreaterThanOrEqual(400);
  return parsed.error;
}

const majorCollection = constants.NODE_PERFORMANCE_GC_MAJOR;

/**
 * Runs `body` while Object.prototype carries an enumerable `polluted` key, as it would after a
 * pollution, and always removes it again (test/support/no-pollution.ts checks that it was).
 */
async function whilePolluted<T>(body: () => Promise<T>): Promise<T> {
  (Object.prototype as Record<string, unknown>).polluted = 'yes';
  try {
    return await body();
  } finally {
    delete (Object.prototype as Record<string, unknown>).polluted;
  }
}

describe('error bodies when a response serializer fails', () => {
  const app = Fastify({
    logger: false,
    // As the service builds them: response serializers compiled on a route's first use.
    schemaController: {
      compilersFactory: { buildSerializer: lazySerializerFactory(new Set()) },
    },
  });
  // A response schema fast-json-stringify refuses to compile (as a polluted ErrorBody was).
  const broken = {
    type: 'object',
    properties: { error: { type: 'object', properties: { message: 5 } } },
  };
  beforeAll(async () => {
    app.setErrorHandler((error, request, reply) => sendError(request, reply, error as Error));
    app.get('/refused', { schema: { response: { 400: broken } } }, () => {
      throw new AppError('invalid_parameter', "'x' is wrong.", { param: 'x' });
    });
    app.get('/answer', { schema: { response: { 200: broken, 500: broken } } }, () => ({
      error: { message: 'fine' },
    }));
    await app.ready();
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers the error itself, in the contract, when its serializer cannot be built', async () => {
    const response = await app.inject({ method: 'GET', url: '/refused' });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(expectContractBody(response.body, response.statusCode)).toEqual({
      message: "'x' is wrong.",
      type: 'invalid_request_error',
      code: 'invalid_parameter',
      param: 'x',
    });
  });

  it('answers a 500 internal_error without the failure’s message when a success serializer fails', async () => {
    const response = await app.inject({ method: 'GET', url: '/answer' });
    expect(response.statusCode).toBe(500);
    const error = expectContractBody(response.body, response.statusCode);
    expect(error.code).toBe('internal_error');
    expect(error.message).toMatch(/^The service failed to handle this request/);
  });
});

describe('metrics while Object.prototype has an extra key', () => {
  it('records without throwing, and the exposition has no label the prototype added', async () => {
    const metrics = new PlatformMetrics({ defaultMetrics: false });
    await whilePolluted(() => {
      metrics.httpRequest({ method: 'POST', route: '/v1/pipelines', status: 400, seconds: 0.01 });
      metrics.modelCall({
        model: 'm',
        kind: 'chat',
        outcome: 'ok',
        seconds: 0.2,
        usage: { promptTokens: 3, completionTokens: 4 },
      });
      metrics.jobEnded('pipelines', 'completed', 1);
      metrics.setJobCounts('pipelines', { waiting: 1, active: 0 });
      metrics.webSocketOpened('realtime')();
      return Promise.resolve();
    });
    const text = await metrics.text();
    expect(text).toContain(
      'platform_http_requests_total{method="POST",route="/v1/pipelines",status="400"} 1',
    );
    expect(text).toContain('platform_upstream_tokens_total{model="m",type="prompt"} 3');
    expect(text).not.toContain('polluted');
  });
});

describe('garbage collections while Object.prototype has an extra key', () => {
  it('are recorded without an uncaught exception (prom-client labels each with a literal)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const metrics = new PlatformMetrics();
    const before = await metrics.text();
    // Node hands a GC's entry to every observer in the same dispatch, some turns of the loop after
    // the collection (more on a loaded machine): once this observer has the major collection,
    // prom-client's has had the same batch. It records only a batch's first entry, which on a
    // loaded machine can be a minor collection that came before: the collections of every kind
    // are counted.
    const observed = new Promise<void>((resolve) => {
      const observer = new PerformanceObserver((list) => {
        const major = list
          .getEntries()
          .some(
            (entry) => (entry as { detail?: { kind?: number } }).detail?.kind === majorCollection,
          );
        if (!major) return;
        observer.disconnect();
        resolve();
      });
      observer.observe({ entryTypes: ['gc'] });
    });
    await whilePolluted(async () => {
      gc();
      // The GC observer reports on a later turn of the loop: let it, while the key is there.
      await observed;
      await nextTurn();
    });
    const after = await metrics.text();
    const collections = (text: string) =>
      [...text.matchAll(/^nodejs_gc_duration_seconds_count\{kind="[a-z]+"\} (\d+)$/gm)].reduce(
        (sum, match) => sum + Number(match[1]),
        0,
      );
    expect(collections(after)).toBeGreaterThan(collections(before));
    expect(after).not.toContain('polluted');
  });
});

describe.each(allDialects)(
  'the whole service with a polluted Object.prototype on $name',
  (dialect) => {
    let harness: TestApp;
    beforeAll(async () => {
      harness = await startTestApp({ dialect });
    });
    afterAll(async () => {
      await harness.close();
    });

    it('answers every error in the contract, leaks nothing, and keeps serving', async () => {
      const answers = await whilePolluted(async () => {
        const requests = [
          { method: 'POST' as const, url: '/v1/conversations', payload: { title: 't' } },
          { method: 'POST' as const, url: '/v1/pipelines', payload: { name: 'p' } },
          { method: 'GET' as const, url: '/v1/agents/agent_doesnotexist000000' },
          { method: 'GET' as const, url: '/v1/no-such-route' },
        ];
        const results = [];
        for (const request of requests) {
          results.push(await harness.app.inject({ ...request, headers: bearer(harness.adminKey) }));
        }
        return results;
      });
      for (const answer of answers) {
        if (answer.statusCode >= 400) expectContractBody(answer.body, answer.statusCode);
      }
      // Cleaned up: the service answers as before, and its metrics were recorded.
      const created = await harness.app.inject({
        method: 'POST',
        url: '/v1/conversations',
        headers: bearer(harness.adminKey),
        payload: { title: 'after' },
      });
      expect(created.statusCode, created.body).toBe(201);
      const metrics = await harness.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: bearer(harness.adminKey),
      });
      expect(metrics.statusCode).toBe(200);
      expect(metrics.body).toContain('route="/v1/conversations"');
      expect(metrics.body).not.toContain('polluted');
    });
  },
);
