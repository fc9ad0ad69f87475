// RateLimiter directly, on every store (memory, and Redis when it answers): the key's minute and day
// windows, the account's ceiling over all its keys, which window a refusal waits for and its exact
// Retry-After, the refunds that keep every window's count exact, and the contract's headers and 429.
//
// RateLimiter takes no clock (rate-limiter-flexible reads Date.now itself), so nothing here waits
// for a window to pass: the tests check counts, order and the relations between a decision's
// numbers, which hold whatever the time.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { rateLimitStores } from '../../../test/support/unit/rate-limit-stores.js';
import {
  RateLimiter,
  rateLimitExceeded,
  rateLimitHeaders,
  type AccountSubject,
  type RateLimitDecision,
  type WindowState,
} from './rate-limiter.js';

const keyTiers = {
  tight: { perMinute: 3, perDay: 5 },
  dayBound: { perMinute: 100, perDay: 2 },
  bothTwo: { perMinute: 2, perDay: 2 },
  roomy: { perMinute: 100, perDay: 1000 },
};

const accountTiers = {
  team: { perMinute: 4, perDay: 100 },
  teamToo: { perMinute: 4, perDay: 100 },
  dayCeiling: { perMinute: 100, perDay: 3 },
  roomy: { perMinute: 2, perDay: 100 },
};

const minuteMs = 60_000;
const dayMs = 86_400_000;

type Refusal = Extract<RateLimitDecision, { allowed: false }>;

function refusal(decision: RateLimitDecision): Refusal {
  expect(decision.allowed).toBe(false);
  return decision as Refusal;
}

/** What every refusal must satisfy: it waits for the latest reset among its exhausted windows. */
function expectConsistentRefusal(refused: Refusal): void {
  const exhausted = refused.windows.filter((window) => window.remaining === 0);
  expect(exhausted).toContainEqual(refused.limitedBy);
  for (const window of exhausted)
    expect(refused.limitedBy.resetMs).toBeGreaterThanOrEqual(window.resetMs);
  expect(refused.retryAfterSeconds).toBe(Math.max(1, Math.ceil(refused.limitedBy.resetMs / 1000)));
}

function windowNames(decision: RateLimitDecision): string[] {
  return decision.windows.map((window) => `${window.scope} ${window.window}`);
}

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;
const stores = await rateLimitStores('the RateLimiter unit suite');

afterAll(() => stores.close());

