// Single sign-on's routes: whether it is on (the login page's button), the start of a sign-in (a
// redirect to the provider, with the cookie that binds it to this browser) and the callback that
// ends it in the dashboard's session cookie, or in a clear refusal and no session.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { access } from '../../../auth/scopes.js';
import type { AppConfig } from '../../../config/config.js';
import { AppError } from '../../../errors/app-error.js';
import {
  featurePlugin,
  type FeatureApp,
  type FeaturePlugin,
} from '../../../http/feature-plugin.js';
import { ownOrigin, secureCookie, setSessionCookie } from '../../../http/session-cookie.js';
import type { LoginThrottle } from '../login-throttle.js';
import type { SsoAuditSink } from './sso-audit.js';
import { callbackPath, loginTtlMs, SignInFailure, type SsoService } from './sso-service.js';
import { SsoCallbackQuery, SsoLoginQuery, SsoSettingsSchema } from './sso.schemas.js';

/** The cookie of a sign-in under way: sent back only to the callback, by the provider's redirect. */
export const signInCookieName = 'platform_sso';

export interface SsoRouteServices {
  readonly config: Pick<AppConfig, 'sessions'>;
  /** null: single sign-on is not configured. */
  readonly sso: SsoService | null;
  readonly loginThrottle: LoginThrottle;
  readonly audit?: SsoAuditSink;
}

const notConfigured = () =>
  new AppError(
    'not_found',
    'Single sign-on is not configured on this service. An operator enables it with auth.oidc in the config file (issuer, client_id, client_secret_env, role_scopes; see docs/sso.md). Log in with an API key meanwhile.',
  );

/** Lax, not Strict: the provider's redirect back to the callback is a cross-site navigation. */
function signInCookieOptions(request: FastifyRequest, config: Pick<AppConfig, 'sessions'>) {
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: secureCookie(request, config),
    path: callbackPath,
  };
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.codePointAt(0)!.toString(10)};`);
}

/** A refusal as a browser shows it: the message, and the way back to the login page. */
function refusalPage(reply: FastifyReply, error: AppError): FastifyReply {
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in refused</title></head>
<body><main><h1>Sign-in refused</h1>
<p id="sso-error" data-code="${escapeHtml(error.code)}">${escapeHtml(error.message)}</p>
<p><a href="/">Back to the login page</a></p></main></body></html>
`;
  return reply
    .code(error.status)
    .header(
      'content-security-policy',
      "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    )
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(body);
}

export function ssoPlugin(services: SsoRouteServices): FeaturePlugin {
  return featurePlugin('sso', (app) => {
    settingsRoute(app, services);
    loginRoute(app, services);
    callbackRoute(app, services);
  });
}

/** GET /v1/auth/oidc. */
function settingsRoute(app: FeatureApp, { sso }: SsoRouteServices): void {
  app.get(
    '/v1/auth/oidc',
    {
      config: { access: access.public() },
      schema: {
        operationId: 'getSsoSettings',
        tags: ['Sessions'],
        summary: 'Whether single sign-on is on',
        description:
          "Whether the dashboard's login page offers single sign-on (OpenID Connect, `auth.oidc` in the config file), the provider's name for its button, and where the browser starts a sign-in.",
        response: { 200: SsoSettingsSchema },
      },
    },
    () => ({
      object: 'sso_settings' as const,
      enabled: sso !== null,
      provider: sso?.displayName ?? null,
      login_url: sso === null ? null : '/v1/auth/oidc/login',
    }),
  );
}

/** GET /v1/auth/oidc/login. */
function loginRoute(app: FeatureApp, services: SsoRouteServices): void {
  app.get(
    '/v1/auth/oidc/login',
    {
      config: { access: access.public() },
      schema: {
        operationId: 'startSsoLogin',
        tags: ['Sessions'],
        summary: 'Sign in to the dashboard with the identity provider',
        description:
          "Starts an OpenID Connect authorization-code sign-in with PKCE: answers 303 to the provider's authorization endpoint and sets the short-lived `platform_sso` cookie (HttpOnly, SameSite=Lax, for the callback only) that binds the sign-in to this browser. Attempts count against `LOGIN_ATTEMPTS_PER_MINUTE`. 404 when single sign-on is not configured.",
        querystring: SsoLoginQuery,
      },
    },
    async (request, reply) => {
      const { sso, config } = services;
      if (sso === null) throw notConfigured();
      await services.loginThrottle.attempt(request.ip);
      const started = await sso.begin(request.query.return_to, ownOrigin(request));
      return reply
        .setCookie(signInCookieName, started.cookieValue, {
          ...signInCookieOptions(request, config),
          maxAge: Math.floor(loginTtlMs / 1000),
        })
        .header('cache-control', 'no-store')
        .redirect(started.authorizationUrl, 303);
    },
  );
}

/** GET /v1/auth/oidc/callback. */
function callbackRoute(app: FeatureApp, services: SsoRouteServices): void {
  app.get(
    callbackPath,
    {
      config: { access: access.public() },
      schema: {
        operationId: 'finishSsoLogin',
        tags: ['Sessions'],
        summary: 'The identity provider sends the browser back here',
        description:
          "Ends the sign-in the `platform_sso` cookie names (once): openid-client checks the state, the issuer, the PKCE verifier, the ID token's signature, audience and nonce; the person's claims are mapped to an account and scopes (deny by default), the person is provisioned on first sign-in, and the answer is 303 to the dashboard with the `platform_session` cookie, as a key login sets it. A refusal sets no session: 401 `sso_failed` (a check failed), 403 `sso_denied` (the claims map to no account or scope) — an HTML page for a browser, the error body otherwise.",
        querystring: SsoCallbackQuery,
      },
    },
    async (request, reply) => {
      const { sso, config, audit } = services;
      if (sso === null) throw notConfigured();
      void reply
        .clearCookie(signInCookieName, signInCookieOptions(request, config))
        .header('cache-control', 'no-store')
        .header('referrer-policy', 'no-referrer');
      const rawUrl = request.raw.url ?? '';
      const query = rawUrl.includes('?') ? rawUrl.slice(rawUrl.indexOf('?')) : '';
      const client = { address: request.ip, userAgent: request.headers['user-agent'] ?? '' };
      try {
        const finished = await sso.finish(request.cookies[signInCookieName], query, client);
        await audit?.signedIn({
          accountId: finished.user.accountId,
          userId: finished.user.id,
          subject: finished.user.subject,
          email: finished.user.email,
          sessionId: finished.opened.record.id,
          scopes: finished.opened.principal.scopes,
          ip: request.ip,
        });
        setSessionCookie(request, reply, config, finished.opened.token);
        return await reply.redirect(finished.returnTo, 303);
      } catch (failure) {
        if (!(failure instanceof SignInFailure)) throw failure;
        request.log.info(
          { code: failure.error.code, reason: failure.error.message },
          'single sign-on refused',
        );
        await audit?.refused({
          accountId: null,
          userId: null,
          subject: failure.subject,
          email: failure.email,
          sessionId: null,
          scopes: [],
          ip: request.ip,
          code: failure.error.code,
          reason: failure.error.message,
        });
        if ((request.headers.accept ?? '').includes('text/html')) {
          return refusalPage(reply, failure.error);
        }
        throw failure.error;
      }
    },
  );
}
