// The authentication services wired over real storage as src/services.ts wires them (key hasher,
// authenticator, sessions, keys), on a clock the test moves. Two stacks over one database are two
// instances of the service.
import type { Logger } from 'pino';
import { ApiKeyService } from '../../../src/modules/accounts/api-key-service.js';
import { Authenticator } from '../../../src/modules/accounts/authenticator.js';
import { KeyHasher } from '../../../src/modules/accounts/key-hasher.js';
import { SessionService } from '../../../src/modules/accounts/session-service.js';
import type { AppConfig } from '../../../src/config/config.js';
import type { Storage } from '../../../src/storage/database.js';
import { ApiKeysRepository } from '../../../src/modules/accounts/api-keys.repository.js';
import { SessionsRepository } from '../../../src/modules/accounts/sessions.repository.js';
import type { TestClock } from './clock.js';

export interface AuthStack {
  keys: ApiKeysRepository;
  authenticator: Authenticator;
  sessions: SessionService;
  apiKeys: ApiKeyService;
  /** Errors of the background `last_used_at` writes. */
  backgroundErrors: unknown[];
}

export interface AuthStackOptions {
  storage: Storage;
  config: AppConfig;
  logger: Logger;
  clock: TestClock;
  cacheTtlMs?: number;
  lastUsedWriteIntervalMs?: number;
  idleTimeoutMs?: number;
  maxAgeMs?: number;
}

export function authStack(options: AuthStackOptions): AuthStack {
  const { storage, config, logger, clock } = options;
  const keys = new ApiKeysRepository(storage.db);
  const hasher = new KeyHasher(config.auth.apiKeySecret);
  const backgroundErrors: unknown[] = [];
  const cacheTtlMs = options.cacheTtlMs ?? config.auth.keyCacheTtlMs;
  const authenticator = new Authenticator({
    keys,
    hasher,
    cacheTtlMs,
    lastUsedWriteIntervalMs: options.lastUsedWriteIntervalMs ?? config.auth.lastUsedWriteIntervalMs,
    now: clock.now,
    onBackgroundError: (error) => backgroundErrors.push(error),
  });
  const sessions = new SessionService({
    sessions: new SessionsRepository(storage.db),
    authenticator,
    idleTimeoutMs: options.idleTimeoutMs ?? config.sessions.idleTimeoutMs,
    maxAgeMs: options.maxAgeMs ?? config.sessions.maxAgeMs,
    cacheTtlMs,
    logger,
    now: clock.now,
  });
  const apiKeys = new ApiKeyService({
    keys,
    hasher,
    authenticator,
    sessions,
    tiers: config.rateLimits.tiers,
    defaultTier: config.rateLimits.defaultTier,
    now: clock.now,
  });
  return { keys, authenticator, sessions, apiKeys, backgroundErrors };
}
