// Single sign-on for the dashboard against a real OpenID Connect provider (oidc-provider on a
// loopback port, driven over HTTP as a browser would), on every dialect: the whole sign-in (PKCE,
// state, nonce) ends in the dashboard's session cookie as the account and scopes the person's claims
// map to; the person is provisioned once and follows their claims at each sign-in; the session keeps
// the key login's CSRF and revocation rules; and a forged state, a wrong nonce, another issuer, a
// replayed answer and claims that map to nothing are all refused with a clear error and no session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load-config.js';
import { safeReturnPath } from '../../src/modules/accounts/sso/sso-service.js';
import { allDialects } from '../support/dialects.js';
import {
  listenIdentityProvider,
  signIn,
  type IdentityProvider,
} from '../support/identity-provider.js';
import { bearer, createAccount, startTestApp, type TestApp } from '../support/test-app.js';

const host = '127.0.0.1:8080';
const ownOrigin = `http://${host}`;
const clientId = 'platform-dashboard';
const clientSecret = 'a-client-secret-that-must-never-leave-the-service';
const secretEnv = 'TEST_SSO_CLIENT_SECRET';
/** The callback as the provider knows it (its requests are replayed into the app by inject). */
const redirectUrl = 'http://127.0.0.1:9/v1/auth/oidc/callback';

interface ErrorJson {
  error: { code: string; message: string };
}
interface MeJson {
  authenticated_by: string;
  account: { id: string; name: string };
  key: { id: string; name: string };
  scopes: string[];
  user: { id: string; email: string | null; subject: string; roles: string[] } | null;
  session: { csrf_token: string } | null;
}

function oidcSettings(issuer: string) {
  return {
    issuer,
    client_id: clientId,
    client_secret_env: secretEnv,
    redirect_url: redirectUrl,
    scopes: ['openid', 'email', 'profile', 'platform'],
    account_claim: 'platform_account',
    role_claim: 'roles',
    role_scopes: {
      viewer: ['usage:read', 'conversations:read'],
      operator: ['admin'],
    },
    display_name: 'Test IdP',
  };
}

const cookieValue = (setCookie: unknown, name: string): string | undefined => {
  const lines = Array.isArray(setCookie)
    ? setCookie.map(String)
    : typeof setCookie === 'string'
      ? [setCookie]
      : [];
  const line = lines.find((text) => text.startsWith(`${name}=`));
  const value = line?.slice(name.length + 1).split(';')[0];
  return value === undefined || value === '' ? undefined : value;
};

