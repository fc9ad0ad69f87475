// Rate limits through the HTTP API: exact under concurrency, both windows, both stores, headers.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects, redisTestUrl } from '../support/dialects.js';
import { bearer, createKey, startTestApp, type TestApp } from '../support/test-app.js';
import { redisReachable } from '../support/redis.js';

const withRedis = await redisReachable('rate limits over HTTP');

const overrides = {
  rate_limits: {
    tiers: {
      minute10: { per_minute: 10, per_day: 1000 },
      day10: { per_minute: 1000, per_day: 10 },
    },
  },
};

const stores = [{ store: 'memory', env: {} as Record<string, string> }];
if (withRedis) stores.push({ store: 'redis', env: { REDIS_URL: redisTestUrl } });

// Every dialect with every store; one service each, and a fresh key (its own counters) per case.
const cases = allDialects.flatMap((dialect) =>
  stores.map((store) => ({ ...store, dialect, name: dialect.name })),
);

describe.each(cases)('rate limits over HTTP on $name ($store store)', ({ store, env, dialect }) => {
  const harnesses: TestApp[] = [];
  let shared: TestApp;
  beforeAll(async () => {
    shared = await startTestApp({
      dialect,
      env,
      overrides,
      services: { rateLimitPrefix: `test-http-${randomBytes(6).toString('hex')}` },
    });
    harnesses.push(shared);
  });
  afterAll(async () => {
    for (const harness of harnesses.reverse()) await harness.close();
  });

  async function burst(harness: TestApp, key: string, count: number) {
    return Promise.all(
      Array.from({ length: count }, () =>
        harness.app.inject({ method: 'GET', url: '/v1/features', headers: bearer(key) }),
      ),
    );
  }

  it('lets exactly 10 of 50 concurrent requests through a limit of 10 per minute', async () => {
    const harness = shared;
    const { key } = await createKey(harness.app, harness.adminKey, {
      scopes: ['models:read'],
      tier: 'minute10',
    });
    const responses = await burst(harness, key, 50);
    expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(10);
    const refused = responses.filter((response) => response.statusCode === 429);
    expect(refused).toHaveLength(40);
    const sample = refused[0]!;
    const body = sample.json<{ error: Record<string, unknown> }>();
    expect(body.error).toMatchObject({
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      param: null,
      limit: 10,
      window: 'minute',
    });
    const retryAfter = Number(sample.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(59);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const resetIn = (Date.parse(String(body.error.reset_at)) - Date.now()) / 1000;
    expect(Math.abs(resetIn - retryAfter)).toBeLessThanOrEqual(1.5);
    expect(sample.headers['x-ratelimit-remaining-requests']).toBe('0');
    expect(sample.headers.ratelimit).toMatch(/^"minute";r=0;t=\d+, "day";r=990;t=\d+$/);
  });

  it('lets exactly 10 of 50 concurrent requests through a limit of 10 per day', async () => {
    const harness = shared;
    const { key } = await createKey(harness.app, harness.adminKey, {
      scopes: ['models:read'],
      tier: 'day10',
    });
    const responses = await burst(harness, key, 50);
    expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(10);
    const refused = responses.find((response) => response.statusCode === 429)!;
    expect(refused.json<{ error: { window: string; limit: number } }>().error).toMatchObject({
      window: 'day',
      limit: 10,
    });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(86_000);
    // Once the burst is over, the 40 refused requests have given their minute points back: a
    // further (refused) request sees exactly the 10 that were served counted in the minute window.
    const [after] = await burst(harness, key, 1);
    expect(after!.statusCode).toBe(429);
    expect(after!.headers.ratelimit).toMatch(/^"minute";r=990;t=\d+, "day";r=0;t=\d+$/);
  });

  it('sends the contract headers on every authenticated response', async () => {
    const harness = shared;
    const { key } = await createKey(harness.app, harness.adminKey, {
      scopes: ['models:read'],
      tier: 'minute10',
    });
    const response = await harness.app.inject({
      method: 'GET',
      url: '/v1/features',
      headers: bearer(key),
    });
    expect(response.headers['ratelimit-policy']).toBe('"minute";q=10;w=60, "day";q=1000;w=86400');
    expect(response.headers.ratelimit).toMatch(
      /^"minute";r=9;t=(59|60), "day";r=999;t=(86399|86400)$/,
    );
    expect(response.headers['x-ratelimit-limit-requests']).toBe('10');
    expect(response.headers['x-ratelimit-remaining-requests']).toBe('9');
    expect(response.headers['x-ratelimit-reset-requests']).toMatch(/^(59|60)s$/);
    expect(response.headers['retry-after']).toBeUndefined();
  });

  if (store === 'redis') {
    it('shares one count between two instances', async () => {
      const first = shared;
      const prefix = `test-http-shared-${randomBytes(6).toString('hex')}`;
      const a = await startTestApp({
        dialect,
        env,
        overrides,
        services: { rateLimitPrefix: prefix },
        database: first.database,
        adminKey: first.adminKey,
      });
      const b = await startTestApp({
        dialect,
        env,
        overrides,
        services: { rateLimitPrefix: prefix },
        database: first.database,
        adminKey: first.adminKey,
      });
      harnesses.push(a, b);
      const { key } = await createKey(a.app, a.adminKey, {
        scopes: ['models:read'],
        tier: 'minute10',
      });
      const responses = (await Promise.all([burst(a, key, 25), burst(b, key, 25)])).flat();
      expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(10);
    });
  }
});