describe.each(stores.all)('RateLimiter on the $name store', ({ store }) => {
  const limiter = (
    tiers: Record<string, { perMinute: number; perDay: number }> = keyTiers,
    /** null: no account tiers at all. */
    ceilings: typeof accountTiers | null = accountTiers,
  ) => new RateLimiter(tiers, store, id('unit-rl'), ceilings ?? undefined);

  describe('key scope', () => {
    it('counts the minute window down, then refuses without spending the day window', async () => {
      const rateLimiter = limiter();
      const key = id('key');
      for (const remaining of [2, 1, 0]) {
        const decision = await rateLimiter.consume(key, 'tight');
        expect(decision.allowed).toBe(true);
        expect(windowNames(decision)).toEqual(['key minute', 'key day']);
        expect(decision.windows[0]).toMatchObject({ limit: 3, remaining });
        expect(decision.windows[1]).toMatchObject({ limit: 5, remaining: remaining + 2 });
      }
      const refused = refusal(await rateLimiter.consume(key, 'tight'));
      expect(refused.limitedBy).toMatchObject({ scope: 'key', window: 'minute', limit: 3 });
      expect(refused.limitedBy.resetMs).toBeGreaterThan(0);
      // Both windows opened with the first request: the minute's ends first.
      expect(refused.limitedBy.resetMs).toBeLessThan(refused.windows[1].resetMs);
      expectConsistentRefusal(refused);
      expect((await rateLimiter.peek(key, 'tight')).windows[1].remaining).toBe(2);
    });

    it('refuses by the day window and gives the minute window its point back', async () => {
      const rateLimiter = limiter();
      const key = id('key');
      await rateLimiter.consume(key, 'dayBound');
      await rateLimiter.consume(key, 'dayBound');
      const refused = refusal(await rateLimiter.consume(key, 'dayBound'));
      expect(refused.limitedBy).toMatchObject({ scope: 'key', window: 'day', limit: 2 });
      expect(refused.windows[0]).toMatchObject({ window: 'minute', remaining: 98 });
      // The refusal waits for the day window, which ends after the minute window.
      expect(refused.limitedBy.resetMs).toBeGreaterThan(refused.windows[0].resetMs);
      expectConsistentRefusal(refused);
      const peek = await rateLimiter.peek(key, 'dayBound');
      expect(peek.windows.map((window) => window.remaining)).toEqual([98, 0]);
    });

    it('waits for the later reset when the minute refuses and the day is exhausted too', async () => {
      const rateLimiter = limiter();
      const key = id('key');
      await rateLimiter.consume(key, 'bothTwo');
      await rateLimiter.consume(key, 'bothTwo');
      const refused = refusal(await rateLimiter.consume(key, 'bothTwo'));
      expect(refused.windows.map((window) => window.remaining)).toEqual([0, 0]);
      expect(refused.limitedBy).toMatchObject({ scope: 'key', window: 'day' });
      expect(refused.retryAfterSeconds).toBeGreaterThan(60);
      expectConsistentRefusal(refused);
    });

    it('counts each key on its own', async () => {
      const rateLimiter = limiter();
      const [first, second] = [id('key'), id('key')];
      for (let count = 0; count < 3; count += 1) await rateLimiter.consume(first, 'tight');
      expect((await rateLimiter.consume(first, 'tight')).allowed).toBe(false);
      const other = await rateLimiter.consume(second, 'tight');
      expect(other.allowed).toBe(true);
      expect(other.windows[0].remaining).toBe(2);
    });

    it('peeks without counting: a fresh key shows its whole windows', async () => {
      const rateLimiter = limiter();
      const key = id('key');
      const fresh = await rateLimiter.peek(key, 'tight');
      expect(fresh).toEqual({
        allowed: true,
        windows: [
          { scope: 'key', window: 'minute', limit: 3, remaining: 3, resetMs: minuteMs },
          { scope: 'key', window: 'day', limit: 5, remaining: 5, resetMs: dayMs },
        ],
      });
      await rateLimiter.peek(key, 'tight');
      expect((await rateLimiter.consume(key, 'tight')).windows[0].remaining).toBe(2);
    });

    it('refuses to count a tier that is not configured', async () => {
      await expect(limiter().consume(id('key'), 'platinum')).rejects.toThrow(
        "rate-limit tier 'platinum' is not configured",
      );
    });
  });

  describe('account scope', () => {
    it("counts every key of an account against its ceiling, after the key's windows", async () => {
      const rateLimiter = limiter();
      const account: AccountSubject = { id: id('acct'), tier: 'team' };
      const [first, second] = [id('key'), id('key')];
      for (const [index, remaining] of [3, 2, 1, 0].entries()) {
        const decision = await rateLimiter.consume(
          index % 2 === 0 ? first : second,
          'roomy',
          account,
        );
        expect(decision.allowed).toBe(true);
        expect(windowNames(decision)).toEqual([
          'key minute',
          'key day',
          'account minute',
          'account day',
        ]);
        expect(decision.windows[2]).toMatchObject({ limit: 4, remaining });
      }
      const refused = refusal(await rateLimiter.consume(first, 'roomy', account));
      expect(refused.limitedBy).toMatchObject({ scope: 'account', window: 'minute', limit: 4 });
      // The key's own windows got their point back: two requests of `first` count, not three.
      expect(refused.windows.map((window) => window.remaining)).toEqual([98, 998, 0, 96]);
      expectConsistentRefusal(refused);
      const peek = await rateLimiter.peek(first, 'roomy', account);
      expect(peek.windows.map((window) => window.remaining)).toEqual([98, 998, 0, 96]);
    });

    it("refuses by the account's day ceiling, refunding the key and the account's minute", async () => {
      const rateLimiter = limiter();
      const account: AccountSubject = { id: id('acct'), tier: 'dayCeiling' };
      const key = id('key');
      for (let count = 0; count < 3; count += 1) await rateLimiter.consume(key, 'roomy', account);
      const refused = refusal(await rateLimiter.consume(key, 'roomy', account));
      expect(refused.limitedBy).toMatchObject({ scope: 'account', window: 'day', limit: 3 });
      expect(refused.windows.map((window) => window.remaining)).toEqual([97, 997, 97, 0]);
      expect(refused.retryAfterSeconds).toBeGreaterThan(60);
      expectConsistentRefusal(refused);
    });

    it("leaves the account's count alone when the key's own window refuses", async () => {
      const rateLimiter = limiter();
      const account: AccountSubject = { id: id('acct'), tier: 'team' };
      const [tight, roomy] = [id('key'), id('key')];
      for (let count = 0; count < 3; count += 1) await rateLimiter.consume(tight, 'tight', account);
      const refused = refusal(await rateLimiter.consume(tight, 'tight', account));
      expect(refused.limitedBy).toMatchObject({ scope: 'key', window: 'minute' });
      // The account's windows as they stand: three of four spent, the refusal spent none.
      expect(refused.windows.slice(2).map((window) => window.remaining)).toEqual([1, 97]);
      expect((await rateLimiter.consume(roomy, 'roomy', account)).allowed).toBe(true);
      const ceiling = refusal(await rateLimiter.consume(roomy, 'roomy', account));
      expect(ceiling.limitedBy.scope).toBe('account');
    });

    it("has no ceiling for the owner's account (tier null)", async () => {
      const rateLimiter = limiter();
      const owner: AccountSubject = { id: id('acct'), tier: null };
      for (let count = 0; count < 5; count += 1) {
        const decision = await rateLimiter.consume(id('key'), 'roomy', owner);
        expect(decision.allowed).toBe(true);
        expect(windowNames(decision)).toEqual(['key minute', 'key day']);
      }
    });

    it("takes the key tier's ceiling for an account whose tier is no longer configured", async () => {
      const rateLimiter = limiter();
      const account: AccountSubject = { id: id('acct'), tier: 'retired' };
      await rateLimiter.consume(id('key'), 'roomy', account);
      await rateLimiter.consume(id('key'), 'roomy', account);
      const refused = refusal(await rateLimiter.consume(id('key'), 'roomy', account));
      expect(refused.limitedBy).toMatchObject({ scope: 'account', window: 'minute', limit: 2 });
      // Neither the account's tier nor the key's has a ceiling: only the key's windows count.
      const unbounded = await rateLimiter.consume(id('key'), 'tight', account);
      expect(windowNames(unbounded)).toEqual(['key minute', 'key day']);
    });

    it('counts no account without account tiers', async () => {
      const rateLimiter = limiter(keyTiers, null);
      const account: AccountSubject = { id: id('acct'), tier: 'team' };
      for (let count = 0; count < 6; count += 1) {
        const decision = await rateLimiter.consume(id('key'), 'roomy', account);
        expect(windowNames(decision)).toEqual(['key minute', 'key day']);
      }
    });

    // Every tier's ceiling counts on the same counters, in memory as in Redis.
    it('keeps an account’s count when its tier changes', async () => {
      const rateLimiter = limiter();
      const accountId = id('acct');
      for (let count = 0; count < 3; count += 1) {
        await rateLimiter.consume(id('key'), 'roomy', { id: accountId, tier: 'team' });
      }
      const moved = await rateLimiter.consume(id('key'), 'roomy', {
        id: accountId,
        tier: 'teamToo',
      });
      expect(moved.windows[2]).toMatchObject({ limit: 4, remaining: 0 });
    });
  });

  it('gives headers that restate the decision', async () => {
    const rateLimiter = limiter();
    const account: AccountSubject = { id: id('acct'), tier: 'team' };
    const decision = await rateLimiter.consume(id('key'), 'tight', account);
    const [keyMinute, keyDay, accountMinute, accountDay] =
      decision.windows as readonly WindowState[];
    const seconds = (window: WindowState | undefined) => Math.ceil((window?.resetMs ?? -1) / 1000);
    expect(rateLimitHeaders(decision)).toEqual({
      'ratelimit-policy':
        '"minute";q=3;w=60, "day";q=5;w=86400, "account-minute";q=4;w=60, "account-day";q=100;w=86400',
      ratelimit: `"minute";r=2;t=${seconds(keyMinute)}, "day";r=4;t=${seconds(keyDay)}, "account-minute";r=3;t=${seconds(accountMinute)}, "account-day";r=99;t=${seconds(accountDay)}`,
      'x-ratelimit-limit-requests': '3',
      'x-ratelimit-remaining-requests': '2',
      'x-ratelimit-reset-requests': `${seconds(keyMinute)}s`,
    });
  });
});

