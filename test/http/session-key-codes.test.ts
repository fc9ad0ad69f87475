// A dashboard session whose key was revoked or expired answers that key's own 401 code, as the
// README promises — `revoked_api_key` / `expired_api_key`, on every later request, on the instance
// that revoked the key and on another sharing the database — never `invalid_session`, which is for
// a session that ended by itself (logout, idle, maximum age). Both dialects.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { bearer, createKey, startTestApp, type TestApp } from '../support/test-app.js';

const overrides = {
  rate_limits: {
    default_tier: 'roomy',
    tiers: { roomy: { per_minute: 10_000, per_day: 100_000 } },
  },
};

describe.each(allDialects)('sessions of revoked and expired keys on $name', (dialect) => {
  let clock = Date.now();
  let harness: TestApp;

  beforeAll(async () => {
    harness = await startTestApp({ dialect, services: { now: () => clock }, overrides });
  });
  afterAll(() => harness.close());

  async function login(app: TestApp, apiKey: string): Promise<string> {
    const response = await app.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { api_key: apiKey },
    });
    expect(response.statusCode, response.body).toBe(200);
    return `platform_session=${/platform_session=([^;]+)/.exec(String(response.headers['set-cookie']))?.[1] ?? ''}`;
  }

  const get = (app: TestApp, cookie: string, url = '/v1/features') =>
    app.app.inject({ method: 'GET', url, headers: { cookie } });
  const codeOf = (response: { json<T>(): T }) =>
    response.json<{ error: { code: string } }>().error.code;

  it('answers revoked_api_key on every request once the key is revoked here', async () => {
    const key = await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] });
    const cookie = await login(harness, key.key);
    expect((await get(harness, cookie)).statusCode).toBe(200);
    const revoked = await harness.app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${key.id}`,
      headers: bearer(harness.adminKey),
    });
    expect(revoked.statusCode).toBe(200);
    for (const url of ['/v1/features', '/v1/features', '/v1/auth/me']) {
      const response = await get(harness, cookie, url);
      expect(response.statusCode).toBe(401);
      expect(codeOf(response)).toBe('revoked_api_key');
    }
  });

  it('answers revoked_api_key when another instance revoked the key', async () => {
    const other = await startTestApp({
      dialect,
      database: harness.database,
      adminKey: harness.adminKey,
      overrides,
    });
    try {
      const key = await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] });
      const cookie = await login(harness, key.key);
      expect((await get(harness, cookie)).statusCode).toBe(200);
      const revoked = await other.app.inject({
        method: 'DELETE',
        url: `/v1/api-keys/${key.id}`,
        headers: bearer(harness.adminKey),
      });
      expect(revoked.statusCode).toBe(200);
      // This instance learns of it when its cached session state lapses (≤ 1 s by its clock).
      clock += 1000;
      const response = await get(harness, cookie);
      expect(response.statusCode).toBe(401);
      expect(codeOf(response)).toBe('revoked_api_key');
      expect(codeOf(await get(harness, cookie))).toBe('revoked_api_key');
      expect(codeOf(await get(other, cookie))).toBe('revoked_api_key');
    } finally {
      await other.app.close();
      await other.services.close();
    }
  }, 180_000);

  it('answers expired_api_key on every request once the key has expired', async () => {
    const key = await createKey(harness.app, harness.adminKey, {
      scopes: ['models:read'],
      expires_at: new Date(clock + 5 * 60_000).toISOString(),
    });
    const cookie = await login(harness, key.key);
    expect((await get(harness, cookie)).statusCode).toBe(200);
    clock += 6 * 60_000;
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const response = await get(harness, cookie);
      expect(response.statusCode).toBe(401);
      expect(codeOf(response)).toBe('expired_api_key');
    }
  });

  it('still answers invalid_session for a session that ended by itself (logout)', async () => {
    const key = await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] });
    const cookie = await login(harness, key.key);
    const loggedOut = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/logout',
      headers: bearer(key.key),
    });
    expect(loggedOut.statusCode).toBe(200);
    // Logged out with the key, not the cookie: the session is still there. End it with the cookie.
    const me = await get(harness, cookie, '/v1/auth/me');
    const csrf = me.json<{ session: { csrf_token: string } }>().session.csrf_token;
    const ended = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/logout',
      headers: {
        cookie,
        'x-csrf-token': csrf,
        host: 'localhost:80',
        origin: 'http://localhost:80',
      },
    });
    expect(ended.statusCode, ended.body).toBe(200);
    const response = await get(harness, cookie);
    expect(response.statusCode).toBe(401);
    expect(codeOf(response)).toBe('invalid_session');
  });
});
