// The only code that reads process.env or the config file: validates both, reports every problem at once.
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { isWellFormedApiKey } from '../auth/api-key-format.js';
import { featureNames, implementedFeatures, type FeatureName } from '../features/catalog.js';
import type { AppConfig, DatabaseConfig, RateLimitTier } from './config.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export const defaultRateLimitTiers: Record<string, RateLimitTier> = {
  free: { perMinute: 10, perDay: 100 },
  basic: { perMinute: 60, perDay: 1000 },
  pro: { perMinute: 120, perDay: 5000 },
  enterprise: { perMinute: 500, perDay: 50000 },
};

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const proxyKeywords = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressRange(value: string): boolean {
  if (proxyKeywords.has(value)) return true;
  const [address, prefix, ...rest] = value.split('/');
  if (rest.length > 0 || address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

const integerText = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, 'expected a whole number')
    .transform(Number)
    .pipe(z.int().min(min).max(max));

const databaseUrl = z.string().refine((value) => /^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(value), {
  message: "expected 'sqlite:PATH' or 'postgres://…'",
});

const redisUrl = z
  .string()
  .refine((value) => /^rediss?:\/\/.+/.test(value), { message: "expected 'redis://…'" });

const rangeList = z.array(z.string().trim()).superRefine((values, context) => {
  for (const value of values) {
    if (!isAddressRange(value)) {
      context.addIssue({
        code: 'custom',
        message: `'${value}' is not an IP address, a CIDR range or one of loopback, linklocal, uniquelocal`,
      });
    }
  }
});

const adminKey = z.string().refine(isWellFormedApiKey, {
  message:
    "not a well-formed key (sk- followed by 46+ letters or digits with a valid checksum); generate one with 'npm run keys -- generate'",
});

const envSchema = z.object({
  HOST: z.string().min(1).optional(),
  PORT: integerText(0, 65535).optional(),
  DATABASE_URL: databaseUrl.optional(),
  REDIS_URL: redisUrl.optional(),
  PLATFORM_ADMIN_KEY: adminKey.optional(),
  TRUST_PROXY: z
    .string()
    .transform((value) =>
      value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item.length > 0),
    )
    .pipe(rangeList)
    .optional(),
  API_KEY_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  LOG_LEVEL: z.enum(logLevels).optional(),
  BODY_LIMIT_BYTES: integerText(1024, 1024 * 1024 * 1024).optional(),
  KEY_CACHE_TTL_MS: integerText(0, 1000).optional(),
  SHUTDOWN_TIMEOUT_MS: integerText(0, 600_000).optional(),
});

const tierSchema = z.strictObject({
  per_minute: z.int().positive(),
  per_day: z.int().positive(),
});

const featureSchema = z.strictObject(
  Object.fromEntries(featureNames.map((name) => [name, z.boolean().optional()])) as Record<
    FeatureName,
    z.ZodOptional<z.ZodBoolean>
  >,
);

const fileSchema = z.strictObject({
  host: z.string().min(1).optional(),
  port: z.int().min(0).max(65535).optional(),
  database_url: databaseUrl.optional(),
  redis_url: redisUrl.optional(),
  trust_proxy: z
    .union([
      z.string().transform((value) => value.split(',').map((item) => item.trim())),
      z.array(z.string()),
    ])
    .pipe(rangeList)
    .optional(),
  log_level: z.enum(logLevels).optional(),
  body_limit_bytes: z
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .optional(),
  key_cache_ttl_ms: z.int().min(0).max(1000).optional(),
  shutdown_timeout_ms: z.int().min(0).max(600_000).optional(),
  rate_limits: z
    .strictObject({
      default_tier: z
        .string()
        .regex(/^[a-z0-9_-]{1,32}$/)
        .optional(),
      tiers: z.record(z.string().regex(/^[a-z0-9_-]{1,32}$/), tierSchema).optional(),
    })
    .optional(),
  features: featureSchema.optional(),
});

type FileConfig = z.infer<typeof fileSchema>;

export interface LoadConfigOptions {
  env?: Record<string, string | undefined>;
  /** Directory relative paths are resolved against; defaults to the process's working directory. */
  cwd?: string;
  /** Settings applied over the file (used by tests and benchmarks; same schema as the file). */
  overrides?: FileConfig;
}

function formatIssues(issues: z.core.$ZodIssue[], label: (issuePath: PropertyKey[]) => string) {
  return issues.map((issue) => `${label(issue.path)}: ${issue.message}`);
}

function readPackageVersion(): { name: string; version: string } {
  const file = new URL('../../package.json', import.meta.url);
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { name: string; version: string };
  return { name: parsed.name, version: parsed.version };
}

