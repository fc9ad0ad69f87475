// The own-origin check of cookie-authenticated requests that change state, on both dialects: with
// PUBLIC_URL set it compares the request's Origin with that address, so a Host header chosen by the
// sender (a DNS-rebinding page, a forged Host behind a lax proxy) no longer makes its own origin
// "the service's"; without PUBLIC_URL the origin is built from Host as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allDialects, type DialectUnderTest } from '../support/dialects.js';
import { bearer, createKey, startTestApp, type TestApp } from '../support/test-app.js';

interface Session {
  cookie: string;
  csrf: string;
}

async function login(app: TestApp, apiKey: string): Promise<Session> {
  const response = await app.app.inject({
    method: 'POST',
    url: '/v1/auth/login',
    payload: { api_key: apiKey },
  });
  expect(response.statusCode, response.body).toBe(200);
  const token = /platform_session=([^;]+)/.exec(String(response.headers['set-cookie']))?.[1];
  return {
    cookie: `platform_session=${token ?? ''}`,
    csrf: response.json<{ session: { csrf_token: string } }>().session.csrf_token,
  };
}

/** A state-changing request with the cookie, the CSRF token, and the given Host and Origin. */
function createConversation(app: TestApp, session: Session, host: string, origin: string) {
  return app.app.inject({
    method: 'POST',
    url: '/v1/conversations',
    headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, host, origin },
    payload: { user_id: 'alice' },
  });
}

function suite(dialect: DialectUnderTest, publicUrl: string | null) {
  let harness: TestApp;
  let session: Session;
  beforeAll(async () => {
    harness = await startTestApp({
      dialect,
      env: publicUrl === null ? {} : { PUBLIC_URL: publicUrl },
    });
    const { key } = await createKey(harness.app, harness.adminKey, {
      scopes: ['conversations:write'],
    });
    session = await login(harness, key);
  });
  afterAll(() => harness.close());
  return {
    harness: () => harness,
    session: () => session,
  };
}

describe.each(allDialects)('own origin of cookie requests ($name)', (dialect) => {
  describe('with PUBLIC_URL', () => {
    const context = suite(dialect, 'https://ai.example.com/platform/');

    it('refuses an Origin that only matches the Host header the sender chose', async () => {
      const response = await createConversation(
        context.harness(),
        context.session(),
        'attacker.example',
        'http://attacker.example',
      );
      expect(response.statusCode).toBe(403);
      expect(response.json<{ error: { code: string; message: string } }>().error).toMatchObject({
        code: 'csrf_failed',
      });
      expect(response.body).toContain('https://ai.example.com');
    });

    it('accepts the public origin whatever Host the proxy forwarded', async () => {
      const response = await createConversation(
        context.harness(),
        context.session(),
        '10.0.0.7:8080',
        'https://ai.example.com',
      );
      expect(response.statusCode, response.body).toBe(201);
    });

    it('does not touch requests authenticated by a key', async () => {
      const response = await context.harness().app.inject({
        method: 'POST',
        url: '/v1/conversations',
        headers: { ...bearer(context.harness().adminKey), origin: 'http://attacker.example' },
        payload: { user_id: 'alice' },
      });
      expect(response.statusCode).toBe(201);
    });
  });

  describe('without PUBLIC_URL (as before)', () => {
    const context = suite(dialect, null);

    it('takes the own origin from the Host header', async () => {
      const same = await createConversation(
        context.harness(),
        context.session(),
        'platform.local:8080',
        'http://platform.local:8080',
      );
      expect(same.statusCode, same.body).toBe(201);
      const other = await createConversation(
        context.harness(),
        context.session(),
        'platform.local:8080',
        'http://elsewhere.example',
      );
      expect(other.statusCode).toBe(403);
    });
  });
});
