// Authentication end to end through the real app, on every dialect: each 401/403 code in the
// contract's order, tenant isolation, IP allow-lists and revocation across instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../src/modules/accounts/api-key-format.js';
import { allDialects } from '../support/dialects.js';
import {
  bearer,
  createAccount,
  createKey,
  startTestApp,
  type TestApp,
} from '../support/test-app.js';

describe.each(allDialects)('authentication on $name', (dialect) => {
  let clock = Date.now();
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp({ dialect, services: { now: () => clock } });
  });
  afterAll(async () => {
    await harness.close();
  });

  const features = (headers: Record<string, string>, remoteAddress?: string) =>
    harness.app.inject({
      method: 'GET',
      url: '/v1/features',
      headers,
      ...(remoteAddress === undefined ? {} : { remoteAddress }),
    });

  it('accepts the admin key as a Bearer token and as X-API-Key', async () => {
    expect((await features(bearer(harness.adminKey))).statusCode).toBe(200);
    expect((await features({ 'x-api-key': harness.adminKey })).statusCode).toBe(200);
  });

  it.each([
    ['no key', {}, 'missing_api_key'],
    ['an empty bearer', { authorization: 'Bearer ' }, 'missing_api_key'],
    ['a malformed key', { authorization: 'Bearer sk-nope' }, 'invalid_api_key'],
    [
      'a well-formed unknown key',
      { authorization: `Bearer ${generateApiKey()}` },
      'invalid_api_key',
    ],
    [
      'two spaces after Bearer',
      { authorization: `Bearer  ${generateApiKey()}` },
      'invalid_api_key',
    ],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'invalid_api_key'],
  ])('answers 401 for %s', async (_label, headers, code) => {
    const response = await features(headers);
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({
      error: { message: expect.any(String), type: 'authentication_error', code, param: null },
    });
    expect(response.headers['ratelimit']).toBeUndefined();
  });

  it('answers 401 revoked_api_key at once after revocation, permanently', async () => {
    const created = await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] });
    expect(created.status).toBe('active');
    expect((await features(bearer(created.key))).statusCode).toBe(200);
    const revoke = await harness.app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${created.id}`,
      headers: bearer(harness.adminKey),
    });
    expect(revoke.statusCode).toBe(200);
    expect(revoke.json<{ revoked_at: string }>().revoked_at).toEqual(expect.any(String));
    expect(revoke.json<{ status: string }>().status).toBe('revoked');
    const refused = await features(bearer(created.key));
    expect(refused.statusCode).toBe(401);
    expect(refused.json<{ error: { code: string } }>().error.code).toBe('revoked_api_key');
    // Revoking again changes nothing; there is no way back.
    const again = await harness.app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${created.id}`,
      headers: bearer(harness.adminKey),
    });
    expect(again.json<{ revoked_at: string }>().revoked_at).toBe(
      revoke.json<{ revoked_at: string }>().revoked_at,
    );
  });

  it('answers 401 expired_api_key once expires_at has passed', async () => {
    const expiresAt = new Date(clock + 60 * 60 * 1000).toISOString();
    const created = await createKey(harness.app, harness.adminKey, {
      scopes: ['models:read'],
      expires_at: expiresAt,
    });
    expect((await features(bearer(created.key))).statusCode).toBe(200);
    clock += 2 * 60 * 60 * 1000;
    try {
      const response = await features(bearer(created.key));
      expect(response.statusCode).toBe(401);
      expect(response.json<{ error: { code: string } }>().error.code).toBe('expired_api_key');
      const record = await harness.app.inject({
        method: 'GET',
        url: `/v1/api-keys/${created.id}`,
        headers: bearer(harness.adminKey),
      });
      expect(record.json<{ status: string }>().status).toBe('expired');
    } finally {
      clock = Date.now();
    }
  });

  it('refuses an expires_at in the past', async () => {
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: bearer(harness.adminKey),
      payload: { name: 'old', expires_at: '2001-01-01T00:00:00Z' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json<{ error: { param: string } }>().error.param).toBe('expires_at');
  });

  it('answers 403 insufficient_permissions naming the missing scope', async () => {
    const created = await createKey(harness.app, harness.adminKey, { scopes: ['chat:write'] });
    const response = await features(bearer(created.key));
    expect(response.statusCode).toBe(403);
    expect(response.json()).toEqual({
      error: {
        message: expect.stringContaining('models:read'),
        type: 'permission_error',
        code: 'insufficient_permissions',
        param: null,
        required_scope: 'models:read',
      },
    });
    // The key passed authentication, so its rate-limit state is reported; nothing was spent.
    expect(response.headers['x-ratelimit-remaining-requests']).toBe('10');
  });

  it('answers 403 ip_not_allowed from outside allowed_ips, IPv4 and IPv6, spending no quota', async () => {
    const created = await createKey(harness.app, harness.adminKey, {
      scopes: ['models:read'],
      allowed_ips: ['203.0.113.0/24', '2001:db8::/32'],
    });
    expect((await features(bearer(created.key), '203.0.113.10')).statusCode).toBe(200);
    expect((await features(bearer(created.key), '::ffff:203.0.113.11')).statusCode).toBe(200);
    expect((await features(bearer(created.key), '2001:db8::42')).statusCode).toBe(200);
    for (const outside of ['198.51.100.1', '2001:db9::1', '127.0.0.1']) {
      const response = await features(bearer(created.key), outside);
      expect(response.statusCode, outside).toBe(403);
      expect(response.json<{ error: { code: string } }>().error.code).toBe('ip_not_allowed');
    }
    // Only the three allowed requests counted against the free tier's 10 per minute.
    const allowed = await features(bearer(created.key), '203.0.113.10');
    expect(allowed.headers['x-ratelimit-remaining-requests']).toBe('6');
  });

  it('ignores X-Forwarded-For when the peer is not a trusted proxy', async () => {
    const created = await createKey(harness.app, harness.adminKey, {
      scopes: ['models:read'],
      allowed_ips: ['203.0.113.0/24'],
    });
    const spoofed = await features(
      { ...bearer(created.key), 'x-forwarded-for': '203.0.113.10' },
      '198.51.100.1',
    );
    expect(spoofed.statusCode).toBe(403);
    expect(spoofed.json<{ error: { code: string } }>().error.code).toBe('ip_not_allowed');
  });

  it('refuses an unknown tier and unknown scopes on key creation', async () => {
    const tier = await harness.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: bearer(harness.adminKey),
      payload: { name: 'x', tier: 'platinum' },
    });
    expect(tier.statusCode).toBe(400);
    expect(tier.json<{ error: { param: string } }>().error.param).toBe('tier');
    const scope = await harness.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: bearer(harness.adminKey),
      payload: { name: 'x', scopes: ['models:read', 'root'] },
    });
    expect(scope.statusCode).toBe(400);
    expect(scope.json<{ error: { param: string } }>().error.param).toBe('scopes[1]');
  });

  it('lets only the owner account grant a tier above the creating key’s own', async () => {
    // A tenant whose first admin key is on the basic tier (60/min, 1000/day).
    const tenant = await createAccount(harness.app, harness.adminKey, 'tiered tenant', 'basic');
    const create = (key: string, tier: string) =>
      harness.app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: bearer(key),
        payload: { name: `a ${tier} key`, tier },
      });
    for (const tier of ['free', 'basic']) {
      const allowed = await create(tenant.admin_key, tier);
      expect(allowed.statusCode, allowed.body).toBe(201);
      expect(allowed.json<{ tier: string }>().tier).toBe(tier);
    }
    for (const tier of ['pro', 'enterprise']) {
      const refused = await create(tenant.admin_key, tier);
      expect(refused.statusCode).toBe(403);
      expect(refused.json<{ error: { code: string; param: string } }>().error).toMatchObject({
        code: 'insufficient_permissions',
        param: 'tier',
      });
    }
    // The owner's admin grants any tier, to its own account or through a new account.
    expect((await create(harness.adminKey, 'enterprise')).statusCode).toBe(201);
    const rich = await createAccount(harness.app, harness.adminKey, 'rich tenant', 'enterprise');
    expect((await create(rich.admin_key, 'enterprise')).statusCode).toBe(201);
  });

  it('matches the Bearer scheme case-insensitively (RFC 9110 §11.1)', async () => {
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      expect((await features({ authorization: `${scheme} ${harness.adminKey}` })).statusCode).toBe(
        200,
      );
    }
  });

  it('shows the full key only in the create response', async () => {
    const created = await createKey(harness.app, harness.adminKey, { name: 'shown once' });
    expect(created.key).toMatch(/^sk-/);
    expect(created.display_key).toBe(`sk-…${created.key.slice(-4)}`);
    const read = await harness.app.inject({
      method: 'GET',
      url: `/v1/api-keys/${created.id}`,
      headers: bearer(harness.adminKey),
    });
    expect(read.body).not.toContain(created.key);
    expect(read.json()).not.toHaveProperty('key');
    const list = await harness.app.inject({
      method: 'GET',
      url: '/v1/api-keys',
      headers: bearer(harness.adminKey),
    });
    expect(list.body).not.toContain(created.key.slice(3, -4));
  });

  describe('tenant isolation', () => {
    let other: { id: string; admin_key: string; admin_key_id: string };
    beforeAll(async () => {
      other = await createAccount(harness.app, harness.adminKey, 'Tenant B');
    });

    it("lets account B neither read nor revoke account A's key: 404", async () => {
      const ownerKey = await createKey(harness.app, harness.adminKey, { name: 'A key' });
      const read = await harness.app.inject({
        method: 'GET',
        url: `/v1/api-keys/${ownerKey.id}`,
        headers: bearer(other.admin_key),
      });
      expect(read.statusCode).toBe(404);
      expect(read.json<{ error: { code: string } }>().error.code).toBe('not_found');
      const revoke = await harness.app.inject({
        method: 'DELETE',
        url: `/v1/api-keys/${ownerKey.id}`,
        headers: bearer(other.admin_key),
      });
      expect(revoke.statusCode).toBe(404);
      expect((await features(bearer(harness.adminKey))).statusCode).toBe(200);
      const stillThere = await harness.app.inject({
        method: 'GET',
        url: `/v1/api-keys/${ownerKey.id}`,
        headers: bearer(harness.adminKey),
      });
      expect(stillThere.json<{ revoked_at: null }>().revoked_at).toBeNull();
    });

    it("lists only the caller's account's keys, and puts new keys in the caller's account", async () => {
      const created = await createKey(harness.app, other.admin_key, { name: 'B key' });
      expect(created.account_id).toBe(other.id);
      const list = await harness.app.inject({
        method: 'GET',
        url: '/v1/api-keys',
        headers: bearer(other.admin_key),
      });
      const ids = list.json<{ api_keys: Array<{ id: string; account_id: string }> }>().api_keys;
      expect(ids.map((key) => key.id).sort()).toEqual([other.admin_key_id, created.id].sort());
      expect(ids.every((key) => key.account_id === other.id)).toBe(true);
    });

    it('keeps account administration to the owner account', async () => {
      for (const method of ['GET', 'POST'] as const) {
        const response = await harness.app.inject({
          method,
          url: '/v1/accounts',
          headers: bearer(other.admin_key),
          ...(method === 'POST' ? { payload: { name: 'C' } } : {}),
        });
        expect(response.statusCode, method).toBe(403);
        expect(response.json<{ error: { code: string } }>().error.code).toBe(
          'insufficient_permissions',
        );
      }
      const listed = await harness.app.inject({
        method: 'GET',
        url: '/v1/accounts',
        headers: bearer(harness.adminKey),
      });
      expect(listed.statusCode).toBe(200);
      expect(
        listed.json<{ accounts: Array<{ id: string }> }>().accounts.map((account) => account.id),
      ).toContain(other.id);
    });
  });
});

