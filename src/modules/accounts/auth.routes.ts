// Dashboard sessions: log in with an API key (exchanged for an HttpOnly cookie), log out, and who
// am I, as a Fastify plugin over the session, key and account services.
import type { FastifyRequest } from 'fastify';
import { access } from '../../auth/scopes.js';
import type { AppConfig } from '../../config/config.js';
import { featurePlugin, type FeatureApp, type FeaturePlugin } from '../../http/feature-plugin.js';
import {
  clearSessionCookie,
  ownOrigin,
  sessionTokenOf,
  setSessionCookie,
} from '../../http/session-cookie.js';
import { principalOf } from '../../http/types.js';
import type { AccountService } from './account-service.js';
import type { ApiKeyService } from './api-key-service.js';
import type { Principal } from './authenticator.js';
import type { LoginThrottle } from './login-throttle.js';
import { LoginBody, LogoutResponseSchema, MeSchema } from './auth.schemas.js';
import { csrfTokenFor, type SessionService } from './session-service.js';
import type { SsoService } from './sso/sso-service.js';
import type { SsoUsersRepository } from './sso/sso-users.repository.js';

export interface AuthRouteServices {
  /** The session cookie's attributes and lifetime. */
  readonly config: Pick<AppConfig, 'sessions'>;
  readonly sessions: SessionService;
  readonly loginThrottle: LoginThrottle;
  readonly apiKeys: ApiKeyService;
  readonly accounts: AccountService;
  /** The people of single sign-on: a session on one's key is theirs (`authenticated_by: sso`). */
  readonly ssoUsers?: Pick<SsoUsersRepository, 'findUserByKey'>;
  /** Single sign-on when configured: a person's logout also names the provider's own logout. */
  readonly sso?: Pick<SsoService, 'endSessionUrl'> | null;
}

/** The session a principal came with, as the answer shows it. */
interface SessionView {
  id: string;
  createdAt: string;
  expiresAt: string;
  idleExpiresAt: string;
  token: string;
}

/** The routes of sessions, registered by app.ts like any Fastify plugin. */
export function authPlugin(services: AuthRouteServices): FeaturePlugin {
  return featurePlugin('auth', (app) => {
    loginRoutes(app, services);
    principalRoutes(app, services);
  });
}

/** Who is calling: account, key, scopes and tier, and the session when there is one. */
async function describePrincipal(
  services: AuthRouteServices,
  principal: Principal,
  session: SessionView | null,
) {
  const [key, account, user] = await Promise.all([
    services.apiKeys.get(principal.accountId, principal.keyId),
    services.accounts.get(principal.accountId),
    // An SSO person's key is never handed out: only their sessions use it.
    session === null ? undefined : services.ssoUsers?.findUserByKey(principal.keyId),
  ]);
  return {
    object: 'principal' as const,
    authenticated_by:
      session === null
        ? ('api_key' as const)
        : user === undefined
          ? ('session' as const)
          : ('sso' as const),
    account: { id: account.id, name: account.name, kind: account.kind },
    key: {
      id: key.id,
      name: key.name,
      display_key: key.displayKey,
      expires_at: key.expiresAt,
    },
    scopes: [...principal.scopes],
    tier: principal.tier,
    user:
      user === undefined
        ? null
        : {
            id: user.id,
            issuer: user.issuer,
            subject: user.subject,
            email: user.email,
            name: user.name,
            roles: user.roles,
          },
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

/** POST /v1/auth/login and POST /v1/auth/logout. */
function loginRoutes(app: FeatureApp, services: AuthRouteServices): void {
  const { config } = services;
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
        body: LoginBody,
        response: { 200: MeSchema },
      },
    },
    async (request, reply) => {
      await services.loginThrottle.attempt(request.ip);
      const userAgent = request.headers['user-agent'] ?? '';
      const opened = await services.sessions.login(request.body.api_key, request.ip, userAgent);
      setSessionCookie(request, reply, config, opened.token);
      void reply.header('cache-control', 'no-store');
      return describePrincipal(services, opened.principal, {
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
          "Ends the session of the cookie at once (on every instance within a second) and clears the cookie. With an API key instead of the cookie there is no session to end; the answer is the same. For a session opened by single sign-on, `end_session_url` is the identity provider's logout (OpenID Connect RP-initiated logout, when the provider offers it), where the dashboard sends the browser next; null otherwise.",
        response: { 200: LogoutResponseSchema },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const token = sessionTokenOf(request);
      const ended = principal.sessionId !== undefined && token !== undefined;
      if (ended) await services.sessions.logout(token);
      clearSessionCookie(request, reply, config);
      return {
        success: true,
        session_ended: ended,
        end_session_url: ended ? await providerLogout(services, request, principal.keyId) : null,
      };
    },
  );
}

/** The provider's logout URL when the session was a single-sign-on person's (null otherwise). */
async function providerLogout(
  services: AuthRouteServices,
  request: FastifyRequest,
  keyId: string,
): Promise<string | null> {
  const { sso, ssoUsers } = services;
  if (!sso || ssoUsers === undefined) return null;
  if ((await ssoUsers.findUserByKey(keyId)) === undefined) return null;
  try {
    return await sso.endSessionUrl(ownOrigin(request));
  } catch (error) {
    // The session is ended here whatever the provider does; only its own logout is skipped.
    request.log.warn({ err: error }, 'the identity provider’s logout could not be named');
    return null;
  }
}

/** GET /v1/auth/me. */
function principalRoutes(app: FeatureApp, services: AuthRouteServices): void {
  app.get(
    '/v1/auth/me',
    {
      config: { access: access.anyKey() },
      schema: {
        operationId: 'getCurrentPrincipal',
        tags: ['Sessions'],
        summary: 'Who is calling',
        description:
          'The account, key, scopes and tier of the request, and its session (with its `csrf_token`) when it came with the session cookie; for a session opened by single sign-on, `authenticated_by: sso` and the person (`user`). The dashboard calls it on load.',
        response: { 200: MeSchema },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const token = sessionTokenOf(request);
      void reply.header('cache-control', 'no-store');
      if (principal.sessionId === undefined || token === undefined) {
        return describePrincipal(services, principal, null);
      }
      const session = await services.sessions.authenticate(token, request.ip);
      return describePrincipal(services, principal, {
        id: session.record.id,
        createdAt: session.record.createdAt,
        expiresAt: session.record.expiresAt,
        idleExpiresAt: session.idleExpiresAt,
        token,
      });
    },
  );
}
