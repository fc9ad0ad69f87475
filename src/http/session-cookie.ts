// The dashboard session's cookie and the checks a cookie-authenticated request must pass: the CSRF
// token in X-CSRF-Token and an Origin of the service itself or of an allowed CORS origin.
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { csrfTokenMatches } from '../modules/accounts/session-service.js';
import type { AppConfig } from '../config/config.js';
import { AppError } from '../errors/app-error.js';

export const sessionCookieName = 'platform_session';

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

export function sessionTokenOf(request: FastifyRequest): string | undefined {
  const value = request.cookies[sessionCookieName];
  return value === undefined || value === '' ? undefined : value;
}

/** The request's own origin, from its scheme and its Host header (which the client chooses). */
export function ownOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** Whether the service's cookies are `Secure`: as configured, or (`auto`) when over HTTPS. */
export function secureCookie(
  request: FastifyRequest,
  config: Pick<AppConfig, 'sessions'>,
): boolean {
  const setting = config.sessions.cookieSecure;
  return setting === 'auto' ? request.protocol === 'https' : setting;
}

export function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  config: Pick<AppConfig, 'sessions'>,
  token: string,
): void {
  void reply.setCookie(sessionCookieName, token, {
    httpOnly: true,
    sameSite: 'strict',
    secure: secureCookie(request, config),
    path: '/',
    maxAge: Math.floor(config.sessions.maxAgeMs / 1000),
  });
}

export function clearSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  config: Pick<AppConfig, 'sessions'>,
): void {
  void reply.clearCookie(sessionCookieName, {
    httpOnly: true,
    sameSite: 'strict',
    secure: secureCookie(request, config),
    path: '/',
  });
}

/** The origin a browser request came from: `Origin`, else the origin of `Referer`. */
function requestOrigin(request: FastifyRequest): string | undefined {
  const origin = request.headers.origin;
  if (typeof origin === 'string' && origin !== '' && origin !== 'null') return origin;
  const referer = request.headers.referer;
  if (typeof referer !== 'string' || referer === '') return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return undefined;
  }
}

/**
 * A state-changing request authenticated by the cookie must carry the session's CSRF token and come
 * from this service's own origin or one of `CORS_ORIGINS`; otherwise 403 csrf_failed. The own
 * origin is `PUBLIC_URL`'s when it is set; otherwise it is built from the request's own Host header
 * (and scheme), which whoever sends the request chooses — the reason to set PUBLIC_URL.
 */
export function checkCsrf(
  request: FastifyRequest,
  token: string,
  corsOrigins: readonly string[],
  publicOrigin: string | null = null,
): void {
  if (safeMethods.has(request.method)) return;
  const presented = request.headers['x-csrf-token'];
  if (!csrfTokenMatches(token, typeof presented === 'string' ? presented : undefined)) {
    throw new AppError(
      'csrf_failed',
      "This request is authenticated by the session cookie and changes state, so it must send the login's csrf_token in the X-CSRF-Token header.",
    );
  }
  const origin = requestOrigin(request);
  const own = publicOrigin ?? ownOrigin(request);
  if (origin === undefined || (origin !== own && !corsOrigins.includes(origin))) {
    throw new AppError(
      'csrf_failed',
      `Cookie-authenticated requests that change state must come from ${own} or an origin listed in CORS_ORIGINS; this one came from ${origin ?? 'an unknown origin (no Origin header)'}.`,
    );
  }
}
