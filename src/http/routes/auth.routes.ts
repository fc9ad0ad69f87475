// Dashboard sessions: log in with an API key (exchanged for an HttpOnly cookie), log out, and who am I.
import Type from 'typebox';
import { access, scopes } from '../../auth/scopes.js';
import type { Services } from '../../services.js';
import { commonParameters, NullableTimestamp, Timestamp } from '../schemas/common.js';
import { clearSessionCookie, sessionTokenOf, setSessionCookie } from '../session-cookie.js';
import { csrfTokenFor } from '../../modules/accounts/session-service.js';
import { principalOf, type App } from '../types.js';

const ScopeSchema = Type.Enum(scopes);

const SessionKeySchema = Type.Object({
  id: Type.String({ description: 'key_…' }),
  name: Type.String(),
  display_key: Type.String(),
  expires_at: NullableTimestamp(),
});

const SessionInfoSchema = Type.Object({
  id: Type.String({ description: 'sess_…' }),
  created_at: Timestamp(),
  expires_at: Timestamp('The absolute end of the session, however active.'),
  idle_expires_at: Timestamp('When the session ends unless it is used again before.'),
  csrf_token: Type.String({
    description:
      'Send it back in X-CSRF-Token on every request made with the cookie that changes state (POST, PUT, PATCH, DELETE).',
  }),
});

const MeSchema = Type.Object(
  {
    object: Type.Literal('principal'),
    authenticated_by: Type.Union([Type.Literal('session'), Type.Literal('api_key')]),
    account: Type.Object({
      id: Type.String(),
      name: Type.String(),
      kind: Type.Union([Type.Literal('owner'), Type.Literal('member')]),
    }),
    key: SessionKeySchema,
    scopes: Type.Array(ScopeSchema),
    tier: Type.String(),
    session: Type.Union([SessionInfoSchema, Type.Null()], {
      description: 'The session, when the request came with the session cookie.',
    }),
  },
  { $id: 'Principal', title: 'Principal' },
);

export function authRoutes(app: App, services: Services): void {
  const { config } = services;

  async function describe(
    principal: ReturnType<typeof principalOf>,
    session: {
      id: string;
      createdAt: string;
      expiresAt: string;
      idleExpiresAt: string;
      token: string;
    } | null,
  ) {
    const [key, account] = await Promise.all([
      services.apiKeys.get(principal.accountId, principal.keyId),
      services.accounts.get(principal.accountId),
    ]);
    return {
      object: 'principal' as const,
      authenticated_by: session === null ? ('api_key' as const) : ('session' as const),
      account: { id: account.id, name: account.name, kind: account.kind },
      key: {
        id: key.id,
        name: key.name,
        display_key: key.displayKey,
        expires_at: key.expiresAt,
      },
      scopes: [...principal.scopes],
      tier: principal.tier,
      session:
        session === null
          ? null
          : {
              id: session.id,
              created_at: session.createdAt,
              expires_at: session.expiresAt,
              idle_expires_at: session.idleExpiresAt,
              csrf_token: csrfTokenFor(session.token),
            },
    };
  }

  app.post(
    '/v1/auth/login',
    {
      config: { access: access.public() },
      schema: {
        operationId: 'login',
        tags: ['Sessions'],
        summary: 'Log in to the dashboard with an API key',
        description:
          "Exchanges an API key for a session: the answer sets the `platform_session` cookie (HttpOnly, SameSite=Strict, Secure over HTTPS) and carries the `csrf_token` that cookie-authenticated requests changing state send in `X-CSRF-Token`, from the service's own origin (`PUBLIC_URL`'s when set, else the request's Host) or one in `CORS_ORIGINS`. The key is checked exactly as on any request (revoked, expired, address) and is not kept by the browser. The session has the key’s account, scopes, tier and rate limits, ends after `SESSION_IDLE_TIMEOUT_MS` without use or `SESSION_MAX_AGE_MS` after login, and ends with the key. Attempts are limited per client address (`LOGIN_ATTEMPTS_PER_MINUTE`, 429 beyond).",
        body: Type.Object(
          {
            api_key: Type.String({
              minLength: 1,
              maxLength: 200,
              description: 'The API key to log in with.',
            }),
            ...commonParameters(),
          },
          { additionalProperties: false },
        ),
        response: { 200: MeSchema },
      },
    },
    async (request, reply) => {
      await services.loginThrottle.attempt(request.ip);
      const userAgent = request.headers['user-agent'] ?? '';
      const opened = await services.sessions.login(request.body.api_key, request.ip, userAgent);
      setSessionCookie(request, reply, config, opened.token);
      void reply.header('cache-control', 'no-store');
      return describe(opened.principal, {
        id: opened.record.id,
        createdAt: opened.record.createdAt,
        expiresAt: opened.record.expiresAt,
        idleExpiresAt: new Date(
          Math.min(
            Date.parse(opened.record.lastSeenAt) + services.sessions.idleTimeoutMs,
            Date.parse(opened.record.expiresAt),
          ),
        ).toISOString(),
        token: opened.token,
      });
    },
  );

  app.post(
    '/v1/auth/logout',
    {
      config: { access: access.anyKey() },
      schema: {
        operationId: 'logout',
        tags: ['Sessions'],
        summary: 'Log out of the dashboard',
        description:
          'Ends the session of the cookie at once (on every instance within a second) and clears the cookie. With an API key instead of the cookie there is no session to end; the answer is the same.',
        response: {
          200: Type.Object({ success: Type.Boolean(), session_ended: Type.Boolean() }),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const token = sessionTokenOf(request);
      const ended = principal.sessionId !== undefined && token !== undefined;
      if (ended) await services.sessions.logout(token);
      clearSessionCookie(request, reply, config);
      return { success: true, session_ended: ended };
    },
  );

  app.get(
    '/v1/auth/me',
    {
      config: { access: access.anyKey() },
      schema: {
        operationId: 'getCurrentPrincipal',
        tags: ['Sessions'],
        summary: 'Who is calling',
        description:
          'The account, key, scopes and tier of the request, and its session (with its `csrf_token`) when it came with the session cookie. The dashboard calls it on load.',
        response: { 200: MeSchema },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const token = sessionTokenOf(request);
      void reply.header('cache-control', 'no-store');
      if (principal.sessionId === undefined || token === undefined) {
        return describe(principal, null);
      }
      const session = await services.sessions.authenticate(token, request.ip);
      return describe(principal, {
        id: session.record.id,
        createdAt: session.record.createdAt,
        expiresAt: session.record.expiresAt,
        idleExpiresAt: session.idleExpiresAt,
        token,
      });
    },
  );
}
