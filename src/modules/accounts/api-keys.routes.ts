// API key administration within the caller's account (create, list, read, revoke) and the
// rate-limit tiers a new key may be given, as a Fastify plugin over the key service.
import { access } from '../../auth/scopes.js';
import { featurePlugin, type FeatureApp, type FeaturePlugin } from '../../http/feature-plugin.js';
import { PageQuerySchema, PageSchema } from '../../http/schemas/common.js';
import { principalOf } from '../../http/types.js';
import type { ApiKeyService, ApiKeyStatus } from './api-key-service.js';
import type { ApiKeyRecord } from './api-key.js';
import {
  ApiKeySchema,
  CreateApiKeyBody,
  CreatedApiKeySchema,
  KeyIdParams,
  RateLimitTiersSchema,
} from './api-keys.schemas.js';

function apiKeyToJson(record: ApiKeyRecord, status: ApiKeyStatus) {
  return {
    id: record.id,
    object: 'api_key' as const,
    account_id: record.accountId,
    name: record.name,
    display_key: record.displayKey,
    scopes: record.scopes,
    tier: record.tier,
    allowed_ips: record.allowedIps,
    expires_at: record.expiresAt,
    last_used_at: record.lastUsedAt,
    created_at: record.createdAt,
    revoked_at: record.revokedAt,
    status,
  };
}

/** The routes of API keys, then GET /v1/rate-limits/tiers, registered by app.ts. */
export function apiKeysPlugin(apiKeys: ApiKeyService): FeaturePlugin {
  return featurePlugin('api-keys', (app) => {
    keyCollectionRoutes(app, apiKeys);
    keyRoutes(app, apiKeys);
    tierRoutes(app, apiKeys);
  });
}

/** POST and GET /v1/api-keys. */
function keyCollectionRoutes(app: FeatureApp, apiKeys: ApiKeyService): void {
  const toJson = (record: ApiKeyRecord) => apiKeyToJson(record, apiKeys.statusOf(record));
  app.post(
    '/v1/api-keys',
    {
      config: { access: access.scopes('admin') },
      schema: {
        operationId: 'createApiKey',
        tags: ['API keys'],
        summary: 'Create an API key',
        description:
          "Creates a key in the caller's account. The response is the only one that carries the full key.",
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKeySchema },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      const created = await apiKeys.create(
        principal.accountId,
        {
          name: body.name,
          ...(body.scopes === undefined ? {} : { scopes: body.scopes }),
          ...(body.tier === undefined ? {} : { tier: body.tier }),
          ...(body.allowed_ips === undefined ? {} : { allowedIps: body.allowed_ips }),
          ...(body.expires_at === undefined ? {} : { expiresAt: body.expires_at }),
        },
        principal,
      );
      return reply.code(201).send({
        ...toJson(created.record),
        key: created.key,
      });
    },
  );

  app.get(
    '/v1/api-keys',
    {
      config: { access: access.scopes('admin') },
      schema: {
        operationId: 'listApiKeys',
        tags: ['API keys'],
        summary: 'List API keys',
        description: "Keys of the caller's account, newest first, revoked ones included.",
        querystring: PageQuerySchema,
        response: {
          200: PageSchema('api_keys', ApiKeySchema),
        },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      const { limit, offset } = request.query;
      const page = await apiKeys.list(accountId, { limit, offset });
      return {
        api_keys: page.keys.map((record) => toJson(record)),
        total: page.total,
        limit,
        offset,
      };
    },
  );
}

/** GET and DELETE /v1/api-keys/:key_id. */
function keyRoutes(app: FeatureApp, apiKeys: ApiKeyService): void {
  const toJson = (record: ApiKeyRecord) => apiKeyToJson(record, apiKeys.statusOf(record));
  app.get(
    '/v1/api-keys/:key_id',
    {
      config: { access: access.scopes('admin') },
      schema: {
        operationId: 'getApiKey',
        tags: ['API keys'],
        summary: 'Get an API key',
        params: KeyIdParams,
        response: { 200: ApiKeySchema },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      return toJson(await apiKeys.get(accountId, request.params.key_id));
    },
  );

  app.delete(
    '/v1/api-keys/:key_id',
    {
      config: { access: access.scopes('admin') },
      schema: {
        operationId: 'revokeApiKey',
        tags: ['API keys'],
        summary: 'Revoke an API key',
        description:
          'Revokes the key permanently; requests with it then fail with 401 revoked_api_key (at once on this instance, within a second on every other). Revoking a revoked key changes nothing.',
        params: KeyIdParams,
        response: { 200: ApiKeySchema },
      },
    },
    async (request) => {
      const { accountId } = principalOf(request);
      return toJson(await apiKeys.revoke(accountId, request.params.key_id));
    },
  );
}

/** GET /v1/rate-limits/tiers: what a key created by the caller may be given. */
function tierRoutes(app: FeatureApp, apiKeys: ApiKeyService): void {
  app.get(
    '/v1/rate-limits/tiers',
    {
      config: { access: access.scopes('admin') },
      schema: {
        operationId: 'listRateLimitTiers',
        tags: ['API keys'],
        summary: 'List the rate-limit tiers',
        description:
          "The configured rate-limit tiers with each one's per-key limits, the default tier of new keys, and whether the caller may give a new key each tier (`grantable`): admin keys of the platform owner's account grant any tier, other keys their own tier or one with no higher limit in either window.",
        response: { 200: RateLimitTiersSchema },
      },
    },
    (request) => ({
      default_tier: apiKeys.defaultTier,
      tiers: apiKeys.tiersFor(principalOf(request)).map((tier) => ({
        name: tier.name,
        requests_per_minute: tier.perMinute,
        requests_per_day: tier.perDay,
        grantable: tier.grantable,
      })),
    }),
  );
}
