// One contract suite for every rate-limit store: in memory, and Redis (CI's, at 127.0.0.1:6379).
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  RateLimiter,
  rateLimitHeaders,
  type RateLimitStore,
} from '../src/modules/accounts/rate-limiter.js';
import { redisTestUrl } from './support/dialects.js';
import { redisReachable } from './support/redis.js';

const tiers = {
  minuteBound: { perMinute: 10, perDay: 1000 },
  dayBound: { perMinute: 100, perDay: 10 },
  tight: { perMinute: 3, perDay: 5 },
};

interface StoreUnderTest {
  name: string;
  store: () => RateLimitStore;
}

let redis: Redis | null = null;
const redisAvailable = await redisReachable('the rate-limit store suite');
if (redisAvailable) {
  redis = new Redis(redisTestUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
}

const stores: StoreUnderTest[] = [{ name: 'memory', store: () => ({ kind: 'memory' }) }];
if (redisAvailable)
  stores.push({ name: 'redis', store: () => ({ kind: 'redis', client: redis! }) });

afterAll(async () => {
  await redis?.quit();
});

describe.each(stores)('rate limiter ($name store)', ({ name, store }) => {
  let prefix: string;
  beforeAll(() => {
    prefix = `test-rl-${randomBytes(6).toString('hex')}`;
  });
  const limiter = () => new RateLimiter(tiers, store(), prefix);
  const subject = () => `key_${randomBytes(8).toString('hex')}`;

  it('lets exactly 10 of 50 concurrent requests through a minute limit of 10', async () => {
    const rateLimiter = limiter();
    const key = subject();
    const decisions = await Promise.all(
      Array.from({ length: 50 }, () => rateLimiter.consume(key, 'minuteBound')),
    );
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(10);
    const refused = decisions.find((decision) => !decision.allowed);
    expect(refused?.allowed).toBe(false);
    if (refused !== undefined && !refused.allowed) {
      expect(refused.limitedBy.window).toBe('minute');
      expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(59);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
    }
    // Refused requests spent nothing of the day window.
    const peek = await rateLimiter.peek(key, 'minuteBound');
    expect(peek.windows[1]).toMatchObject({ window: 'day', limit: 1000, remaining: 990 });
  });

  it('lets exactly 10 of 50 concurrent requests through a day limit of 10, refunding the minute', async () => {
    const rateLimiter = limiter();
    const key = subject();
    const decisions = await Promise.all(
      Array.from({ length: 50 }, () => rateLimiter.consume(key, 'dayBound')),
    );
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(10);
    const refused = decisions.filter((decision) => !decision.allowed);
    expect(refused).toHaveLength(40);
    for (const decision of refused) {
      if (!decision.allowed) {
        expect(decision.limitedBy.window).toBe('day');
        expect(decision.retryAfterSeconds).toBeGreaterThan(86_000);
      }
    }
    const peek = await rateLimiter.peek(key, 'dayBound');
    expect(peek.windows[0]).toMatchObject({ window: 'minute', remaining: 90 });
    expect(peek.windows[1]).toMatchObject({ window: 'day', remaining: 0 });
  });

  it('waits for the later window when both are exhausted', async () => {
    const rateLimiter = limiter();
    const key = subject();
    for (let index = 0; index < 3; index += 1)
      expect((await rateLimiter.consume(key, 'tight')).allowed).toBe(true);
    const minuteRefusal = await rateLimiter.consume(key, 'tight');
    expect(minuteRefusal.allowed).toBe(false);
    if (!minuteRefusal.allowed) expect(minuteRefusal.limitedBy.window).toBe('minute');
    // Day window: 3 of 5 spent; the refusal above spent none of it.
    const peek = await rateLimiter.peek(key, 'tight');
    expect(peek.windows[1].remaining).toBe(2);
  });

  it('counts keys separately', async () => {
    const rateLimiter = limiter();
    const [first, second] = [subject(), subject()];
    for (let index = 0; index < 3; index += 1) await rateLimiter.consume(first, 'tight');
    expect((await rateLimiter.consume(first, 'tight')).allowed).toBe(false);
    expect((await rateLimiter.consume(second, 'tight')).allowed).toBe(true);
  });

  it('produces the contract headers', async () => {
    const rateLimiter = limiter();
    const decision = await rateLimiter.consume(subject(), 'tight');
    const headers = rateLimitHeaders(decision);
    expect(headers['ratelimit-policy']).toBe('"minute";q=3;w=60, "day";q=5;w=86400');
    expect(headers.ratelimit).toMatch(/^"minute";r=2;t=(59|60), "day";r=4;t=(86399|86400)$/);
    expect(headers['x-ratelimit-limit-requests']).toBe('3');
    expect(headers['x-ratelimit-remaining-requests']).toBe('2');
    expect(headers['x-ratelimit-reset-requests']).toMatch(/^(59|60)s$/);
    expect(headers['retry-after']).toBeUndefined();
  });

  if (name === 'redis') {
    it('shares one count between instances', async () => {
      const key = subject();
      const instances = [limiter(), limiter(), limiter()];
      const decisions = await Promise.all(
        Array.from({ length: 30 }, (_, index) => instances[index % 3]!.consume(key, 'minuteBound')),
      );
      expect(decisions.filter((decision) => decision.allowed)).toHaveLength(10);
    });
  }
});
