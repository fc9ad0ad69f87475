// Access control for every route: the route's declared rule is enforced in the contract's order
// (key → address → scope → rate limit); a route that declares no rule cannot even be registered.
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Authenticator, Principal } from '../modules/accounts/authenticator.js';
import type { FeatureName } from '../modules/health/feature-catalog.js';
import {
  type AccountSubject,
  rateLimitHeaders,
  type RateLimitDecision,
  type RateLimiter,
  rateLimitExceeded,
} from '../modules/accounts/rate-limiter.js';
import { missingScope, type RouteAccess } from '../auth/scopes.js';
import type { SessionService } from '../modules/accounts/session-service.js';
import { AppError, FeatureDisabledError } from '../errors/app-error.js';
import type { RouteRegistry } from './route-registry.js';
import { checkCsrf, sessionTokenOf } from './session-cookie.js';
import { principalOf, type App } from './types.js';

export interface AccessControlOptions {
  /** Which features of the catalog are switched on. */
  features: Readonly<Record<FeatureName, boolean>>;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  sessions: SessionService;
  /** Origins whose cookie-authenticated requests are accepted besides the service's own. */
  corsOrigins: readonly string[];
  /** The service's own origin (PUBLIC_URL); null: the request's Host. */
  publicOrigin: string | null;
  registry: RouteRegistry;
  /** URL prefixes served by third-party plugins that are public by nature (the docs UI's files). */
  publicPrefixes: readonly string[];
}

const securityRequirement = [{ bearerAuth: [] }, { apiKeyHeader: [] }, { sessionCookie: [] }];

