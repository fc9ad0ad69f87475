// Access control for every route: the route's declared rule is enforced in the contract's order
// (key → address → scope → rate limit); a route that declares no rule cannot even be registered.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Authenticator } from '../auth/authenticator.js';
import {
  rateLimitHeaders,
  type RateLimitDecision,
  type RateLimiter,
} from '../auth/rate-limiter.js';
import { missingScope, type RouteAccess } from '../auth/scopes.js';
import { AppError } from '../errors/app-error.js';
import type { RouteRegistry } from './route-registry.js';
import type { App } from './types.js';

export interface AccessControlOptions {
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  registry: RouteRegistry;
  /** URL prefixes served by third-party plugins that are public by nature (the docs UI's files). */
  publicPrefixes: readonly string[];
}

const securityRequirement = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

function describeAccess(access: RouteAccess): string {
  switch (access.kind) {
    case 'public':
      return 'No API key needed.';
    case 'key':
      return 'Any valid API key.';
    case 'scopes':
      return `Requires scope${access.scopes.length > 1 ? 's' : ''} ${access.scopes.map((scope) => `\`${scope}\``).join(' and ')}${access.ownerOnly ? ' on a key of the platform owner account' : ''}.`;
  }
}

/** The presented key: `Authorization: Bearer <key>` (one space) or `X-API-Key: <key>`. */
export function presentedKey(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization !== undefined && authorization.startsWith('Bearer ')) {
    return authorization.slice('Bearer '.length);
  }
  const headerKey = request.headers['x-api-key'];
  if (typeof headerKey === 'string' && headerKey !== '') return headerKey;
  if (authorization !== undefined && authorization !== '') {
    throw new AppError(
      'invalid_api_key',
      "The Authorization header must be 'Bearer <key>', with exactly one space.",
    );
  }
  return undefined;
}

export function installAccessControl(app: App, options: AccessControlOptions): void {
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    options.registry.add(route.method, route.url);
    let access = route.config?.access;
    if (
      access === undefined &&
      options.publicPrefixes.some((prefix) => route.url.startsWith(prefix))
    ) {
      access = { kind: 'public' };
      route.config = { ...route.config, access };
    }
    if (access === undefined) {
      throw new Error(
        `Route ${String(route.method)} ${route.url} does not declare its access rule`,
      );
    }
    const schema = (route.schema ??= {}) as Record<string, unknown>;
    if (access.kind !== 'public') {
      schema.security = securityRequirement;
      schema['x-required-scopes'] = access.kind === 'scopes' ? [...access.scopes] : [];
      if (access.kind === 'scopes' && access.ownerOnly) schema['x-owner-account-only'] = true;
    }
    if (typeof schema.description === 'string' || typeof schema.summary === 'string') {
      const description = typeof schema.description === 'string' ? schema.description : '';
      schema.description = `${description}${description === '' ? '' : '\n\n'}${describeAccess(access)}`;
    }
    const response = (schema.response ??= {}) as Record<string, unknown>;
    response['4xx'] ??= { $ref: 'ErrorBody#' };
    response['5xx'] ??= { $ref: 'ErrorBody#' };
  });

  const setRateLimitHeaders = (reply: FastifyReply, decision: RateLimitDecision) => {
    for (const [name, value] of Object.entries(rateLimitHeaders(decision)))
      void reply.header(name, value);
  };

  app.addHook('onRequest', async (request, reply) => {
    const access = request.routeOptions.config.access;
    if (request.is404 || access === undefined || access.kind === 'public') return;

    const principal = await options.authenticator.authenticate(presentedKey(request), request.ip);
    request.principal = principal;

    if (access.kind === 'scopes') {
      const missing = missingScope(principal.scopes, access.scopes);
      const notOwner = access.ownerOnly && principal.accountKind !== 'owner';
      if (missing !== null || notOwner) {
        setRateLimitHeaders(reply, await options.rateLimiter.peek(principal.keyId, principal.tier));
        throw missing !== null
          ? new AppError('insufficient_permissions', `This API key lacks the '${missing}' scope.`, {
              details: { required_scope: missing },
            })
          : new AppError(
              'insufficient_permissions',
              "Only admin keys of the platform owner's account may do this.",
              { details: { required_scope: 'admin' } },
            );
      }
    }

    const decision = await options.rateLimiter.consume(principal.keyId, principal.tier);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) {
      const { limitedBy } = decision;
      throw new AppError(
        'rate_limit_exceeded',
        `Rate limit of ${limitedBy.limit} requests per ${limitedBy.window} exceeded for this API key. Retry after ${decision.retryAfterSeconds} s.`,
        {
          details: {
            limit: limitedBy.limit,
            window: limitedBy.window,
            reset_at: new Date(Date.now() + limitedBy.resetMs).toISOString(),
          },
        },
      );
    }
  });
}
