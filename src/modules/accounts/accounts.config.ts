// The accounts' configuration: rate-limit tiers (each key's, and each account's over all its
// keys) and dashboard sessions (`rate_limits` and `sessions` in the config file).
import Type, { type Static } from 'typebox';
import {
  Closed,
  OptionalInteger,
  PositiveInteger,
  type EnvReader,
  type Problems,
} from '../../config/config-kit.js';

interface RateLimitTier {
  readonly perMinute: number;
  readonly perDay: number;
}

export const defaultRateLimitTiers: Record<string, RateLimitTier> = {
  free: { perMinute: 10, perDay: 100 },
  basic: { perMinute: 60, perDay: 1000 },
  pro: { perMinute: 120, perDay: 5000 },
  enterprise: { perMinute: 500, perDay: 50000 },
};

const TierName = () => Type.String({ pattern: '^[a-z0-9_-]{1,32}$' });

const TierSchema = Closed({
  per_minute: PositiveInteger(),
  per_day: PositiveInteger(),
  /** The account's ceiling (all its keys together) for accounts of this tier. */
  account_per_minute: Type.Optional(PositiveInteger()),
  account_per_day: Type.Optional(PositiveInteger()),
});

export const RateLimitsFileSchema = Closed({
  default_tier: Type.Optional(TierName()),
  tiers: Type.Optional(Type.Record(TierName(), TierSchema, { additionalProperties: false })),
  account_multiple: Type.Optional(Type.Number({ minimum: 1, maximum: 10_000 })),
});

/** The built-in tiers, those of the file added or redefined, and every tier's account ceiling. */
export function rateLimitsConfig(
  file: Static<typeof RateLimitsFileSchema> = {},
  context: { label: string; problems: Problems },
) {
  const fileTiers = new Map(Object.entries(file.tiers ?? {}));
  const tiers: Record<string, RateLimitTier> = { ...defaultRateLimitTiers };
  for (const [name, tier] of fileTiers) {
    tiers[name] = { perMinute: tier.per_minute, perDay: tier.per_day };
  }
  // An account's ceiling (the sum over its keys): the tier's own, else a multiple of its key limits.
  const accountMultiple = file.account_multiple ?? 5;
  const accountTiers: Record<string, RateLimitTier> = {};
  for (const [name, tier] of Object.entries(tiers)) {
    const configured = fileTiers.get(name);
    accountTiers[name] = {
      perMinute: configured?.account_per_minute ?? Math.ceil(tier.perMinute * accountMultiple),
      perDay: configured?.account_per_day ?? Math.ceil(tier.perDay * accountMultiple),
    };
  }
  const defaultTier = file.default_tier ?? 'free';
  if (tiers[defaultTier] === undefined) {
    context.problems.push(
      `${context.label}: rate_limits.default_tier: '${defaultTier}' is not a defined tier (${Object.keys(tiers).join(', ')})`,
    );
  }
  return { defaultTier, tiers, accountTiers };
}

export const SessionsFileSchema = Closed({
  idle_timeout_ms: OptionalInteger(60_000, 30 * 86_400_000),
  max_age_ms: OptionalInteger(60_000, 366 * 86_400_000),
  cookie_secure: Type.Optional(Type.Union([Type.Literal('auto'), Type.Boolean()])),
  login_attempts_per_minute: OptionalInteger(1, 100_000),
});

type SessionsFile = Static<typeof SessionsFileSchema>;

export function readSessionsEnv(env: EnvReader): SessionsFile {
  const cookieSecure = env.oneOf('SESSION_COOKIE_SECURE', ['auto', 'true', 'false']);
  return {
    idle_timeout_ms: env.integer('SESSION_IDLE_TIMEOUT_MS', 60_000, 30 * 86_400_000),
    max_age_ms: env.integer('SESSION_MAX_AGE_MS', 60_000, 366 * 86_400_000),
    cookie_secure:
      cookieSecure === undefined || cookieSecure === 'auto'
        ? cookieSecure
        : cookieSecure === 'true',
    login_attempts_per_minute: env.integer('LOGIN_ATTEMPTS_PER_MINUTE', 1, 100_000),
  };
}

/** Dashboard sessions: the environment's settings, else the file's, else the defaults. */
export function sessionsConfig(
  fromEnv: SessionsFile,
  file: SessionsFile = {},
  context: { label: string; problems: Problems },
) {
  const idleTimeoutMs = fromEnv.idle_timeout_ms ?? file.idle_timeout_ms ?? 30 * 60_000;
  const maxAgeMs = fromEnv.max_age_ms ?? file.max_age_ms ?? 12 * 3_600_000;
  if (idleTimeoutMs > maxAgeMs) {
    context.problems.push(
      `${context.label}: sessions.idle_timeout_ms (SESSION_IDLE_TIMEOUT_MS) must not exceed sessions.max_age_ms (SESSION_MAX_AGE_MS)`,
    );
  }
  return {
    idleTimeoutMs,
    maxAgeMs,
    cookieSecure: fromEnv.cookie_secure ?? file.cookie_secure ?? 'auto',
    loginAttemptsPerMinute:
      fromEnv.login_attempts_per_minute ?? file.login_attempts_per_minute ?? 10,
  };
}
