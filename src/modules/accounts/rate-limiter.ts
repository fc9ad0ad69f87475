// Per-key rate limits over two fixed windows (minute and day), and above them a ceiling per account
// (the sum over all its keys, so a tenant cannot multiply its quota by minting keys), in memory or
// in Redis.
//
// Every window counts a request or none does: the key's minute window is consumed first, then its
// day window, then the account's minute and day windows; a window that refuses the request leaves
// the later ones untouched and gives the earlier ones their point back. Each window's counter is
// atomic in its store (rate-limiter-flexible: in-process counters, or one Lua script per consume in
// Redis), which is what makes the count exact under concurrency. Several requests counted at once
// (the further messages of a JSON-RPC batch) follow the same order with all their points in each
// window; a refusal gives every window, the refusing one too, all of them back.
import type { Redis } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { RateLimitTier } from '../../config/config.js';
import {
  windowSeconds,
  type DecisionWindows,
  type LimitScope,
  type RateLimitDecision,
  type WindowName,
  type WindowState,
} from './rate-limit-decision.js';

export {
  rateLimitExceeded,
  rateLimitHeaders,
  type DecisionWindows,
  type LimitScope,
  type RateLimitDecision,
  type WindowName,
  type WindowState,
} from './rate-limit-decision.js';

export type RateLimitStore = { kind: 'memory' } | { kind: 'redis'; client: Redis };

interface TierLimiters {
  minute: RateLimiterAbstract;
  day: RateLimiterAbstract;
  tier: RateLimitTier;
}

/** The account a request counts against, and the tier its ceiling comes from. */
export interface AccountSubject {
  readonly id: string;
  /**
   * The account's tier; null: no ceiling (the owner's account); a tier no longer configured: the
   * key's tier.
   */
  readonly tier: string | null;
}

export class RateLimiter {
  private readonly limiters = new Map<string, TierLimiters>();
  /**
   * The accounts' counters, one pair for every tier: a tier only says where a count is refused,
   * so an account whose tier changes keeps its count (in memory as in Redis).
   */
  private accountCounters: Pick<TierLimiters, 'minute' | 'day'> | undefined;

  /**
   * `accountTiers`: per tier, the ceiling of an account of that tier; without it no account
   * ceiling is counted.
   */
  constructor(
    private readonly tiers: Readonly<Record<string, RateLimitTier>>,
    private readonly store: RateLimitStore,
    private readonly keyPrefix = 'rl',
    private readonly accountTiers?: Readonly<Record<string, RateLimitTier>>,
  ) {}

  get storeKind(): RateLimitStore['kind'] {
    return this.store.kind;
  }

  /**
   * Counts one request for `subject` (an API key id) against both windows of its tier, then, when
   * `account` is given, against both windows of the account's ceiling.
   */
  async consume(
    subject: string,
    tierName: string,
    account?: AccountSubject,
  ): Promise<RateLimitDecision> {
    return this.count(this.windowsFor(subject, tierName, account), 1, 'keep');
  }

  /**
   * Counts `points` more requests for `subject` at once (the further messages of a JSON-RPC batch
   * whose HTTP request `consume` already counted), on the same windows in the same order: all of
   * them in every window, or none. A window that cannot take them all refuses, and it gives them
   * back as the earlier windows do, so an over-large batch leaves the quota as it found it instead
   * of locking the key out until the window ends.
   */
  async consumeMore(
    subject: string,
    tierName: string,
    account: AccountSubject | undefined,
    points: number,
  ): Promise<RateLimitDecision> {
    if (!Number.isInteger(points) || points < 1) {
      throw new Error(`consumeMore counts a whole number of requests above 0, not ${points}`);
    }
    return this.count(this.windowsFor(subject, tierName, account), points, 'give back');
  }

  /** The current state of the windows without counting a request. */
  async peek(
    subject: string,
    tierName: string,
    account?: AccountSubject,
  ): Promise<RateLimitDecision> {
    const windows = this.windowsFor(subject, tierName, account);
    const results = await Promise.all(windows.map((counted) => counted.limiter.get(counted.id)));
    return { allowed: true, windows: statesOf(windows, results) };
  }

  /** The windows a request counts against, in the order they are consumed. */
  private windowsFor(
    subject: string,
    tierName: string,
    account: AccountSubject | undefined,
  ): CountedWindow[] {
    const limiters = this.limitersFor(tierName);
    const windows: CountedWindow[] = [
      {
        scope: 'key',
        window: 'minute',
        limiter: limiters.minute,
        id: subject,
        limit: limiters.tier.perMinute,
      },
      {
        scope: 'key',
        window: 'day',
        limiter: limiters.day,
        id: subject,
        limit: limiters.tier.perDay,
      },
    ];
    const ceiling = account === undefined ? undefined : this.accountLimitersFor(account, tierName);
    if (ceiling !== undefined && account !== undefined) {
      windows.push(
        {
          scope: 'account',
          window: 'minute',
          limiter: ceiling.minute,
          id: account.id,
          limit: ceiling.tier.perMinute,
        },
        {
          scope: 'account',
          window: 'day',
          limiter: ceiling.day,
          id: account.id,
          limit: ceiling.tier.perDay,
        },
      );
    }
    return windows;
  }