describe.each(allDialects)('single sign-on on $name', (dialect) => {
  let idp: IdentityProvider;
  /** Another provider with the same client: a different issuer. */
  let other: IdentityProvider;
  /** A provider at another address whose discovery document names `idp`'s issuer. */
  let impostor: IdentityProvider;
  let harness: TestApp;
  let team: { id: string; admin_key: string };

  beforeAll(async () => {
    [idp, other, impostor] = await Promise.all([
      listenIdentityProvider(),
      listenIdentityProvider(),
      listenIdentityProvider(),
    ]);
    const client = { clientId, clientSecret, redirectUris: [redirectUrl] };
    idp.start(client);
    other.start(client);
    impostor.start(client, { issuer: idp.issuer });
    harness = await startTestApp({
      dialect,
      env: { [secretEnv]: clientSecret, LOGIN_ATTEMPTS_PER_MINUTE: '1000' },
      overrides: { auth: { oidc: oidcSettings(idp.issuer) } },
    });
    team = await createAccount(harness.app, harness.adminKey, 'team');
    const person = (account: string, roles: string[], email: string) => ({
      password: `${email}-password`,
      claims: {
        email,
        email_verified: true,
        name: email.split('@')[0],
        platform_account: account,
        roles,
      },
    });
    for (const provider of [idp, other, impostor]) {
      provider.people.set('alice', person(team.id, ['viewer', 'unmapped'], 'alice@example.com'));
      provider.people.set('bob', person(team.id, ['contractor'], 'bob@example.com'));
      provider.people.set('carol', person('acct_doesnotexist', ['viewer'], 'carol@example.com'));
    }
  });
  afterAll(async () => {
    await harness?.close();
    await Promise.all([idp?.close(), other?.close(), impostor?.close()]);
  });

  async function startSignIn(app = harness, returnTo = '/keys') {
    const response = await app.app.inject({
      method: 'GET',
      url: `/v1/auth/oidc/login?return_to=${encodeURIComponent(returnTo)}`,
      headers: { host },
    });
    const setCookie = response.headers['set-cookie'];
    return {
      response,
      location: String(response.headers.location ?? ''),
      cookie: cookieValue(setCookie, 'platform_sso'),
      setCookie: String(setCookie),
    };
  }

  function callback(answer: URL, cookie: string | undefined, accept = 'application/json') {
    return harness.app.inject({
      method: 'GET',
      url: `/v1/auth/oidc/callback${answer.search}`,
      headers: {
        host,
        accept,
        ...(cookie === undefined ? {} : { cookie: `platform_sso=${cookie}` }),
      },
    });
  }

  /** A whole sign-in of `username` (the authorization URL changed by `alter` first). */
  async function signInAs(username: string, alter: (url: URL) => void = () => undefined) {
    const started = await startSignIn();
    const url = new URL(started.location);
    alter(url);
    const answer = await signIn(url.href, username, `${username}@example.com-password`);
    return { started, answer, response: await callback(answer, started.cookie) };
  }

  const me = (session: string) =>
    harness.app.inject({
      method: 'GET',
      url: '/v1/auth/me',
      headers: { host, cookie: `platform_session=${session}` },
    });

  /** A refusal: the error, and neither a session cookie nor a session row. */
  function expectRefused(
    response: Awaited<ReturnType<typeof callback>>,
    status: number,
    code: string,
  ): string {
    expect(response.statusCode, response.body).toBe(status);
    expect(cookieValue(response.headers['set-cookie'], 'platform_session')).toBeUndefined();
    const error = response.json<ErrorJson>().error;
    expect(error.code).toBe(code);
    expect(response.body).not.toContain(clientSecret);
    return error.message;
  }

  it('tells the login page that single sign-on is on', async () => {
    const response = await harness.app.inject({ method: 'GET', url: '/v1/auth/oidc' });
    expect(response.json()).toEqual({
      object: 'sso_settings',
      enabled: true,
      provider: 'Test IdP',
      login_url: '/v1/auth/oidc/login',
    });
  });

  it('starts with PKCE, state and nonce, bound to the browser by a short-lived cookie', async () => {
    const started = await startSignIn();
    expect(started.response.statusCode).toBe(303);
    const url = new URL(started.location);
    expect(url.origin).toBe(idp.origin);
    expect(url.searchParams.get('client_id')).toBe(clientId);
    expect(url.searchParams.get('redirect_uri')).toBe(redirectUrl);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(url.searchParams.get('state')).toMatch(/^[\w-]{20,}$/);
    expect(url.searchParams.get('nonce')).toMatch(/^[\w-]{20,}$/);
    expect(started.location).not.toContain(clientSecret);
    expect(started.setCookie).toMatch(/HttpOnly/);
    expect(started.setCookie).toMatch(/SameSite=Lax/);
    expect(started.setCookie).toMatch(/Path=\/v1\/auth\/oidc\/callback/);
    expect(started.setCookie).toMatch(/Max-Age=600/);
    // Only the cookie value's hash is stored, never the value.
    const rows = await harness.services.storage.db
      .selectFrom('sso_login_states')
      .selectAll()
      .execute();
    expect(JSON.stringify(rows)).not.toContain(started.cookie!);
  });

  it('signs a person in as the account and scopes their claims map to, with a key login’s session rules', async () => {
    const { response } = await signInAs('alice');
    expect(response.statusCode, response.body).toBe(303);
    expect(response.headers.location).toBe('/keys');
    const setCookie = String(response.headers['set-cookie']);
    expect(setCookie).toMatch(/platform_session=[^;]+;.*HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const session = cookieValue(response.headers['set-cookie'], 'platform_session')!;

    const who = await me(session);
    expect(who.statusCode, who.body).toBe(200);
    const principal = who.json<MeJson>();
    expect(principal).toMatchObject({
      authenticated_by: 'sso',
      account: { id: team.id, name: 'team' },
      key: { name: 'sso: alice@example.com' },
      user: { email: 'alice@example.com', subject: 'alice', roles: ['viewer', 'unmapped'] },
    });
    expect([...principal.scopes].sort()).toEqual(['conversations:read', 'usage:read']);
    // The sign-in is in the account's audit log, the person its actor; no secret is.
    const records = await harness.services.storage.db
      .selectFrom('audit_records')
      .selectAll()
      .where('account_id', '=', team.id)
      .where('action', '=', 'auth.sso_login')
      .execute();
    expect(records.at(-1)).toMatchObject({
      actor_kind: 'user',
      actor_user: principal.user!.id,
      target_type: 'sso_user',
      target_id: principal.user!.id,
    });
    expect(JSON.stringify(records)).not.toContain(clientSecret);
    expect(JSON.stringify(records)).not.toContain(session);

    // The scopes hold: usage is readable, keys (admin) are not.
    const withCookie = { host, cookie: `platform_session=${session}` };
    const usage = await harness.app.inject({
      method: 'GET',
      url: '/v1/usage',
      headers: withCookie,
    });
    expect(usage.statusCode, usage.body).toBe(200);
    const keys = await harness.app.inject({
      method: 'GET',
      url: '/v1/api-keys',
      headers: withCookie,
    });
    expect(keys.statusCode).toBe(403);
    // CSRF as for a key login's session: a change without the token is refused.
    const forged = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/logout',
      headers: { ...withCookie, origin: ownOrigin },
    });
    expect(forged.json<ErrorJson>().error.code).toBe('csrf_failed');
    const logout = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/logout',
      headers: { ...withCookie, origin: ownOrigin, 'x-csrf-token': principal.session!.csrf_token },
    });
    // The provider offers RP-initiated logout: the answer names it, for this client, coming back
    // to the dashboard's start page.
    const ended = logout.json<{
      success: boolean;
      session_ended: boolean;
      end_session_url: string;
    }>();
    expect(ended).toMatchObject({ success: true, session_ended: true });
    const providerLogout = new URL(ended.end_session_url);
    expect(providerLogout.origin).toBe(idp.origin);
    expect(Object.fromEntries(providerLogout.searchParams)).toEqual({
      client_id: clientId,
      post_logout_redirect_uri: 'http://127.0.0.1:9/',
    });
    expect((await me(session)).json<ErrorJson>().error.code).toBe('invalid_session');
  });

  it('provisions a person once, follows their claims at each sign-in, and ends with their key', async () => {
    const first = (await signInAs('alice')).response;
    const firstMe = (
      await me(cookieValue(first.headers['set-cookie'], 'platform_session')!)
    ).json<MeJson>();
    idp.people.get('alice')!.claims.roles = ['operator'];
    try {
      const second = (await signInAs('alice')).response;
      const session = cookieValue(second.headers['set-cookie'], 'platform_session')!;
      const secondMe = (await me(session)).json<MeJson>();
      expect(secondMe.user!.id).toBe(firstMe.user!.id);
      expect(secondMe.key.id).toBe(firstMe.key.id);
      expect(secondMe.scopes).toEqual(['admin']);
      const users = await harness.services.storage.db
        .selectFrom('sso_users')
        .selectAll()
        .where('subject', '=', 'alice')
        .execute();
      expect(users).toHaveLength(1);

      // What the person changes in their session is audited with them as its actor.
      const minted = await harness.app.inject({
        method: 'POST',
        url: '/v1/api-keys',
        headers: {
          host,
          cookie: `platform_session=${session}`,
          origin: ownOrigin,
          'x-csrf-token': secondMe.session!.csrf_token,
        },
        payload: { name: 'made in a single sign-on session', scopes: ['chat:read'] },
      });
      expect(minted.statusCode, minted.body).toBe(201);
      const made = await harness.services.storage.db
        .selectFrom('audit_records')
        .selectAll()
        .where('target_id', '=', minted.json<{ id: string }>().id)
        .executeTakeFirstOrThrow();
      expect(made).toMatchObject({
        action: 'api_key.create',
        actor_kind: 'user',
        actor_user: secondMe.user!.id,
      });

      // An administrator of the account revokes the person's key: their session ends at once.
      const revoked = await harness.app.inject({
        method: 'DELETE',
        url: `/v1/api-keys/${secondMe.key.id}`,
        headers: bearer(team.admin_key),
      });
      expect(revoked.statusCode, revoked.body).toBe(200);
      expect((await me(session)).json<ErrorJson>().error.code).toBe('revoked_api_key');
      // Their next sign-in (the provider still grants them a role) mints a new key.
      const third = (await signInAs('alice')).response;
      const thirdMe = (
        await me(cookieValue(third.headers['set-cookie'], 'platform_session')!)
      ).json<MeJson>();
      expect(thirdMe.user!.id).toBe(firstMe.user!.id);
      expect(thirdMe.key.id).not.toBe(firstMe.key.id);
    } finally {
      idp.people.get('alice')!.claims.roles = ['viewer', 'unmapped'];
    }
  });

  it('refuses a forged state, and the sign-in is then used up', async () => {
    const started = await startSignIn();
    const answer = await signIn(started.location, 'alice', 'alice@example.com-password');
    const forged = new URL(answer);
    forged.searchParams.set('state', 'forged-state-of-an-attacker');
    const message = expectRefused(await callback(forged, started.cookie), 401, 'sso_failed');
    expect(message).toMatch(/state/);
    // The genuine answer cannot be used after: a sign-in is taken once.
    expectRefused(await callback(answer, started.cookie), 401, 'sso_failed');
  });

  it('refuses an answer without the browser’s cookie, or replayed', async () => {
    const started = await startSignIn();
    const answer = await signIn(started.location, 'alice', 'alice@example.com-password');
    // Another browser (an attacker's code planted in a victim's): no cookie of this sign-in.
    const message = expectRefused(await callback(answer, undefined), 401, 'sso_failed');
    expect(message).toMatch(/no sign-in was started in this browser/);
    const ok = await callback(answer, started.cookie);
    expect(ok.statusCode, ok.body).toBe(303);
    expectRefused(await callback(answer, started.cookie), 401, 'sso_failed');
  });

  it('refuses an ID token issued for another nonce', async () => {
    const { response } = await signInAs('alice', (url) =>
      url.searchParams.set('nonce', 'a-nonce-this-browser-never-sent'),
    );
    const message = expectRefused(response, 401, 'sso_failed');
    expect(message).toMatch(/nonce/);
  });

  it('refuses an answer from another issuer', async () => {
    // The same sign-in completed at another provider (which knows the same client).
    const started = await startSignIn();
    const url = new URL(started.location);
    const elsewhere = new URL(`${url.pathname}${url.search}`, other.origin);
    const answer = await signIn(elsewhere.href, 'alice', 'alice@example.com-password');
    expect(answer.searchParams.get('iss')).toBe(other.issuer);
    const message = expectRefused(await callback(answer, started.cookie), 401, 'sso_failed');
    expect(message).toMatch(/iss/);
  });

  it('refuses a provider whose discovery document names another issuer', async () => {
    const misled = await startTestApp({
      dialect,
      database: harness.database,
      adminKey: harness.adminKey,
      env: { [secretEnv]: clientSecret, LOGIN_ATTEMPTS_PER_MINUTE: '1000' },
      overrides: { auth: { oidc: oidcSettings(impostor.origin) } },
    });
    try {
      const started = await startSignIn(misled);
      expect(started.response.statusCode).toBe(401);
      expect(started.cookie).toBeUndefined();
      expect(started.response.json<ErrorJson>().error.message).toMatch(/names another issuer/);
    } finally {
      await misled.close();
    }
  });

  it('refuses a person whose claims map to no scope, or to no account, and provisions nothing', async () => {
    const bob = (await signInAs('bob')).response;
    expect(expectRefused(bob, 403, 'sso_denied')).toMatch(/'contractor'/);
    // The refusal is in the owner account's audit log, with who was refused and why.
    const refusals = await harness.services.storage.db
      .selectFrom('audit_records')
      .selectAll()
      .where('action', '=', 'auth.sso_login_failed')
      .where('actor_user', '=', 'bob')
      .execute();
    expect(refusals).toHaveLength(1);
    expect(refusals[0]!.changes).toContain('sso_denied');
    expect(refusals[0]!.account_id).not.toBe(team.id);
    const carol = (await signInAs('carol')).response;
    expect(expectRefused(carol, 403, 'sso_denied')).toMatch(/acct_doesnotexist/);
    const provisioned = await harness.services.storage.db
      .selectFrom('sso_users')
      .select('subject')
      .where('subject', 'in', ['bob', 'carol'])
      .execute();
    expect(provisioned).toEqual([]);
    const keys = await harness.services.storage.db
      .selectFrom('api_keys')
      .select('name')
      .where('name', 'in', ['sso: bob@example.com', 'sso: carol@example.com'])
      .execute();
    expect(keys).toEqual([]);
  });

  it('shows a browser the refusal as a page', async () => {
    const started = await startSignIn();
    const answer = await signIn(started.location, 'bob', 'bob@example.com-password');
    const page = await callback(answer, started.cookie, 'text/html,application/xhtml+xml');
    expect(page.statusCode).toBe(403);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(page.body).toContain('may not use this dashboard');
    expect(page.body).toContain('&#39;contractor&#39;');
    expect(cookieValue(page.headers['set-cookie'], 'platform_session')).toBeUndefined();
  });

  it('keeps a return path local', async () => {
    const started = await startSignIn(harness, '//evil.example/phish');
    const answer = await signIn(started.location, 'alice', 'alice@example.com-password');
    const response = await callback(answer, started.cookie);
    expect(response.statusCode, response.body).toBe(303);
    expect(response.headers.location).toBe('/');
  });

  it('keeps login with a key working', async () => {
    const response = await harness.app.inject({
      method: 'POST',
      url: '/v1/auth/login',
      headers: { host },
      payload: { api_key: harness.adminKey },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ authenticated_by: 'session', user: null });
  });

  it('answers 404 saying how to enable it when it is not configured', async () => {
    const plain = await startTestApp({
      dialect,
      database: harness.database,
      adminKey: harness.adminKey,
    });
    try {
      const settings = await plain.app.inject({ method: 'GET', url: '/v1/auth/oidc' });
      expect(settings.json()).toMatchObject({ enabled: false, login_url: null });
      const login = await plain.app.inject({ method: 'GET', url: '/v1/auth/oidc/login' });
      expect(login.statusCode).toBe(404);
      expect(login.json<ErrorJson>().error.message).toMatch(/auth\.oidc/);
    } finally {
      await plain.close();
    }
  });
});

