// An account's ceiling over all its keys, on every dialect with both rate-limit stores: keys a
// tenant's admin keys mint (admin keys minting admin keys) share one account count, so minting
// keys adds no throughput; the 429 names the `account` limit; the headers carry the account's
// windows; other tenants and the owner's account are not touched by it.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects, redisTestUrl } from '../support/dialects.js';
import { backfillAccountTiers } from '../../src/storage/migrations/011-account-tiers.js';
import { redisReachable } from '../support/redis.js';
import {
  bearer,
  createAccount,
  createKey,
  startTestApp,
  type TestApp,
} from '../support/test-app.js';

const withRedis = await redisReachable('account rate limits');

const overrides = {
  rate_limits: {
    tiers: {
      small: { per_minute: 5, per_day: 1000, account_per_minute: 8, account_per_day: 1000 },
      plain: { per_minute: 4, per_day: 100 },
    },
    account_multiple: 3,
  },
};

const stores = [{ store: 'memory', env: {} as Record<string, string> }];
if (withRedis) stores.push({ store: 'redis', env: { REDIS_URL: redisTestUrl } });

const cases = allDialects.flatMap((dialect) =>
  stores.map((store) => ({ ...store, dialect, name: dialect.name })),
);

interface RateLimitError {
  error: { code: string; limit: number; window: string; limit_scope: string; message: string };
}

describe.each(cases)('account ceilings on $name ($store store)', ({ env, dialect }) => {
  let harness: TestApp;
  const features = (key: string) =>
    harness.app.inject({ method: 'GET', url: '/v1/features', headers: bearer(key) });

  beforeAll(async () => {
    harness = await startTestApp({
      dialect,
      env,
      overrides,
      services: { rateLimitPrefix: `test-account-rl-${randomBytes(6).toString('hex')}` },
    });
  });
  afterAll(() => harness.close());

  it('counts every key of a tenant against one ceiling, however the keys were minted', async () => {
    const tenant = await createAccount(harness.app, harness.adminKey, 'Tenant A', 'small');
    // Admin keys minting admin keys, each with a fresh per-key quota of 5 a minute.
    const second = await createKey(harness.app, tenant.admin_key, {
      scopes: ['admin'],
      tier: 'small',
    });
    const third = await createKey(harness.app, second.key, { scopes: ['admin'], tier: 'small' });
    const reader = await createKey(harness.app, third.key, {
      scopes: ['models:read'],
      tier: 'small',
    });
    // Three requests so far (the mints, one by each admin key): the account has 5 of its 8 left.
    // Each key sends what its own quota still allows, 17 in all: only the account can refuse.
    const sent: [string, number][] = [
      [tenant.admin_key, 4],
      [second.key, 4],
      [third.key, 4],
      [reader.key, 5],
    ];
    const responses = await Promise.all(
      sent.flatMap(([key, count]) => Array.from({ length: count }, () => features(key))),
    );
    expect(responses.filter((response) => response.statusCode === 200)).toHaveLength(5);
    const refused = responses.filter((response) => response.statusCode === 429);
    expect(refused).toHaveLength(12);
    for (const response of refused) {
      const body = response.json<RateLimitError>();
      expect(body.error).toMatchObject({
        code: 'rate_limit_exceeded',
        limit: 8,
        window: 'minute',
        limit_scope: 'account',
      });
      expect(body.error.message).toContain('account');
      const retryAfter = Number(response.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(response.headers.ratelimit).toMatch(/"account-minute";r=0;t=\d+/);
    }
    // A request the account refused spends none of its key's own quota: the reader's key has
    // exactly what it was served taken from its 5.
    const servedToReader = responses
      .slice(12)
      .filter((response) => response.statusCode === 200).length;
    const after = await features(reader.key);
    expect(after.statusCode).toBe(429);
    expect(after.headers.ratelimit).toMatch(
      new RegExp(`^"minute";r=${5 - servedToReader};t=\\d+, "day";r=${1000 - servedToReader};`),
    );
  });

  it('leaves other tenants and the owner account alone', async () => {
    const exhausted = await createAccount(harness.app, harness.adminKey, 'Tenant B', 'small');
    for (let index = 0; index < 8; index += 1) await features(exhausted.admin_key);
    expect((await features(exhausted.admin_key)).statusCode).toBe(429);
    const other = await createAccount(harness.app, harness.adminKey, 'Tenant C', 'small');
    expect((await features(other.admin_key)).statusCode).toBe(200);
    // The owner's account (the operator's) has no ceiling above its keys' own limits.
    const owner = await features(harness.adminKey);
    expect(owner.statusCode).toBe(200);
    expect(owner.headers['ratelimit-policy']).not.toContain('account');
  });

  it('sends the account windows in the headers; x-ratelimit-* follow the minute that binds first', async () => {
    const tenant = await createAccount(harness.app, harness.adminKey, 'Tenant D', 'small');
    const busy = await createKey(harness.app, tenant.admin_key, {
      scopes: ['models:read'],
      tier: 'small',
    });
    const idle = await createKey(harness.app, tenant.admin_key, {
      scopes: ['models:read'],
      tier: 'small',
    });
    for (let index = 0; index < 3; index += 1) await features(busy.key);
    // The account has spent 2 (mints) + 3 + this one of its 8; this key 1 of its 5.
    const response = await features(idle.key);
    expect(response.statusCode).toBe(200);
    expect(response.headers['ratelimit-policy']).toBe(
      '"minute";q=5;w=60, "day";q=1000;w=86400, "account-minute";q=8;w=60, "account-day";q=1000;w=86400',
    );
    expect(response.headers.ratelimit).toMatch(
      /^"minute";r=4;t=\d+, "day";r=999;t=\d+, "account-minute";r=2;t=\d+, "account-day";r=994;t=\d+$/,
    );
    expect(response.headers['x-ratelimit-limit-requests']).toBe('8');
    expect(response.headers['x-ratelimit-remaining-requests']).toBe('2');
  });

  it("takes a tier's ceiling from account_multiple when it names none, and lists it", async () => {
    const tenant = await createAccount(harness.app, harness.adminKey, 'Tenant E', 'plain');
    const response = await features(tenant.admin_key);
    expect(response.headers['ratelimit-policy']).toContain('"account-minute";q=12;w=60');
    expect(response.headers['ratelimit-policy']).toContain('"account-day";q=300;w=86400');
    const listed = await harness.app.inject({
      method: 'GET',
      url: '/v1/accounts?limit=100',
      headers: bearer(harness.adminKey),
    });
    const accounts = listed.json<{
      accounts: { id: string; kind: string; tier: string | null }[];
    }>().accounts;
    expect(accounts.find((account) => account.id === tenant.id)?.tier).toBe('plain');
    expect(accounts.find((account) => account.kind === 'owner')?.tier).toBeNull();
  });

  it('gives accounts that existed before ceilings the tier of their first key', async () => {
    const tenant = await createAccount(harness.app, harness.adminKey, 'Tenant F', 'plain');
    const { db } = harness.services.storage;
    await db.updateTable('accounts').set({ tier: null }).where('id', '=', tenant.id).execute();
    await backfillAccountTiers(db as never);
    const row = await db
      .selectFrom('accounts')
      .select(['tier', 'kind'])
      .where('id', '=', tenant.id)
      .executeTakeFirstOrThrow();
    expect(row.tier).toBe('plain');
    const owner = await db
      .selectFrom('accounts')
      .select('tier')
      .where('kind', '=', 'owner')
      .executeTakeFirstOrThrow();
    expect(owner.tier).toBeNull();
  });
});
