// Wiring of the domain: builds every service from the configuration, and closes them again.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { AccountService } from './accounts/account-service.js';
import { ApiKeyService } from './auth/api-key-service.js';
import { Authenticator } from './auth/authenticator.js';
import { KeyHasher } from './auth/key-hasher.js';
import { RateLimiter } from './auth/rate-limiter.js';
import type { AppConfig } from './config/config.js';
import { openStorage, type Storage } from './storage/database.js';
import { AccountsRepository } from './storage/repositories/accounts.repository.js';
import { ApiKeysRepository } from './storage/repositories/api-keys.repository.js';

export interface Services {
  readonly config: AppConfig;
  readonly storage: Storage;
  readonly redis: Redis | null;
  readonly authenticator: Authenticator;
  readonly rateLimiter: RateLimiter;
  readonly apiKeys: ApiKeyService;
  readonly accounts: AccountService;
  close(): Promise<void>;
}

export interface ServiceOverrides {
  now?: () => number;
  /** Namespace for rate-limit counters in Redis (tests isolate themselves with it). */
  rateLimitPrefix?: string;
  /** Command-line tools need no shared counters. */
  withoutRedis?: boolean;
}

function connectRedis(url: string, logger: Logger): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  client.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  return client;
}

/** The tier with the largest per-minute limit. */
function mostGenerousTier(config: AppConfig): string {
  const entries = Object.entries(config.rateLimits.tiers);
  return entries.reduce((best, entry) =>
    entry[1].perMinute > best[1].perMinute ? entry : best,
  )[0];
}

export async function createServices(
  config: AppConfig,
  logger: Logger,
  overrides: ServiceOverrides = {},
): Promise<Services> {
  const storage = await openStorage(config.database);
  let redis: Redis | null = null;
  try {
    if (config.redisUrl !== null && overrides.withoutRedis !== true) {
      redis = connectRedis(config.redisUrl, logger);
      await redis.connect();
    }
  } catch (error) {
    await storage.close();
    redis?.disconnect();
    throw new Error(`Cannot connect to Redis at REDIS_URL`, { cause: error });
  }

  const now = overrides.now ?? Date.now;
  const keysRepository = new ApiKeysRepository(storage.db);
  const hasher = new KeyHasher(config.auth.apiKeySecret);
  const authenticator = new Authenticator({
    keys: keysRepository,
    hasher,
    cacheTtlMs: config.auth.keyCacheTtlMs,
    lastUsedWriteIntervalMs: config.auth.lastUsedWriteIntervalMs,
    now,
    onBackgroundError: (error) => logger.warn({ err: error }, 'could not record last_used_at'),
  });
  const rateLimiter = new RateLimiter(
    config.rateLimits.tiers,
    redis === null ? { kind: 'memory' } : { kind: 'redis', client: redis },
    overrides.rateLimitPrefix ?? 'rl',
  );
  const apiKeys = new ApiKeyService({
    keys: keysRepository,
    hasher,
    authenticator,
    tiers: Object.keys(config.rateLimits.tiers),
    defaultTier: config.rateLimits.defaultTier,
    now,
  });
  const accounts = new AccountService({
    db: storage.db,
    accounts: new AccountsRepository(storage.db),
    apiKeys,
    isUniqueViolation: (error) => storage.isUniqueViolation(error),
    ownerTier: mostGenerousTier(config),
    now,
  });

  return {
    config,
    storage,
    redis,
    authenticator,
    rateLimiter,
    apiKeys,
    accounts,
    async close() {
      if (redis !== null) await redis.quit().catch(() => redis?.disconnect());
      await storage.close();
    },
  };
}
