// The HTTP shapes of API keys: a key's record, the create body and answer, and the configured
// rate-limit tiers a key may be given.
import Type from 'typebox';
import { scopes } from '../../auth/scopes.js';
import { commonParameters, NullableTimestamp, Timestamp } from '../../http/schemas/common.js';

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

export const CreatedApiKeySchema = Type.Object(
  {
    ...ApiKeySchema.properties,
    key: Type.String({
      description: 'The full secret. Shown only in this response; store it now.',
    }),
  },
  { title: 'CreatedApiKey' },
);

export const CreateApiKeyBody = Type.Object(
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

export const KeyIdParams = Type.Object({ key_id: Type.String({ maxLength: 100 }) });

export const RateLimitTiersSchema = Type.Object(
  {
    default_tier: Type.String({
      description: 'The tier of a key created without one (`rate_limits.default_tier`).',
    }),
    tiers: Type.Array(
      Type.Object({
        name: Type.String(),
        requests_per_minute: Type.Integer({ description: "A key's requests in one minute." }),
        requests_per_day: Type.Integer({ description: "A key's requests in one day." }),
        grantable: Type.Boolean({
          description:
            "Whether the caller may create a key on this tier: admin keys of the platform owner's account grant any tier, others their own tier or one lower in both windows.",
        }),
      }),
      { description: 'Every configured tier, in the order of the configuration.' },
    ),
  },
  { title: 'RateLimitTiers' },
);
