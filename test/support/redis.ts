// Whether the test Redis answers; a skipped Redis suite is printed, never silent, and under CI
// (CI=true) an absent Redis fails the suite instead (see required-services.ts).
import { Redis } from 'ioredis';
import { redisTestUrl } from './dialects.js';
import { serviceMissing } from './required-services.js';

let cached: Promise<boolean> | undefined;

export function redisReachable(suite: string): Promise<boolean> {
  cached ??= (async () => {
    const client = new Redis(redisTestUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.ping();
      return true;
    } catch {
      return false;
    } finally {
      client.disconnect();
    }
  })();
  return cached.then((reachable) => {
    if (!reachable) {
      serviceMissing(
        'Redis',
        redisTestUrl,
        `the Redis cases of ${suite}`,
        'Start it or set TEST_REDIS_URL.',
      );
    }
    return reachable;
  });
}
