// Keys and secrets: the platform admin key, the secret API keys are hashed with, how long a
// checked key is trusted, and the secrets read when used (provider keys), never stored.
import Type, { type Static, type TObject } from 'typebox';
import { isWellFormedApiKey } from '../modules/accounts/api-key-format.js';
import { OptionalInteger, type Env, type EnvReader, type Problems } from './config-kit.js';

export const secretsFileProperties = {
  key_cache_ttl_ms: OptionalInteger(0, 1000),
};

type SecretsFile = Static<TObject<typeof secretsFileProperties>>;

const ApiKeySecret = Type.String({ minLength: 32, message: 'must be at least 32 characters' });

interface SecretsEnv extends SecretsFile {
  adminKey?: string;
  apiKeySecret?: string;
}

export function readSecretsEnv(env: EnvReader, problems: Problems): SecretsEnv {
  const adminKey = env.raw('PLATFORM_ADMIN_KEY');
  const wellFormed = adminKey !== undefined && isWellFormedApiKey(adminKey);
  if (adminKey !== undefined && !wellFormed) {
    problems.push(
      "PLATFORM_ADMIN_KEY: not a well-formed key (sk- followed by 46+ letters or digits with a valid checksum); generate one with 'npm run keys -- generate'",
    );
  }
  return {
    adminKey: wellFormed ? adminKey : undefined,
    apiKeySecret: env.text('API_KEY_SECRET', ApiKeySecret),
    key_cache_ttl_ms: env.integer('KEY_CACHE_TTL_MS', 0, 1000),
  };
}

export function secretsConfig(fromEnv: SecretsEnv, file: SecretsFile, env: Env) {
  return {
    auth: {
      adminKey: fromEnv.adminKey ?? null,
      apiKeySecret: fromEnv.apiKeySecret ?? null,
      keyCacheTtlMs: fromEnv.key_cache_ttl_ms ?? file.key_cache_ttl_ms ?? 500,
      lastUsedWriteIntervalMs: 60_000,
    },
    secrets: {
      get: (name: string) => {
        const value = env[name];
        return value === undefined || value === '' ? undefined : value;
      },
    },
  };
}