function readConfigFile(
  filePath: string,
  problems: string[],
): { label: string; data: unknown } | null {
  if (!existsSync(filePath)) {
    problems.push(`PLATFORM_CONFIG: file '${filePath}' does not exist`);
    return null;
  }
  const text = readFileSync(filePath, 'utf8');
  try {
    const data: unknown = filePath.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    return { label: filePath, data: data ?? {} };
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : 'cannot be parsed';
    problems.push(
      `${filePath}: not valid ${filePath.endsWith('.json') ? 'JSON' : 'YAML'} (${reason})`,
    );
    return null;
  }
}

function parseDatabaseUrl(url: string, cwd: string): DatabaseConfig {
  if (url.startsWith('sqlite:')) {
    const location = url.slice('sqlite:'.length);
    return {
      kind: 'sqlite',
      path: location === ':memory:' ? location : path.resolve(cwd, location),
    };
  }
  return { kind: 'postgres', url };
}

/** Reads environment and config file once, validates both, and returns a frozen configuration. */
export function loadConfig(options: LoadConfigOptions = {}): AppConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const problems: string[] = [];

  const envResult = envSchema.safeParse(env);
  if (!envResult.success) {
    problems.push(...formatIssues(envResult.error.issues, (issuePath) => String(issuePath[0])));
  }

  let fileLabel: string | null = null;
  let file: FileConfig = {};
  const configPath = env.PLATFORM_CONFIG;
  if (configPath !== undefined && configPath !== '') {
    const resolved = path.resolve(cwd, configPath);
    const raw = readConfigFile(resolved, problems);
    if (raw !== null) {
      fileLabel = raw.label;
      const fileResult = fileSchema.safeParse(raw.data);
      if (fileResult.success) file = fileResult.data;
      else {
        problems.push(
          ...formatIssues(
            fileResult.error.issues,
            (issuePath) => `${raw.label}: ${issuePath.map(String).join('.') || '(top level)'}`,
          ),
        );
      }
    }
  }
  if (options.overrides !== undefined) {
    const overrideResult = fileSchema.safeParse(options.overrides);
    if (overrideResult.success) file = { ...file, ...overrideResult.data };
    else {
      problems.push(
        ...formatIssues(
          overrideResult.error.issues,
          (issuePath) => `overrides: ${issuePath.join('.')}`,
        ),
      );
    }
  }

  const fromEnv = envResult.success ? envResult.data : {};
  const tiers: Record<string, RateLimitTier> = { ...defaultRateLimitTiers };
  for (const [name, tier] of Object.entries(file.rate_limits?.tiers ?? {})) {
    tiers[name] = { perMinute: tier.per_minute, perDay: tier.per_day };
  }
  const defaultTier = file.rate_limits?.default_tier ?? 'free';
  if (tiers[defaultTier] === undefined) {
    problems.push(
      `${fileLabel ?? 'config'}: rate_limits.default_tier: '${defaultTier}' is not a defined tier (${Object.keys(tiers).join(', ')})`,
    );
  }

  const features = {} as Record<FeatureName, boolean>;
  for (const name of featureNames) {
    const wanted = file.features?.[name];
    const implemented = implementedFeatures.has(name);
    if (wanted === true && !implemented) {
      problems.push(
        `${fileLabel ?? 'config'}: features.${name}: this build does not implement ${name}, so it cannot be enabled`,
      );
    }
    features[name] = wanted ?? implemented;
  }

  if (problems.length > 0) throw new ConfigError(problems);

  const packageInfo = readPackageVersion();
  const config: AppConfig = {
    serviceName: packageInfo.name,
    version: packageInfo.version,
    configFile: fileLabel,
    server: {
      host: fromEnv.HOST ?? file.host ?? '127.0.0.1',
      port: fromEnv.PORT ?? file.port ?? 8080,
      bodyLimitBytes: fromEnv.BODY_LIMIT_BYTES ?? file.body_limit_bytes ?? 1024 * 1024,
      trustProxy: fromEnv.TRUST_PROXY ?? file.trust_proxy ?? [],
      shutdownTimeoutMs: fromEnv.SHUTDOWN_TIMEOUT_MS ?? file.shutdown_timeout_ms ?? 10_000,
      logLevel: fromEnv.LOG_LEVEL ?? file.log_level ?? 'info',
    },
    database: parseDatabaseUrl(
      fromEnv.DATABASE_URL ?? file.database_url ?? 'sqlite:./data/platform.db',
      cwd,
    ),
    redisUrl: fromEnv.REDIS_URL ?? file.redis_url ?? null,
    auth: {
      adminKey: fromEnv.PLATFORM_ADMIN_KEY ?? null,
      apiKeySecret: fromEnv.API_KEY_SECRET ?? null,
      keyCacheTtlMs: fromEnv.KEY_CACHE_TTL_MS ?? file.key_cache_ttl_ms ?? 500,
      lastUsedWriteIntervalMs: 60_000,
    },
    rateLimits: { defaultTier, tiers },
    features,
  };
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
