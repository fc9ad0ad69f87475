// The accounts module, wired: API keys and their authentication, dashboard sessions, rate limits
// and accounts, over the database and Redis it is lent.
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { CredentialWatch } from '../../auth/credential-watch.js';
import type { AppConfig } from '../../config/config.js';
import { featurePlugin, type FeaturePlugin } from '../../http/feature-plugin.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { KeyState } from './api-key.js';
import { AccountService } from './account-service.js';
import { accountsPlugin } from './accounts.routes.js';
import { AccountsRepository } from './accounts.repository.js';
import { ApiKeyService } from './api-key-service.js';
import { apiKeysPlugin } from './api-keys.routes.js';
import { ApiKeysRepository } from './api-keys.repository.js';
import { authPlugin, type AuthRouteServices } from './auth.routes.js';
import { Authenticator } from './authenticator.js';
import { KeyHasher } from './key-hasher.js';
import { LoginThrottle } from './login-throttle.js';
import { RateLimiter, type RateLimitStore } from './rate-limiter.js';
import { SessionService } from './session-service.js';
import { SessionsRepository } from './sessions.repository.js';
import { SsoProvisioning } from './sso/sso-provisioning.js';
import { SsoService } from './sso/sso-service.js';
import { SsoUsersRepository } from './sso/sso-users.repository.js';
import { ssoAuditSink } from './sso/sso-audit.js';
import { ssoPlugin } from './sso/sso.routes.js';
import type { AuditLog } from '../audit/module.js';

export interface AccountsModuleDependencies {
  readonly config: Pick<AppConfig, 'auth' | 'rateLimits' | 'sessions' | 'secrets'> & {
    readonly server: Pick<AppConfig['server'], 'publicOrigin'>;
    readonly speech: { readonly realtime: { readonly credentialCheckMs: number } };
  };
  readonly db: Kysely<DatabaseSchema>;
  /** Whether a database error is a unique-constraint violation (the dialect knows). */
  readonly isUniqueViolation: (error: unknown) => boolean;
  /** Counters are shared through Redis when there is one, else kept in this process. */
  readonly redis: Redis | null;
  /** Namespace of the rate-limit counters in Redis (the login throttle's adds `:login`). */
  readonly rateLimitPrefix: string;
  readonly logger: Logger;
  readonly now: () => number;
  /** Where sign-ins through single sign-on are recorded (the audit log), when anywhere. */
  readonly auditLog?: Pick<AuditLog, 'record'>;
}

export interface AccountsModule {
  readonly authenticator: Authenticator;
  readonly rateLimiter: RateLimiter;
  readonly sessions: SessionService;
  readonly loginThrottle: LoginThrottle;
  readonly apiKeys: ApiKeyService;
  readonly accounts: AccountService;
  /**
   * Ends WebSockets and event streams whose key was revoked or expired: at once for a key revoked
   * here, within `speech.realtime.credential_check_ms` for one revoked elsewhere.
   */
  readonly credentialWatch: CredentialWatch;
  /** Revocation, expiry and tier of keys (a voice session's key is checked as it is joined). */
  readonly keyStates: (keyIds: readonly string[]) => Promise<KeyState[]>;
  /**
   * The single-sign-on person (`ssou_…`) whose hidden key this is, else null: a session on such a
   * key is that person's (the audit trail's actor).
   */
  readonly ssoUserOfKey: (keyId: string) => Promise<string | null>;
  /** An account's key by id, for other areas that name keys (usage's by-key groups). */
  readonly keyLookup: Pick<ApiKeysRepository, 'findInAccount'>;
  /** /v1/api-keys, GET /v1/rate-limits/tiers, then /v1/accounts. */
  readonly plugin: FeaturePlugin;
  /** /v1/auth (and single sign-on's /v1/auth/oidc): a plugin of its own, further down the document. */
  readonly authPlugin: FeaturePlugin;
  /** Stops the credential watch's timer. */
  close(): Promise<void>;
}

/** /v1/auth (login, logout, who am I) and single sign-on's /v1/auth/oidc, as one plugin. */
function sessionPlugins(
  services: Omit<AuthRouteServices, 'ssoUsers' | 'sso'>,
  sso: ReturnType<typeof singleSignOn>,
): FeaturePlugin {
  return featurePlugin('auth and single sign-on', async (app) => {
    await app.register(authPlugin({ ...services, ssoUsers: sso.users, sso: sso.service }));
    await app.register(
      ssoPlugin({
        config: services.config,
        sso: sso.service,
        loginThrottle: services.loginThrottle,
        audit: sso.audit,
      }),
    );
  });
}

/** The tier with the largest per-minute limit (the bootstrap admin key's). */
function mostGenerousTier(tiers: AppConfig['rateLimits']['tiers']): string {
  return Object.entries(tiers).reduce((best, entry) =>
    entry[1].perMinute > best[1].perMinute ? entry : best,
  )[0];
}