function describeAccess(access: RouteAccess): string {
  switch (access.kind) {
    case 'public':
      return 'No API key needed.';
    case 'key':
      return 'Any valid API key (or dashboard session).';
    case 'scopes':
      return `Requires scope${access.scopes.length > 1 ? 's' : ''} ${access.scopes.map((scope) => `\`${scope}\``).join(' and ')}${access.ownerOnly ? ' on a key of the platform owner account' : ''}.`;
  }
}

/** The presented key: `Authorization: Bearer <key>` (any case, one space) or `X-API-Key: <key>`. */
export function presentedKey(request: FastifyRequest): string | undefined {
  const authorization = request.headers.authorization;
  // The scheme name is case-insensitive (RFC 9110 §11.1); exactly one space follows it.
  if (authorization !== undefined && /^bearer /i.test(authorization)) {
    return authorization.slice('Bearer '.length);
  }
  const headerKey = request.headers['x-api-key'];
  if (typeof headerKey === 'string' && headerKey !== '') return headerKey;
  // Browsers cannot set headers on a WebSocket: /v1/ws also takes the key in its URL.
  const queryKey = (request.query as { api_key?: unknown } | undefined)?.api_key;
  if (request.routeOptions.config.queryKey === true && typeof queryKey === 'string') {
    return queryKey;
  }
  if (authorization !== undefined && authorization !== '') {
    throw new AppError(
      'invalid_api_key',
      "The Authorization header must be 'Bearer <key>', with exactly one space.",
    );
  }
  return undefined;
}

/** The account a principal's requests count against, besides its key (see RateLimiter). */
export function accountOf(principal: Principal): AccountSubject {
  return { id: principal.accountId, tier: principal.accountTier };
}

export function installAccessControl(app: App, options: AccessControlOptions): void {
  app.decorateRequest('principal', null);
  app.addHook('onRoute', (route) => declareAccess(route, options));
  app.addHook('onRequest', async (request, reply) => {
    const { access, feature } = request.routeOptions.config;
    if (request.is404 || access === undefined) return;
    // A switched-off feature is refused before any key is looked at: it is not there to use.
    if (feature !== undefined && !options.features[feature])
      throw new FeatureDisabledError(feature);
    if (access.kind === 'public') return;
    const principal = await identify(request, options);
    request.principal = principal;
    if (access.kind === 'scopes') await checkScopes(principal, access, reply, options);
    const decision = await options.rateLimiter.consume(
      principal.keyId,
      principal.tier,
      accountOf(principal),
    );
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) throw rateLimitExceeded(decision);
  });
}

/**
 * Counts every message of a JSON-RPC batch of `size` as a request of the request's key and account,
 * before any of them runs: the HTTP request was counted once already, the other `size - 1` are
 * counted now, all at once. The rate-limit headers then say what is left after them; a batch that
 * does not fit is refused with the contract's 429, nothing of it counted beyond its one request.
 */
export async function countBatchMessages(
  rateLimiter: RateLimiter,
  request: FastifyRequest,
  reply: FastifyReply,
  size: number,
): Promise<void> {
  if (size <= 1) return;
  const principal = principalOf(request);
  const decision = await rateLimiter.consumeMore(
    principal.keyId,
    principal.tier,
    accountOf(principal),
    size - 1,
  );
  setRateLimitHeaders(reply, decision);
  if (!decision.allowed) throw rateLimitExceeded(decision, { batchSize: size });
}

/** Each route declares its access rule (or lies under a public prefix); the document shows it. */
function declareAccess(route: RouteOptions, options: AccessControlOptions): void {
  // The CORS plugin's catch-all preflight route is not a path of the API: it would make every
  // unknown path a 405 instead of a 404.
  const preflight = route.method === 'OPTIONS' && route.url === '*';
  if (!preflight) options.registry.add(route.method, route.url);
  let access = route.config?.access;
  if (
    access === undefined &&
    (preflight || options.publicPrefixes.some((prefix) => route.url.startsWith(prefix)))
  ) {
    access = { kind: 'public' };
    route.config = { ...route.config, access };
  }
  if (access === undefined) {
    throw new Error(`Route ${String(route.method)} ${route.url} does not declare its access rule`);
  }
  // Fastify adds a HEAD route for every GET with the same schema object: document it once.
  if (route.method === 'HEAD') return;
  documentAccess((route.schema ??= {}) as Record<string, unknown>, access, route.config?.feature);
}

/** The route's OpenAPI entry: security, required scopes, its feature, and the contract's errors. */
function documentAccess(
  schema: Record<string, unknown>,
  access: RouteAccess,
  feature: FeatureName | undefined,
): void {
  if (access.kind !== 'public') {
    schema.security = securityRequirement;
    schema['x-required-scopes'] = access.kind === 'scopes' ? [...access.scopes] : [];
    if (access.kind === 'scopes' && access.ownerOnly) schema['x-owner-account-only'] = true;
  }
  if (feature !== undefined) schema['x-feature'] = feature;
  if (typeof schema.description === 'string' || typeof schema.summary === 'string') {
    const description = typeof schema.description === 'string' ? schema.description : '';
    const featureNote =
      feature === undefined
        ? ''
        : ` Part of the \`${feature}\` feature: answers 403 \`feature_disabled\` when it is switched off.`;
    schema.description = `${description}${description === '' ? '' : '\n\n'}${describeAccess(access)}${featureNote}`;
  }
  const response = (schema.response ??= {}) as Record<string, unknown>;
  response['4xx'] ??= { $ref: 'ErrorBody#' };
  response['5xx'] ??= { $ref: 'ErrorBody#' };
}

function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision): void {
  for (const [name, value] of Object.entries(rateLimitHeaders(decision)))
    void reply.header(name, value);
}

/** The principal of a request: a key sent with it wins; the session cookie only when none is sent. */
async function identify(
  request: FastifyRequest,
  options: AccessControlOptions,
): Promise<Principal> {
  const key = presentedKey(request);
  const sessionToken = key === undefined ? sessionTokenOf(request) : undefined;
  if (sessionToken === undefined) return options.authenticator.authenticate(key, request.ip);
  const { principal } = await options.sessions.authenticate(sessionToken, request.ip);
  checkCsrf(request, sessionToken, options.corsOrigins, options.publicOrigin);
  return principal;
}

/** A missing scope (or an admin route of the owner's account) is refused, with the limits as they stand. */
async function checkScopes(
  principal: Principal,
  access: Extract<RouteAccess, { kind: 'scopes' }>,
  reply: FastifyReply,
  options: AccessControlOptions,
): Promise<void> {
  const missing = missingScope(principal.scopes, access.scopes);
  const notOwner = access.ownerOnly && principal.accountKind !== 'owner';
  if (missing === null && !notOwner) return;
  setRateLimitHeaders(
    reply,
    await options.rateLimiter.peek(principal.keyId, principal.tier, accountOf(principal)),
  );
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
