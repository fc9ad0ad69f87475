// API key administration within the caller's account: create, list, read, revoke.
import Type from 'typebox';
import { access, scopes } from '../../auth/scopes.js';
import type { ApiKeyStatus } from '../../modules/accounts/api-key-service.js';
import type { ApiKeyRecord } from '../../modules/accounts/api-key.js';
import type { Services } from '../../services.js';
import {
  commonParameters,
  NullableTimestamp,
  PageQuerySchema,
  PageSchema,
  Timestamp,
} from '../schemas/common.js';
import { principalOf, type App } from '../types.js';

const ScopeSchema = Type.Enum(scopes, {
  description: 'A permission scope; `admin` includes every other.',
});

export const ApiKeySchema = Type.Object(
  {
    id: Type.String({ description: 'key_…' }),
    object: Type.Literal('api_key'),
    account_id: Type.String(),
    name: Type.String(),
    display_key: Type.String({
      description: "Short display form: 'sk-…' and the last 4 characters.",
    }),
    scopes: Type.Array(ScopeSchema),
    tier: Type.String(),
    allowed_ips: Type.Array(Type.String(), {
      description: 'CIDR ranges; empty allows every address.',
    }),
    expires_at: NullableTimestamp(),
    last_used_at: NullableTimestamp('Updated at most once a minute.'),
    created_at: Timestamp(),
    revoked_at: NullableTimestamp('Set once when the key is revoked; revocation is permanent.'),
    status: Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')], {
      description:
        'Whether the key works now: revoked (permanent), expired (past expires_at) or active.',
    }),
  },
  { $id: 'ApiKey', title: 'ApiKey' },
);

const CreatedApiKeySchema = Type.Object(
  {
    ...ApiKeySchema.properties,
    key: Type.String({
      description: 'The full secret. Shown only in this response; store it now.',
    }),
  },
  { title: 'CreatedApiKey' },
);

const CreateApiKeyBody = Type.Object(
  {
    ...commonParameters(),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    scopes: Type.Optional(Type.Array(ScopeSchema, { maxItems: 20, description: 'Default: none.' })),
    tier: Type.Optional(
      Type.String({
        maxLength: 64,
        description: "A configured rate-limit tier. Default: 'free'.",
      }),
    ),
    allowed_ips: Type.Optional(
      Type.Array(Type.String({ maxLength: 64 }), {
        maxItems: 100,
        description: 'IPv4/IPv6 addresses or CIDR ranges the key may be used from.',
      }),
    ),
    expires_at: Type.Optional(
      Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
        description: 'When the key stops working; must be in the future.',
      }),
    ),
  },
  { additionalProperties: false },
);

const KeyIdParams = Type.Object({ key_id: Type.String({ maxLength: 100 }) });

export function apiKeyToJson(record: ApiKeyRecord, status: ApiKeyStatus) {
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

export function apiKeyRoutes(app: App, services: Services): void {
  const toJson = (record: ApiKeyRecord) => apiKeyToJson(record, services.apiKeys.statusOf(record));
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
      const created = await services.apiKeys.create(
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
      const page = await services.apiKeys.list(accountId, { limit, offset });
      return {
        api_keys: page.keys.map((record) => toJson(record)),
        total: page.total,
        limit,
        offset,
      };
    },
  );

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
      return toJson(await services.apiKeys.get(accountId, request.params.key_id));
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
      return toJson(await services.apiKeys.revoke(accountId, request.params.key_id));
    },
  );
}
