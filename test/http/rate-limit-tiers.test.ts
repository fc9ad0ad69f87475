// GET /v1/rate-limits/tiers through the real app, on every dialect: the configured tiers and the
// default one as the configuration sets them, 403 with the contract's error body without `admin`,
// and `grantable` as key creation decides it (the owner's admin keys grant every tier, a tenant's
// its own tier and those no higher in either window).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import {
  bearer,
  createAccount,
  createKey,
  startTestApp,
  type TestApp,
} from '../support/test-app.js';

const overrides = {
  rate_limits: {
    default_tier: 'small',
    tiers: {
      small: { per_minute: 5, per_day: 50 },
      // More a minute than `basic`, fewer a day: above `basic` in one window is above it.
      bursty: { per_minute: 90, per_day: 200 },
      basic: { per_minute: 60, per_day: 2000 },
    },
  },
};

interface TierJson {
  name: string;
  requests_per_minute: number;
  requests_per_day: number;
  grantable: boolean;
}

interface TiersJson {
  default_tier: string;
  tiers: TierJson[];
}

describe.each(allDialects)('rate-limit tiers on $name', (dialect) => {
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp({ dialect, overrides });
  });
  afterAll(() => harness.close());

  const tiers = (key: string) =>
    harness.app.inject({ method: 'GET', url: '/v1/rate-limits/tiers', headers: bearer(key) });

  const grantable = (body: TiersJson) =>
    body.tiers.filter((tier) => tier.grantable).map((tier) => tier.name);

  it('gives an admin key the configured tiers, in order, with their limits and the default tier', async () => {
    const response = await tiers(harness.adminKey);
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<TiersJson>();
    expect(body.default_tier).toBe('small');
    // The built-in tiers first (the configuration redefines `basic` in its place), then its own.
    expect(body.tiers.map((tier) => tier.name)).toEqual([
      'free',
      'basic',
      'pro',
      'enterprise',
      'small',
      'bursty',
    ]);
    const limits = Object.fromEntries(
      body.tiers.map((tier) => [tier.name, [tier.requests_per_minute, tier.requests_per_day]]),
    );
    expect(limits).toEqual({
      free: [10, 100],
      basic: [60, 2000],
      pro: [120, 5000],
      enterprise: [500, 50000],
      small: [5, 50],
      bursty: [90, 200],
    });
    for (const tier of body.tiers) {
      expect(Object.keys(tier).sort()).toEqual(
        ['grantable', 'name', 'requests_per_day', 'requests_per_minute'].sort(),
      );
    }
  });

  it('refuses a key without the admin scope: 403 insufficient_permissions naming admin', async () => {
    const { key } = await createKey(harness.app, harness.adminKey, {
      scopes: ['models:read', 'chat:write'],
    });
    const response = await tiers(key);
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      error: {
        message: "This API key lacks the 'admin' scope.",
        type: 'permission_error',
        code: 'insufficient_permissions',
        param: null,
        required_scope: 'admin',
      },
    });
    const missing = await harness.app.inject({ method: 'GET', url: '/v1/rate-limits/tiers' });
    expect(missing.statusCode).toBe(401);
    expect(missing.json<{ error: { code: string } }>().error.code).toBe('missing_api_key');
  });

  it("marks every tier grantable for the owner's admin keys", async () => {
    const body = (await tiers(harness.adminKey)).json<TiersJson>();
    expect(grantable(body)).toEqual(body.tiers.map((tier) => tier.name));
    // An admin key of the owner's account on the smallest tier grants every tier as well.
    const small = await createKey(harness.app, harness.adminKey, {
      scopes: ['admin'],
      tier: 'small',
    });
    expect(grantable((await tiers(small.key)).json<TiersJson>())).toEqual(
      body.tiers.map((tier) => tier.name),
    );
  });

  it("marks grantable for a tenant's admin key exactly the tiers it may create keys on", async () => {
    const tenant = await createAccount(harness.app, harness.adminKey, 'tier tenant', 'basic');
    const body = (await tiers(tenant.admin_key)).json<TiersJson>();
    // basic: 60 a minute, 2000 a day. bursty has more a minute, pro and enterprise more of both.
    expect(grantable(body)).toEqual(['free', 'basic', 'small']);
    const small = await createKey(harness.app, tenant.admin_key, {
      scopes: ['admin'],
      tier: 'small',
    });
    expect(grantable((await tiers(small.key)).json<TiersJson>())).toEqual(['small']);
    // What the list says is what key creation does.
    for (const tier of body.tiers) {
      const created = await harness.app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: bearer(tenant.admin_key),
        payload: { name: `on ${tier.name}`, tier: tier.name },
      });
      expect(created.statusCode, `${tier.name}: ${created.body}`).toBe(tier.grantable ? 201 : 403);
    }
  });
});