describe.each(allDialects)('several instances on $name', (dialect) => {
  it('refuses a key revoked by another instance within one second', async () => {
    const first = await startTestApp({ dialect });
    const second = await startTestApp({
      dialect,
      database: first.database,
      adminKey: first.adminKey,
    });
    try {
      const created = await createKey(first.app, first.adminKey, { scopes: ['models:read'] });
      const viaSecond = () =>
        second.app.inject({ method: 'GET', url: '/v1/features', headers: bearer(created.key) });
      expect((await viaSecond()).statusCode).toBe(200); // now cached by the second instance
      const revoke = await first.app.inject({
        method: 'DELETE',
        url: `/v1/api-keys/${created.id}`,
        headers: bearer(first.adminKey),
      });
      expect(revoke.statusCode).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const refused = await viaSecond();
      expect(refused.statusCode).toBe(401);
      expect(refused.json<{ error: { code: string } }>().error.code).toBe('revoked_api_key');
    } finally {
      await second.close();
      await first.close();
    }
  });
});

describe.each(allDialects)('trusted proxies on $name', (dialect) => {
  it('believes X-Forwarded-For only from TRUST_PROXY ranges', async () => {
    const harness = await startTestApp({
      dialect,
      env: { TRUST_PROXY: '10.0.0.0/8' },
    });
    try {
      const created = await createKey(harness.app, harness.adminKey, {
        scopes: ['models:read'],
        allowed_ips: ['203.0.113.0/24'],
      });
      const request = (remoteAddress: string, forwardedFor: string) =>
        harness.app.inject({
          method: 'GET',
          url: '/v1/features',
          remoteAddress,
          headers: { ...bearer(created.key), 'x-forwarded-for': forwardedFor },
        });
      expect((await request('10.1.2.3', '203.0.113.7')).statusCode).toBe(200);
      expect((await request('10.1.2.3', '198.51.100.7')).statusCode).toBe(403);
      // From an untrusted peer the header is ignored: the peer's own address is checked.
      expect((await request('198.51.100.9', '203.0.113.7')).statusCode).toBe(403);
      // A client cannot prepend its own entry past the proxy: the proxy's right-most entry counts.
      expect((await request('10.1.2.3', '203.0.113.7, 198.51.100.7')).statusCode).toBe(403);
    } finally {
      await harness.close();
    }
  });
});