describe('rateLimitHeaders', () => {
  const window = (
    scope: WindowState['scope'],
    name: WindowState['window'],
    limit: number,
    remaining: number,
    resetMs: number,
  ): WindowState => ({ scope, window: name, limit, remaining, resetMs });

  it("names the key's windows and rounds reset times up to whole seconds", () => {
    const headers = rateLimitHeaders({
      allowed: true,
      windows: [window('key', 'minute', 10, 7, 1001), window('key', 'day', 100, 90, 0)],
    });
    expect(headers).toEqual({
      'ratelimit-policy': '"minute";q=10;w=60, "day";q=100;w=86400',
      ratelimit: '"minute";r=7;t=2, "day";r=90;t=0',
      'x-ratelimit-limit-requests': '10',
      'x-ratelimit-remaining-requests': '7',
      'x-ratelimit-reset-requests': '2s',
    });
  });

  it("takes OpenAI's headers from the minute window with fewer requests left", () => {
    const headers = rateLimitHeaders({
      allowed: true,
      windows: [
        window('key', 'minute', 100, 40, 30_000),
        window('key', 'day', 1000, 900, 3_600_000),
        window('account', 'minute', 50, 5, 12_500),
        window('account', 'day', 500, 480, 7_200_000),
      ],
    });
    expect(headers['ratelimit-policy']).toBe(
      '"minute";q=100;w=60, "day";q=1000;w=86400, "account-minute";q=50;w=60, "account-day";q=500;w=86400',
    );
    expect(headers.ratelimit).toBe(
      '"minute";r=40;t=30, "day";r=900;t=3600, "account-minute";r=5;t=13, "account-day";r=480;t=7200',
    );
    expect(headers['x-ratelimit-limit-requests']).toBe('50');
    expect(headers['x-ratelimit-remaining-requests']).toBe('5');
    expect(headers['x-ratelimit-reset-requests']).toBe('13s');
    expect(headers['retry-after']).toBeUndefined();
  });

  it('adds Retry-After to a refusal', () => {
    const limitedBy = window('key', 'day', 100, 0, 5_000_000);
    const headers = rateLimitHeaders({
      allowed: false,
      windows: [window('key', 'minute', 10, 4, 20_000), limitedBy],
      limitedBy,
      retryAfterSeconds: 5000,
    });
    expect(headers['retry-after']).toBe('5000');
  });
});

