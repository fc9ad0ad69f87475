// RateLimiter.consumeMore on every store (memory, and Redis when it answers): several requests
// counted at once, as the further messages of a JSON-RPC batch are, all of them in every window or
// none; a refusal gives every window its points back, the refusing one too; the account's ceiling
// counts them like the key's windows; concurrent batches never take more than a window holds.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { rateLimitStores } from '../../../test/support/unit/rate-limit-stores.js';
import {
  RateLimiter,
  rateLimitExceeded,
  type AccountSubject,
  type RateLimitDecision,
} from './rate-limiter.js';

const keyTiers = {
  tight: { perMinute: 3, perDay: 5 },
  dayBound: { perMinute: 100, perDay: 4 },
  ten: { perMinute: 10, perDay: 1000 },
  roomy: { perMinute: 100, perDay: 1000 },
};

const accountTiers = { team: { perMinute: 4, perDay: 100 } };

type Refusal = Extract<RateLimitDecision, { allowed: false }>;

function refusal(decision: RateLimitDecision): Refusal {
  expect(decision.allowed).toBe(false);
  return decision as Refusal;
}

const remaining = (decision: RateLimitDecision) =>
  decision.windows.map((window) => window.remaining);

const id = (prefix: string) => `${prefix}_${randomBytes(8).toString('hex')}`;
const stores = await rateLimitStores('the RateLimiter batch suite');

afterAll(() => stores.close());

describe.each(stores.all)('RateLimiter.consumeMore on the $name store', ({ store }) => {
  const limiter = () => new RateLimiter(keyTiers, store, id('unit-rl-batch'), accountTiers);

  it('counts all its points in every window at once', async () => {
    const rateLimiter = limiter();
    const key = id('key');
    await rateLimiter.consume(key, 'tight');
    const decision = await rateLimiter.consumeMore(key, 'tight', undefined, 2);
    expect(decision.allowed).toBe(true);
    expect(remaining(decision)).toEqual([0, 2]);
    expect(refusal(await rateLimiter.consume(key, 'tight')).limitedBy.window).toBe('minute');
  });

  it('refuses points that do not all fit and gives every one of them back', async () => {
    const rateLimiter = limiter();
    const key = id('key');
    await rateLimiter.consume(key, 'tight');
    const refused = refusal(await rateLimiter.consumeMore(key, 'tight', undefined, 3));
    expect(refused.limitedBy).toMatchObject({ scope: 'key', window: 'minute', limit: 3 });
    // Nothing of the refused points stays counted: not in the minute that refused them, and not
    // in the day window after it, which was never reached.
    expect(remaining(refused)).toEqual([2, 4]);
    expect(refused.retryAfterSeconds).toBe(
      Math.max(1, Math.ceil(refused.limitedBy.resetMs / 1000)),
    );
    expect(remaining(await rateLimiter.peek(key, 'tight'))).toEqual([2, 4]);
    // What is left can still be spent, to the last point.
    expect((await rateLimiter.consumeMore(key, 'tight', undefined, 2)).allowed).toBe(true);
    expect(remaining(await rateLimiter.peek(key, 'tight'))).toEqual([0, 2]);
  });

  it('gives a later window’s refusal back to the earlier windows too', async () => {
    const rateLimiter = limiter();
    const key = id('key');
    await rateLimiter.consume(key, 'dayBound');
    const refused = refusal(await rateLimiter.consumeMore(key, 'dayBound', undefined, 4));
    expect(refused.limitedBy).toMatchObject({ scope: 'key', window: 'day', limit: 4 });
    expect(remaining(refused)).toEqual([99, 3]);
    expect((await rateLimiter.consumeMore(key, 'dayBound', undefined, 3)).allowed).toBe(true);
    expect(remaining(await rateLimiter.peek(key, 'dayBound'))).toEqual([96, 0]);
  });

  it("counts them against the account's ceiling, refunding the key's windows on its refusal", async () => {
    const rateLimiter = limiter();
    const account: AccountSubject = { id: id('acct'), tier: 'team' };
    const [first, second] = [id('key'), id('key')];
    await rateLimiter.consume(first, 'roomy', account);
    expect((await rateLimiter.consumeMore(first, 'roomy', account, 2)).allowed).toBe(true);
    // Another key of the account finds one of the four left.
    await rateLimiter.consume(second, 'roomy', account);
    const refused = refusal(await rateLimiter.consumeMore(second, 'roomy', account, 1));
    expect(refused.limitedBy).toMatchObject({ scope: 'account', window: 'minute', limit: 4 });
    expect(remaining(refused)).toEqual([99, 999, 0, 96]);
  });

  it('lets concurrent batches take no more than the window holds', async () => {
    const rateLimiter = limiter();
    const key = id('key');
    const decisions = await Promise.all(
      Array.from({ length: 8 }, () => rateLimiter.consumeMore(key, 'ten', undefined, 3)),
    );
    const allowed = decisions.filter((decision) => decision.allowed).length;
    // Three batches of three fit in ten; a fourth never does, and no refused batch keeps a point.
    expect(allowed).toBeGreaterThanOrEqual(1);
    expect(allowed).toBeLessThanOrEqual(3);
    expect(remaining(await rateLimiter.peek(key, 'ten'))).toEqual([
      10 - 3 * allowed,
      1000 - 3 * allowed,
    ]);
  });

  it('counts only a whole number of points above zero', async () => {
    for (const points of [0, -1, 1.5]) {
      await expect(limiter().consumeMore(id('key'), 'tight', undefined, points)).rejects.toThrow(
        'consumeMore counts a whole number of requests above 0',
      );
    }
  });
});

describe('rateLimitExceeded for a batch', () => {
  const limitedBy = {
    scope: 'key',
    window: 'minute',
    limit: 10,
    remaining: 4,
    resetMs: 30_000,
  } as const;
  const refused: Refusal = {
    allowed: false,
    windows: [limitedBy, { scope: 'key', window: 'day', limit: 100, remaining: 90, resetMs: 9e6 }],
    limitedBy,
    retryAfterSeconds: 30,
  };

  it('says that every message of the batch counts', () => {
    expect(rateLimitExceeded(refused, { batchSize: 8 }).message).toBe(
      'Rate limit of 10 requests per minute exceeded for this API key. A batch of 8 JSON-RPC messages counts as 8 requests. Retry after 30 s.',
    );
  });

  it('says when a batch could never fit in the window', () => {
    expect(rateLimitExceeded(refused, { batchSize: 11 }).message).toBe(
      'Rate limit of 10 requests per minute exceeded for this API key. A batch of 11 JSON-RPC messages counts as 11 requests, more than the limit: send smaller batches. Retry after 30 s.',
    );
  });
});