describe('single sign-on configuration', () => {
  const load = (
    oidc: Record<string, unknown>,
    env: Record<string, string> = { S: 's3cr3t-value-xyz' },
  ) =>
    loadConfig({
      env: { DATABASE_URL: 'sqlite::memory:', ...env },
      overrides: { auth: { oidc } } as never,
    });
  const problems = (oidc: Record<string, unknown>, env?: Record<string, string>) => {
    try {
      load(oidc, env);
      return [];
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      return error.problems;
    }
  };
  const base = { issuer: 'https://idp.example.com', client_id: 'c', client_secret_env: 'S' };

  it('takes a valid section and keeps the secret out of the configuration', () => {
    const config = load({ ...base, role_scopes: { staff: ['chat:read'] } });
    expect(config.auth.oidc).toMatchObject({
      issuer: base.issuer,
      clientSecretEnv: 'S',
      roleClaim: 'roles',
    });
    expect(JSON.stringify(config)).not.toContain('s3cr3t-value-xyz');
  });

  it('names each problem', () => {
    expect(problems({ ...base, issuer: 'http://idp.example.com' }).join('\n')).toMatch(
      /must be https/,
    );
    expect(problems({ ...base, issuer: 'http://127.0.0.1:9000' })).toEqual([]);
    expect(problems({ ...base, issuer: 'http://idp.example.com', allow_http: true })).toEqual([]);
    expect(problems(base, {}).join('\n')).toMatch(/environment variable S .* is not set/);
    expect(problems({ ...base, role_scopes: { staff: ['root'] } }).join('\n')).toMatch(
      /'root' is not a scope/,
    );
    expect(
      problems({
        ...base,
        issuer: 'https://idp.example.com/.well-known/openid-configuration',
      }).join('\n'),
    ).toMatch(/issuer identifier itself/);
    expect(problems({ ...base, scopes: ['email'] }).join('\n')).toMatch(/must include 'openid'/);
  });

  it('keeps return paths on this site', () => {
    for (const outside of [
      '//evil.example',
      '/.//evil.example/phish',
      '/%2e//evil.example',
      '/\\evil.example',
      'https://evil.example/',
      'javascript:alert(1)',
      '',
      '/v1/auth/oidc/login',
    ]) {
      expect(safeReturnPath(outside), outside).toBe('/');
    }
    expect(safeReturnPath('/keys?tab=1#top')).toBe('/keys?tab=1#top');
  });
});
