// Login attempts per client address and minute, in memory or in Redis (shared by every instance),
// so a key cannot be guessed through the login endpoint faster than through any other.
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../../errors/app-error.js';
import type { RateLimitStore } from './rate-limiter.js';

export class LoginThrottle {
  private readonly limiter: RateLimiterMemory | RateLimiterRedis;

  constructor(
    private readonly perMinute: number,
    store: RateLimitStore,
    keyPrefix = 'login',
  ) {
    const options = { points: perMinute, duration: 60, keyPrefix };
    this.limiter =
      store.kind === 'memory'
        ? new RateLimiterMemory(options)
        : new RateLimiterRedis({
            ...options,
            storeClient: store.client satisfies Redis,
            rejectIfRedisNotReady: true,
            insuranceLimiter: new RateLimiterMemory(options),
          });
  }

  /** Counts one attempt from `clientAddress`; throws 429 once the minute's attempts are spent. */
  async attempt(clientAddress: string): Promise<void> {
    try {
      await this.limiter.consume(clientAddress, 1);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
      throw new AppError(
        'rate_limit_exceeded',
        `Too many login attempts from ${clientAddress}: at most ${this.perMinute} per minute. Retry after ${retryAfter} s.`,
        {
          details: {
            limit: this.perMinute,
            window: 'minute',
            reset_at: new Date(Date.now() + rejection.msBeforeNext).toISOString(),
          },
          headers: { 'retry-after': String(retryAfter) },
        },
      );
    }
  }
}
