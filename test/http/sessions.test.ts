// Dashboard sessions through the real app, on every dialect: cookie flags, the hash-only store,
// CSRF token and Origin checks, scopes and limits shared with the key, idle and absolute expiry,
// the session ended by revocation (on this instance at once, on another within a second), logout,
// login attempts limited per address, and CORS preflights for allowed and refused origins (and
// none at all where no origin is configured).
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects } from '../support/dialects.js';
import { bearer, createKey, startTestApp, type TestApp } from '../support/test-app.js';

const host = '127.0.0.1:8080';
const ownOrigin = `http://${host}`;
const appOrigin = 'https://app.example.com';

const overrides = {
  rate_limits: {
    default_tier: 'roomy',
    tiers: {
      roomy: { per_minute: 10_000, per_day: 100_000 },
      tiny: { per_minute: 3, per_day: 100 },
    },
  },
};

interface ErrorJson {
  error: { code: string; param: string | null; message: string; [detail: string]: unknown };
}
const errorOf = (response: { json<T>(): T }) => response.json<ErrorJson>().error;

interface Login {
  cookie: string;
  token: string;
  csrf: string;
  setCookie: string;
}

describe.each(allDialects)('dashboard sessions on $name', (dialect) => {
  let clock = Date.now();
  let harness: TestApp;

  beforeAll(async () => {
    harness = await startTestApp({
      dialect,
      services: { now: () => clock },
      env: {
        CORS_ORIGINS: appOrigin,
        SESSION_IDLE_TIMEOUT_MS: String(10 * 60_000),
        SESSION_MAX_AGE_MS: String(60 * 60_000),
        LOGIN_ATTEMPTS_PER_MINUTE: '1000',
      },
      overrides,
    });
  });
  afterAll(async () => {
    await harness.close();
  });

  async function login(apiKey: string, remoteAddress?: string): Promise<Login> {
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { host },
      payload: { api_key: apiKey },
      ...(remoteAddress === undefined ? {} : { remoteAddress }),
    });
    expect(response.statusCode, response.body).toBe(200);
    const setCookie = String(response.headers['set-cookie']);
    const token = /platform_session=([^;]+)/.exec(setCookie)?.[1] ?? '';
    return {
      cookie: `platform_session=${token}`,
      token,
      csrf: response.json<{ session: { csrf_token: string } }>().session.csrf_token,
      setCookie,
    };
  }

  const withSession = (
    session: Login,
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    headers: Record<string, string> = {},
    payload?: unknown,
  ) =>
    harness.app.inject({
      method,
      url,
      headers: { host, cookie: session.cookie, ...headers },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  const changing = (session: Login, extra: Record<string, string> = {}) => ({
    'x-csrf-token': session.csrf,
    origin: ownOrigin,
    ...extra,
  });

  it('exchanges a key for an HttpOnly, SameSite=Strict cookie and stores only its hash', async () => {
    const session = await login(harness.adminKey);
    expect(session.setCookie).toMatch(/HttpOnly/);
    expect(session.setCookie).toMatch(/SameSite=Strict/);
    expect(session.setCookie).toMatch(/Path=\//);
    expect(session.setCookie).toMatch(/Max-Age=3600/);
    expect(session.setCookie).not.toMatch(/Secure/);
    expect(session.token.length).toBeGreaterThanOrEqual(40);
    expect(session.setCookie).not.toContain(harness.adminKey);
    const rows = await harness.services.storage.db.selectFrom('sessions').selectAll().execute();
    const hash = createHash('sha256').update(session.token).digest('hex');
    expect(rows.map((row) => row.token_hash)).toContain(hash);
    expect(JSON.stringify(rows)).not.toContain(session.token);

    const me = await withSession(session, 'GET', '/v1/auth/me');
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({
      authenticated_by: 'session',
      scopes: ['admin'],
      account: { kind: 'owner' },
      session: { csrf_token: session.csrf },
    });
  });

  it('marks the cookie Secure over HTTPS (behind a trusted proxy) or when configured', async () => {
    const secure = await startTestApp({
      dialect,
      database: harness.database,
      adminKey: harness.adminKey,
      overrides,
      env: { TRUST_PROXY: '127.0.0.1', LOGIN_ATTEMPTS_PER_MINUTE: '1000' },
    });
    try {
      const response = await secure.app.inject({
        method: 'POST',
        url: '/v1/auth/login',
        headers: { host, 'x-forwarded-proto': 'https' },
        payload: { api_key: harness.adminKey },
      });
      expect(String(response.headers['set-cookie'])).toMatch(/; Secure/);
    } finally {
      await secure.app.close();
      await secure.services.close();
    }
    const forced = await startTestApp({
      dialect,
      database: harness.database,
      adminKey: harness.adminKey,
      overrides,
      env: { SESSION_COOKIE_SECURE: 'true' },
    });
    try {
      const response = await forced.app.inject({
        method: 'POST',
        url: '/v1/auth/login',
        headers: { host },
        payload: { api_key: harness.adminKey },
      });
      expect(String(response.headers['set-cookie'])).toMatch(/; Secure/);
    } finally {
      await forced.app.close();
      await forced.services.close();
    }
  });

  it('refuses to log in with a key any request would refuse', async () => {
    const bad = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { api_key: 'sk-nope' },
    });
    expect(bad.statusCode).toBe(401);
    expect(errorOf(bad).code).toBe('invalid_api_key');
    const revoked = await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] });
    await harness.app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${revoked.id}`,
      headers: bearer(harness.adminKey),
    });
    const refused = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { api_key: revoked.key },
    });
    expect(errorOf(refused).code).toBe('revoked_api_key');
    const fenced = await createKey(harness.app, harness.adminKey, { allowed_ips: ['10.0.0.0/8'] });
    const outside = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: { api_key: fenced.key },
    });
    expect(outside.statusCode).toBe(403);
    expect(errorOf(outside).code).toBe('ip_not_allowed');
    const missing = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      payload: {},
    });
    expect(missing.statusCode).toBe(400);
    expect(errorOf(missing).param).toBe('api_key');
  });

  it('needs the CSRF token and the service’s own (or an allowed) Origin to change state', async () => {
    const session = await login(harness.adminKey);
    const body = { name: 'from the dashboard' };
    const cases: [Record<string, string>, number][] = [
      [{ origin: ownOrigin }, 403],
      [{ 'x-csrf-token': 'not-the-token', origin: ownOrigin }, 403],
      [{ 'x-csrf-token': session.csrf }, 403],
      [{ 'x-csrf-token': session.csrf, origin: 'https://evil.example' }, 403],
      [{ 'x-csrf-token': session.csrf, referer: 'https://evil.example/page' }, 403],
      [{ 'x-csrf-token': session.csrf, origin: ownOrigin }, 201],
      [{ 'x-csrf-token': session.csrf, referer: `${ownOrigin}/keys` }, 201],
      [{ 'x-csrf-token': session.csrf, origin: appOrigin }, 201],
    ];
    for (const [headers, status] of cases) {
      const response = await withSession(session, 'POST', '/v1/api-keys', headers, body);
      expect(response.statusCode, JSON.stringify(headers)).toBe(status);
      if (status === 403)
        expect(errorOf(response)).toMatchObject({
          code: 'csrf_failed',
          type: 'permission_error',
        });
    }
    // Reading needs no token: a foreign page cannot read the answer anyway (CORS).
    expect((await withSession(session, 'GET', '/v1/api-keys')).statusCode).toBe(200);
    // Another session's token does not fit this one.
    const other = await login(harness.adminKey);
    const crossed = await withSession(session, 'POST', '/v1/api-keys', changing(other), body);
    expect(errorOf(crossed).code).toBe('csrf_failed');
  });

  it('gives the session exactly the key’s scopes and rate limit', async () => {
    const reader = await createKey(harness.app, harness.adminKey, {
      scopes: ['models:read'],
      tier: 'tiny',
    });
    const session = await login(reader.key);
    const forbidden = await withSession(session, 'GET', '/v1/api-keys');
    expect(forbidden.statusCode).toBe(403);
    expect(errorOf(forbidden)).toMatchObject({
      code: 'insufficient_permissions',
      required_scope: 'admin',
    });
    const first = await withSession(session, 'GET', '/v1/features');
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-ratelimit-limit-requests']).toBe('3');
    expect((await withSession(session, 'GET', '/v1/features')).statusCode).toBe(200);
    const viaKey = () =>
      harness.app.inject({ method: 'GET', url: '/v1/features', headers: bearer(reader.key) });
    expect((await viaKey()).statusCode).toBe(200);
    // The quota is the key's: three requests between the session and the key spent it for both.
    expect((await viaKey()).statusCode).toBe(429);
    const limited = await withSession(session, 'GET', '/v1/features');
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
  });

  it('uses a key sent with the request rather than the cookie', async () => {
    const session = await login(harness.adminKey);
    const reader = await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] });
    const me = await withSession(session, 'GET', '/v1/auth/me', bearer(reader.key));
    expect(me.json()).toMatchObject({
      authenticated_by: 'api_key',
      key: { id: reader.id },
      session: null,
    });
  });

  it('ends the session when its key is revoked, at once on this instance', async () => {
    const key = await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] });
    const session = await login(key.key);
    expect((await withSession(session, 'GET', '/v1/features')).statusCode).toBe(200);
    await harness.app.inject({
      method: 'DELETE',
      url: `/v1/api-keys/${key.id}`,
      headers: bearer(harness.adminKey),
    });
    const refused = await withSession(session, 'GET', '/v1/features');
    expect(refused.statusCode).toBe(401);
    expect(['revoked_api_key', 'invalid_session']).toContain(errorOf(refused).code);
    const again = await withSession(session, 'GET', '/v1/features');
    expect(again.statusCode).toBe(401);
  });

  it('ends the session within a second when another instance revokes its key', async () => {
    const other = await startTestApp({
      dialect,
      database: harness.database,
      adminKey: harness.adminKey,
      overrides,
    });
    try {
      const key = await createKey(harness.app, harness.adminKey, { scopes: ['models:read'] });
      const session = await login(key.key);
      expect((await withSession(session, 'GET', '/v1/features')).statusCode).toBe(200);
      const revoked = await other.app.inject({
        method: 'DELETE',
        url: `/v1/api-keys/${key.id}`,
        headers: bearer(harness.adminKey),
      });
      expect(revoked.statusCode, revoked.body).toBe(200);
      // This instance may trust what it cached for up to its cache lifetime (500 ms by default);
      // a second later by its clock, never.
      clock += 1000;
      const refused = await withSession(session, 'GET', '/v1/features');
      expect(refused.statusCode).toBe(401);
    } finally {
      await other.app.close();
      await other.services.close();
    }
  });

  it('ends a session idle too long, one past its maximum age, and one whose key expired', async () => {
    const idle = await login(harness.adminKey);
    clock += 11 * 60_000;
    const idleRefused = await withSession(idle, 'GET', '/v1/features');
    expect(idleRefused.statusCode).toBe(401);
    expect(errorOf(idleRefused).code).toBe('invalid_session');

    const active = await login(harness.adminKey);
    for (let minute = 0; minute < 7; minute += 1) {
      clock += 9 * 60_000; // used every 9 minutes: never idle, but past the hour after 7 uses
      const response = await withSession(active, 'GET', '/v1/features');
      expect(response.statusCode, `after ${(minute + 1) * 9} minutes: ${response.body}`).toBe(
        minute < 6 ? 200 : 401,
      );
    }

    const expiring = await createKey(harness.app, harness.adminKey, {
      scopes: ['models:read'],
      expires_at: new Date(clock + 5 * 60_000).toISOString(),
    });
    const session = await login(expiring.key);
    expect((await withSession(session, 'GET', '/v1/features')).statusCode).toBe(200);
    clock += 6 * 60_000;
    const expired = await withSession(session, 'GET', '/v1/features');
    expect(expired.statusCode).toBe(401);
    expect(errorOf(expired).code).toBe('expired_api_key');
  });

  it('logs out: the cookie is cleared and the session refused from then on', async () => {
    const session = await login(harness.adminKey);
    const withoutToken = await withSession(session, 'POST', '/v1/auth/logout', {
      origin: ownOrigin,
    });
    expect(errorOf(withoutToken).code).toBe('csrf_failed');
    const out = await withSession(session, 'POST', '/v1/auth/logout', changing(session));
    expect(out.statusCode).toBe(200);
    expect(out.json()).toEqual({ success: true, session_ended: true, end_session_url: null });
    expect(String(out.headers['set-cookie'])).toMatch(
      /platform_session=;.*(Max-Age=0|Expires=Thu, 01 Jan 1970)/,
    );
    const after = await withSession(session, 'GET', '/v1/auth/me');
    expect(after.statusCode).toBe(401);
    expect(errorOf(after)).toMatchObject({
      code: 'invalid_session',
      type: 'authentication_error',
    });
  });

  it('limits login attempts per client address', async () => {
    const limited = await startTestApp({
      dialect,
      database: harness.database,
      adminKey: harness.adminKey,
      overrides,
      env: { LOGIN_ATTEMPTS_PER_MINUTE: '3' },
    });
    try {
      const attempt = (remoteAddress: string, apiKey = 'sk-guess') =>
        limited.app.inject({
          method: 'POST',
          url: '/v1/auth/login',
          payload: { api_key: apiKey },
          remoteAddress,
        });
      for (let index = 0; index < 3; index += 1)
        expect((await attempt('198.51.100.7')).statusCode).toBe(401);
      const refused = await attempt('198.51.100.7', harness.adminKey);
      expect(refused.statusCode).toBe(429);
      expect(errorOf(refused)).toMatchObject({
        code: 'rate_limit_exceeded',
        limit: 3,
        window: 'minute',
      });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect((await attempt('198.51.100.8', harness.adminKey)).statusCode).toBe(200);
    } finally {
      await limited.app.close();
      await limited.services.close();
    }
  });

  it('answers CORS preflights with credentials for an allowed origin only', async () => {
    const preflight = (origin: string) =>
      harness.app.inject({
        method: 'OPTIONS',
        url: '/v1/chat',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-csrf-token',
        },
      });
    const allowed = await preflight(appOrigin);
    expect(allowed.statusCode).toBe(204);
    expect(allowed.headers['access-control-allow-origin']).toBe(appOrigin);
    expect(allowed.headers['access-control-allow-credentials']).toBe('true');
    expect(String(allowed.headers['access-control-allow-methods'])).toContain('POST');
    expect(String(allowed.headers['access-control-allow-headers'])).toContain('X-CSRF-Token');
    expect(String(allowed.headers.vary)).toContain('Origin');

    const refused = await preflight('https://evil.example');
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    expect(refused.headers['access-control-allow-credentials']).toBeUndefined();

    // Errors carry the headers too, so the allowed app can read them.
    const error = await harness.app.inject({
      method: 'GET',
      url: '/v1/features',
      headers: { origin: appOrigin },
    });
    expect(error.statusCode).toBe(401);
    expect(error.headers['access-control-allow-origin']).toBe(appOrigin);
    // The preflight route is no API path: unknown paths stay 404.
    expect((await harness.app.inject({ method: 'GET', url: '/v1/nothing-here' })).statusCode).toBe(
      404,
    );
    expect(
      (await harness.app.inject({ method: 'OPTIONS', url: '/v1/nothing-here' })).statusCode,
    ).toBe(404);
  });
});

describe('CORS with no origin configured (the default)', () => {
  let harness: TestApp;
  beforeAll(async () => {
    harness = await startTestApp({ dialect: allDialects[0]!, overrides });
  });
  afterAll(() => harness.close());

  it('allows no origin: no CORS header on an answer, and a preflight answers 405', async () => {
    const answer = await harness.app.inject({
      method: 'GET',
      url: '/v1/models',
      headers: { ...bearer(harness.adminKey), origin: appOrigin },
    });
    expect(answer.statusCode).toBe(200);
    expect(
      Object.keys(answer.headers).filter((name) => name.startsWith('access-control-')),
    ).toEqual([]);
    // Nor does it vary by origin.
    expect(String(answer.headers.vary ?? '')).not.toMatch(/origin/i);
    const preflight = await harness.app.inject({
      method: 'OPTIONS',
      url: '/v1/chat',
      headers: {
        origin: appOrigin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-csrf-token',
      },
    });
    // No route answers OPTIONS: the 405 of any method a path does not take, naming those it does.
    expect(preflight.statusCode).toBe(405);
    expect(errorOf(preflight).code).toBe('method_not_allowed');
    expect(String(preflight.headers.allow)).toContain('POST');
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
  });
});
