// The rate-limit stores a unit suite runs against: memory always, Redis whenever it answers (and
// always under CI, where a Redis that does not answer fails the run; see ../redis.ts).
import { Redis } from 'ioredis';
import type { RateLimitStore } from '../../../src/modules/accounts/rate-limiter.js';
import { redisTestUrl } from '../dialects.js';
import { redisReachable } from '../redis.js';

export interface StoreUnderTest {
  name: 'memory' | 'redis';
  store: RateLimitStore;
}

export interface RateLimitStores {
  all: StoreUnderTest[];
  close(): Promise<void>;
}

/** One Redis connection for the suite, shared by every limiter it builds (as one instance's are). */
export async function rateLimitStores(suite: string): Promise<RateLimitStores> {
  const all: StoreUnderTest[] = [{ name: 'memory', store: { kind: 'memory' } }];
  let client: Redis | null = null;
  if (await redisReachable(suite)) {
    client = new Redis(redisTestUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await client.connect();
    all.push({ name: 'redis', store: { kind: 'redis', client } });
  }
  return {
    all,
    async close() {
      await client?.quit();
    },
  };
}
