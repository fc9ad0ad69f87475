// Per-key rate limits over two fixed windows (minute and day), in memory or in Redis.
//
// Both windows count a request or neither does: the minute window is consumed first; a request it
// refuses never touches the day window, and a request the day window refuses gives its minute point
// back. Each window's counter is atomic in its store (rate-limiter-flexible: in-process counters, or
// one Lua script per consume in Redis), which is what makes the count exact under concurrency.
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { RateLimitTier } from '../config/config.js';
import { AppError } from '../errors/app-error.js';

export type WindowName = 'minute' | 'day';

const windowSeconds: Record<WindowName, number> = { minute: 60, day: 86_400 };

export interface WindowState {
  readonly window: WindowName;
  readonly limit: number;
  readonly remaining: number;
  /** Milliseconds until this window starts afresh. */
  readonly resetMs: number;
}

export type RateLimitDecision =
  | { readonly allowed: true; readonly windows: readonly [WindowState, WindowState] }
  | {
      readonly allowed: false;
      readonly windows: readonly [WindowState, WindowState];
      /** The window whose reset is awaited: the later of the exhausted ones. */
      readonly limitedBy: WindowState;
      /** Whole seconds until a request would be allowed again (never an underestimate). */
      readonly retryAfterSeconds: number;
    };

/** The contract's 429 for a refused decision (`details.retry_after` too where asked for). */
export function rateLimitExceeded(
  decision: Extract<RateLimitDecision, { allowed: false }>,
  options: { retryAfterInDetails?: boolean } = {},
): AppError {
  const { limitedBy } = decision;
  return new AppError(
    'rate_limit_exceeded',
    `Rate limit of ${limitedBy.limit} requests per ${limitedBy.window} exceeded for this API key. Retry after ${decision.retryAfterSeconds} s.`,
    {
      details: {
        limit: limitedBy.limit,
        window: limitedBy.window,
        reset_at: new Date(Date.now() + limitedBy.resetMs).toISOString(),
        ...(options.retryAfterInDetails === true
          ? { retry_after: decision.retryAfterSeconds }
          : {}),
      },
    },
  );
}

export type RateLimitStore = { kind: 'memory' } | { kind: 'redis'; client: Redis };

interface TierLimiters {
  minute: RateLimiterAbstract;
  day: RateLimiterAbstract;
  tier: RateLimitTier;
}

export class RateLimiter {
  private readonly limiters = new Map<string, TierLimiters>();

  constructor(
    private readonly tiers: Readonly<Record<string, RateLimitTier>>,
    private readonly store: RateLimitStore,
    private readonly keyPrefix = 'rl',
  ) {}

  get storeKind(): RateLimitStore['kind'] {
    return this.store.kind;
  }

  /** Counts one request for `subject` (an API key id) against both windows of its tier. */
  async consume(subject: string, tierName: string): Promise<RateLimitDecision> {
    const limiters = this.limitersFor(tierName);
    const minute = await this.tryConsume(limiters.minute, subject);
    if (!minute.allowed) {
      const day = await limiters.day.get(subject);
      return this.refused(limiters.tier, 'minute', minute.result, day);
    }
    const day = await this.tryConsume(limiters.day, subject);
    if (!day.allowed) {
      const refunded = await limiters.minute.reward(subject, 1);
      return this.refused(limiters.tier, 'day', refunded, day.result);
    }
    return {
      allowed: true,
      windows: [
        state('minute', limiters.tier.perMinute, minute.result),
        state('day', limiters.tier.perDay, day.result),
      ],
    };
  }

  /** The current state of both windows without counting a request. */
  async peek(subject: string, tierName: string): Promise<RateLimitDecision> {
    const limiters = this.limitersFor(tierName);
    const [minute, day] = await Promise.all([
      limiters.minute.get(subject),
      limiters.day.get(subject),
    ]);
    return {
      allowed: true,
      windows: [
        state('minute', limiters.tier.perMinute, minute),
        state('day', limiters.tier.perDay, day),
      ],
    };
  }