  /**
   * `points` requests counted in each of `windows` in turn, until one refuses them. `onRefusal`:
   * what the refusing window does with the points it counted (as the library counts a refused
   * request, a single refused request stays counted there).
   */
  private async count(
    windows: readonly CountedWindow[],
    points: number,
    onRefusal: RefusedPoints,
  ): Promise<RateLimitDecision> {
    const results: RateLimiterRes[] = [];
    for (const [index, counted] of windows.entries()) {
      const outcome = await this.tryConsume(counted, points);
      if (!outcome.allowed) {
        return this.refusedAt(windows, index, outcome.result, points, onRefusal);
      }
      results.push(outcome.result);
    }
    return { allowed: true, windows: statesOf(windows, results) };
  }

  /**
   * The refusal by `windows[refusing]`: the windows consumed before it get their points back (and
   * it too when `onRefusal` says so), the ones after it are read as they stand.
   */
  private async refusedAt(
    windows: readonly CountedWindow[],
    refusing: number,
    refusal: RateLimiterRes,
    points: number,
    onRefusal: RefusedPoints,
  ): Promise<RateLimitDecision> {
    const results = await Promise.all(
      windows.map((counted, index) => {
        if (index < refusing || (index === refusing && onRefusal === 'give back')) {
          return counted.limiter.reward(counted.id, points);
        }
        if (index > refusing) return counted.limiter.get(counted.id);
        return Promise.resolve(refusal);
      }),
    );
    return this.refused(statesOf(windows, results), refusing);
  }

  /** A refusal by `windows[refusing]`, awaiting the latest reset among the exhausted windows. */
  private refused(windows: DecisionWindows, refusing: number): RateLimitDecision {
    const limitedBy = windows
      .filter((window) => window.remaining === 0)
      .reduce(
        (latest, window) => (window.resetMs > latest.resetMs ? window : latest),
        windows[refusing]!,
      );
    return {
      allowed: false,
      windows,
      limitedBy,
      retryAfterSeconds: Math.max(1, Math.ceil(limitedBy.resetMs / 1000)),
    };
  }

  /**
   * `points` requests counted in one window; refused past its `limit` (an account's counters are
   * shared by every tier, so their limiter refuses only past the largest ceiling).
   */
  private async tryConsume(
    { limiter, id: subject, limit }: CountedWindow,
    points: number,
  ): Promise<{ allowed: boolean; result: RateLimiterRes }> {
    try {
      const result = await limiter.consume(subject, points);
      // As the library counts a refused request, so does a refusal by `limit`.
      return { allowed: result.consumedPoints <= limit, result };
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
    const tier = this.tiers[tierName];
    if (tier === undefined) throw new Error(`rate-limit tier '${tierName}' is not configured`);
    const created: TierLimiters = {
      tier,
      minute: this.createLimiter(`${this.keyPrefix}:${tierName}:minute`, 'minute', tier.perMinute),
      day: this.createLimiter(`${this.keyPrefix}:${tierName}:day`, 'day', tier.perDay),
    };
    this.limiters.set(tierName, created);
    return created;
  }

  /**
   * The ceiling of `account`: its tier's, else the key's tier's, over the counters every tier
   * shares (their limiters refuse only past the largest ceiling; `consume` checks the tier's).
   */
  private accountLimitersFor(account: AccountSubject, keyTier: string): TierLimiters | undefined {
    const tiers = this.accountTiers;
    if (tiers === undefined || account.tier === null) return undefined;
    const tierName = Object.hasOwn(tiers, account.tier) ? account.tier : keyTier;
    if (!Object.hasOwn(tiers, tierName)) return undefined;
    this.accountCounters ??= this.createAccountCounters(Object.values(tiers));
    return { tier: tiers[tierName]!, ...this.accountCounters };
  }

  private createAccountCounters(
    tiers: readonly RateLimitTier[],
  ): Pick<TierLimiters, 'minute' | 'day'> {
    const most = (window: (tier: RateLimitTier) => number) => Math.max(...tiers.map(window));
    return {
      minute: this.createLimiter(
        `${this.keyPrefix}:account:minute`,
        'minute',
        most((tier) => tier.perMinute),
      ),
      day: this.createLimiter(
        `${this.keyPrefix}:account:day`,
        'day',
        most((tier) => tier.perDay),
      ),
    };
  }

  private createLimiter(
    keyPrefix: string,
    window: WindowName,
    points: number,
  ): RateLimiterAbstract {
    const options = { points, duration: windowSeconds[window], keyPrefix };
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

/** What a refusing window does with the points it counted: keeps them, or gives them back. */
type RefusedPoints = 'keep' | 'give back';

/** One window a request is counted in: whose count, which limiter, and the limit that applies. */
interface CountedWindow {
  readonly scope: LimitScope;
  readonly window: WindowName;
  readonly limiter: RateLimiterAbstract;
  readonly id: string;
  readonly limit: number;
}

/** The windows' states from their counters (null: never counted in the current window). */
function statesOf(
  windows: readonly CountedWindow[],
  results: readonly (RateLimiterRes | null)[],
): DecisionWindows {
  return windows.map((counted, index) =>
    state(counted.scope, counted.window, counted.limit, results[index] ?? null),
  ) as unknown as DecisionWindows;
}

function state(
  scope: LimitScope,
  window: WindowName,
  limit: number,
  result: RateLimiterRes | null,
): WindowState {
  if (result === null)
    return { scope, window, limit, remaining: limit, resetMs: windowSeconds[window] * 1000 };
  return {
    scope,
    window,
    limit,
    remaining: Math.max(0, limit - result.consumedPoints),
    resetMs: Math.max(0, result.msBeforeNext),
  };
}
