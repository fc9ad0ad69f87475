// The Fastify instance type used across routes, and what this service adds to Fastify's types.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyRequest,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { CallAttribution } from '../models/spec.js';
import type { Principal } from '../modules/accounts/authenticator.js';
import type { RouteAccess } from '../auth/scopes.js';
import type { FeatureName } from '../modules/health/feature-catalog.js';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route; required on every route (see auth/scopes.ts). */
    access?: RouteAccess;
    /** The feature of the catalog this route belongs to; off in configuration, it answers 403. */
    feature?: FeatureName;
    /** The key may also come as `?api_key=` (the WebSocket `/v1/ws` only; discouraged). */
    queryKey?: boolean;
    /** The setting of a route's own `bodyLimit`, named in its 413 (default `BODY_LIMIT_BYTES`). */
    bodyLimitSetting?: string;
  }
  interface FastifyRequest {
    /** Set by access control on every route that needs a key. */
    principal: Principal | null;
  }
}

/** The authenticated principal of a route that requires a key. */
export function principalOf(request: { principal: Principal | null }): Principal {
  if (request.principal === null) throw new Error('route requires a key but has no principal');
  return request.principal;
}

/**
 * Whose model calls a request's are (the usage ledger, budgets): its key's account and key, the
 * end user it named, and its route as the ledger names it (`POST /v1/audio/speech`).
 */
export function attributionOf(
  request: FastifyRequest & { principal: Principal | null },
  endUser: string | null = null,
): CallAttribution {
  const principal = principalOf(request);
  return {
    accountId: principal.accountId,
    apiKeyId: principal.keyId,
    endUser,
    route: `${request.method} ${request.routeOptions.url ?? request.url}`,
  };
}