describe('rateLimitExceeded', () => {
  const limitedBy: WindowState = {
    scope: 'account',
    window: 'minute',
    limit: 50,
    remaining: 0,
    resetMs: 42_000,
  };
  const refused: Refusal = {
    allowed: false,
    windows: [
      { scope: 'key', window: 'minute', limit: 100, remaining: 60, resetMs: 42_000 },
      { scope: 'key', window: 'day', limit: 1000, remaining: 900, resetMs: 9_000_000 },
      limitedBy,
    ],
    limitedBy,
    retryAfterSeconds: 42,
  };

  it("is the contract's 429 naming the window, its scope and when it resets", () => {
    const before = Date.now();
    const error = rateLimitExceeded(refused);
    const after = Date.now();
    expect(error).toMatchObject({ code: 'rate_limit_exceeded', status: 429 });
    expect(error.message).toBe(
      "Rate limit of 50 requests per minute exceeded for this key's account (all its API keys together). Retry after 42 s.",
    );
    expect(error.details).toEqual({
      limit: 50,
      window: 'minute',
      limit_scope: 'account',
      reset_at: expect.any(String),
    });
    const resetAt = Date.parse(error.details.reset_at as string);
    expect(resetAt - 42_000).toBeGreaterThanOrEqual(before);
    expect(resetAt - 42_000).toBeLessThanOrEqual(after);
  });

  it('carries retry_after in its details only when asked', () => {
    const error = rateLimitExceeded(
      { ...refused, limitedBy: { ...limitedBy, scope: 'key' } },
      { retryAfterInDetails: true },
    );
    expect(error.message).toContain('exceeded for this API key.');
    expect(error.details).toMatchObject({ limit_scope: 'key', retry_after: 42 });
  });
});