/** The keys' and accounts' rate limits and the login throttle, counted in Redis when there is one. */
function limitsOf(dependencies: AccountsModuleDependencies) {
  const { config, redis, rateLimitPrefix } = dependencies;
  const store: RateLimitStore =
    redis === null ? { kind: 'memory' } : { kind: 'redis', client: redis };
  return {
    rateLimiter: new RateLimiter(
      config.rateLimits.tiers,
      store,
      rateLimitPrefix,
      config.rateLimits.accountTiers,
    ),
    loginThrottle: new LoginThrottle(
      config.sessions.loginAttemptsPerMinute,
      store,
      `${rateLimitPrefix}:login`,
    ),
  };
}

/** Single sign-on's service when `auth.oidc` is configured, and its people's records either way. */
function singleSignOn(
  dependencies: AccountsModuleDependencies,
  built: {
    sessions: SessionService;
    apiKeys: ApiKeyService;
    accounts: AccountService;
    keys: ApiKeysRepository;
  },
) {
  const { config, db, logger, now } = dependencies;
  const users = new SsoUsersRepository(db);
  const oidc = config.auth.oidc;
  if (oidc === null) return { users, service: null, audit: undefined };
  const provisioning = new SsoProvisioning({
    users,
    apiKeys: built.apiKeys,
    accounts: built.accounts,
    keys: built.keys,
    isUniqueViolation: dependencies.isUniqueViolation,
    ownerTier: mostGenerousTier(config.rateLimits.tiers),
    now,
  });
  const service = new SsoService({
    config: oidc,
    secrets: config.secrets,
    publicOrigin: config.server.publicOrigin,
    users,
    provisioning,
    sessions: built.sessions,
    logger,
    now,
  });
  const audit =
    dependencies.auditLog === undefined
      ? undefined
      : ssoAuditSink(
          dependencies.auditLog,
          () => built.accounts.ownerAccount().then((owner) => owner?.id ?? null),
          logger,
        );
  return { users, service, audit };
}

export function createAccountsModule(dependencies: AccountsModuleDependencies): AccountsModule {
  const { config, db, logger, now } = dependencies;
  const { rateLimiter, loginThrottle } = limitsOf(dependencies);
  const keysRepository = new ApiKeysRepository(db);
  const keyStates = (keyIds: readonly string[]) => keysRepository.keyStates(keyIds);
  const credentialWatch = new CredentialWatch(
    keyStates,
    config.speech.realtime.credentialCheckMs,
    logger,
  );
  const hasher = new KeyHasher(config.auth.apiKeySecret);
  const authenticator = new Authenticator({
    keys: keysRepository,
    hasher,
    cacheTtlMs: config.auth.keyCacheTtlMs,
    lastUsedWriteIntervalMs: config.auth.lastUsedWriteIntervalMs,
    now,
    onBackgroundError: (error) => logger.warn({ err: error }, 'could not record last_used_at'),
  });
  const sessions = new SessionService({
    sessions: new SessionsRepository(db),
    authenticator,
    idleTimeoutMs: config.sessions.idleTimeoutMs,
    maxAgeMs: config.sessions.maxAgeMs,
    cacheTtlMs: config.auth.keyCacheTtlMs,
    logger,
    now,
  });
  const apiKeys = new ApiKeyService({
    keys: keysRepository,
    hasher,
    authenticator,
    sessions,
    tiers: config.rateLimits.tiers,
    defaultTier: config.rateLimits.defaultTier,
    // The streams and sockets of a key revoked here end at once (elsewhere within a check).
    onRevoked: () => void credentialWatch.checkNow(),
    now,
  });
  const accounts = new AccountService({
    db,
    accounts: new AccountsRepository(db),
    apiKeys,
    isUniqueViolation: dependencies.isUniqueViolation,
    ownerTier: mostGenerousTier(config.rateLimits.tiers),
    now,
  });
  const sso = singleSignOn(dependencies, { sessions, apiKeys, accounts, keys: keysRepository });
  return {
    authenticator,
    rateLimiter,
    sessions,
    loginThrottle,
    apiKeys,
    accounts,
    credentialWatch,
    keyStates,
    keyLookup: keysRepository,
    ssoUserOfKey: async (keyId) => (await sso.users.findUserByKey(keyId))?.id ?? null,
    plugin: featurePlugin('accounts', async (app) => {
      await app.register(apiKeysPlugin(apiKeys));
      await app.register(accountsPlugin(accounts));
    }),
    authPlugin: sessionPlugins({ config, sessions, loginThrottle, apiKeys, accounts }, sso),
    // The database and Redis belong to the service, which closes them itself; the key and session
    // caches hold no timer: the credential watch's is all the module holds.
    close: () => {
      credentialWatch.stop();
      return Promise.resolve();
    },
  };
}