  private refused(
    tier: RateLimitTier,
    refusedBy: WindowName,
    minuteResult: RateLimiterRes | null,
    dayResult: RateLimiterRes | null,
  ): RateLimitDecision {
    const windows = [
      state('minute', tier.perMinute, minuteResult),
      state('day', tier.perDay, dayResult),
    ] as const;
    const refusing = refusedBy === 'minute' ? windows[0] : windows[1];
    const limitedBy = windows
      .filter((window) => window.remaining === 0)
      .reduce((latest, window) => (window.resetMs > latest.resetMs ? window : latest), refusing);
    return {
      allowed: false,
      windows,
      limitedBy,
      retryAfterSeconds: Math.max(1, Math.ceil(limitedBy.resetMs / 1000)),
    };
  }

  private async tryConsume(
    limiter: RateLimiterAbstract,
    subject: string,
  ): Promise<{ allowed: boolean; result: RateLimiterRes }> {
    try {
      return { allowed: true, result: await limiter.consume(subject, 1) };
    } catch (rejection) {
      // rate-limiter-flexible rejects with a RateLimiterRes when the window is full, and with an
      // Error when the store fails (the insurance limiter has already been tried by then).
      if (rejection instanceof RateLimiterRes) return { allowed: false, result: rejection };
      throw rejection;
    }
  }

  private limitersFor(tierName: string): TierLimiters {
    const existing = this.limiters.get(tierName);
    if (existing !== undefined) return existing;
    const tier = Object.hasOwn(this.tiers, tierName) ? this.tiers[tierName] : undefined;
    if (tier === undefined) throw new Error(`rate-limit tier '${tierName}' is not configured`);
    const created: TierLimiters = {
      tier,
      minute: this.createLimiter(tierName, 'minute', tier.perMinute),
      day: this.createLimiter(tierName, 'day', tier.perDay),
    };
    this.limiters.set(tierName, created);
    return created;
  }

  private createLimiter(tierName: string, window: WindowName, points: number): RateLimiterAbstract {
    const options = {
      points,
      duration: windowSeconds[window],
      keyPrefix: `${this.keyPrefix}:${tierName}:${window}`,
    };
    if (this.store.kind === 'memory') return new RateLimiterMemory(options);
    return new RateLimiterRedis({
      ...options,
      storeClient: this.store.client,
      rejectIfRedisNotReady: true,
      // While Redis is unreachable each instance counts on its own rather than refusing everyone.
      insuranceLimiter: new RateLimiterMemory(options),
    });
  }
}

function state(window: WindowName, limit: number, result: RateLimiterRes | null): WindowState {
  if (result === null)
    return { window, limit, remaining: limit, resetMs: windowSeconds[window] * 1000 };
  return {
    window,
    limit,
    remaining: Math.max(0, limit - result.consumedPoints),
    resetMs: Math.max(0, result.msBeforeNext),
  };
}

/** The contract's rate-limit headers for a decision. */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  const [minute] = decision.windows;
  const headers: Record<string, string> = {
    'ratelimit-policy': decision.windows
      .map((window) => `"${window.window}";q=${window.limit};w=${windowSeconds[window.window]}`)
      .join(', '),
    ratelimit: decision.windows
      .map(
        (window) =>
          `"${window.window}";r=${window.remaining};t=${Math.ceil(window.resetMs / 1000)}`,
      )
      .join(', '),
    'x-ratelimit-limit-requests': String(minute.limit),
    'x-ratelimit-remaining-requests': String(minute.remaining),
    'x-ratelimit-reset-requests': `${Math.ceil(minute.resetMs / 1000)}s`,
  };
  if (!decision.allowed) headers['retry-after'] = String(decision.retryAfterSeconds);
  return headers;
}
