// The only code that reads process.env or the config file: validates both, reports every problem at once.
import { existsSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism, userInfo } from 'node:os';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { AllowListEntryError, TargetAllowList } from '../net/address-policy.js';
import { isWellFormedApiKey } from '../modules/accounts/api-key-format.js';
import { featureNames, type FeatureName } from '../modules/health/feature-catalog.js';
import { packageRoot } from '../runtime-paths.js';
import type { AppConfig, DatabaseConfig, RateLimitTier } from './config.js';
import {
  buildModelCatalog,
  buildTemplates,
  modelEntrySchema,
  templateEntrySchema,
} from './models-config.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * The learned router declines (default route, low confidence) when its best route scores below
 * this; chosen by cross-validation on the routing benchmark's training split (bench/routing.ts).
 */
export const defaultRoutingMinScore = 0.13;

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

/** A fraction from 0 to 1 written as a decimal number (`0.05`, `1`). */
const fractionText = z
  .string()
  .regex(/^(0|1|0?\.\d+|1\.0*)$/, 'expected a number from 0 to 1')
  .transform(Number);

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

/** A browser origin exactly as browsers send it: scheme, host and port, no path. */
const originText = z.string().superRefine((value, context) => {
  let parsed: URL | null;
  try {
    parsed = new URL(value);
  } catch {
    parsed = null;
  }
  if (parsed === null || !/^https?:$/.test(parsed.protocol) || parsed.origin !== value) {
    context.addIssue({
      code: 'custom',
      message:
        value === '*'
          ? "'*' is not allowed: credentials (the session cookie) need each origin listed"
          : `'${value}' is not an origin like 'https://app.example.com' or 'http://localhost:5173' (scheme, host, optional port; no path or trailing slash)`,
    });
  }
});

const originList = z.array(originText);

/** The service's public address (`https://ai.example.com`, a path allowed): its origin is kept. */
const publicUrl = z.url({ protocol: /^https?$/ }).transform((value) => new URL(value).origin);

/** A comma-separated environment variable as a list, blanks dropped. */
const commaList = z.string().transform((value) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0),
);

/** A list in the config file: YAML/JSON list, or one comma-separated string. */
const fileList = z.union([commaList, z.array(z.string())]);

const redisKeyPrefix = z
  .string()
  .regex(
    /^[A-Za-z0-9_.-]{0,64}$/,
    'expected up to 64 letters, digits, dots, dashes or underscores',
  );

const booleanText = z
  .enum(['true', 'false', '1', '0'], "expected 'true' or 'false'")
  .transform((value) => value === 'true' || value === '1');

const adminKey = z.string().refine(isWellFormedApiKey, {
  message:
    "not a well-formed key (sk- followed by 46+ letters or digits with a valid checksum); generate one with 'npm run keys -- generate'",
});

const envSchema = z.object({
  HOST: z.string().min(1).optional(),
  PORT: integerText(0, 65535).optional(),
  DATABASE_URL: databaseUrl.optional(),
  REDIS_URL: redisUrl.optional(),
  REDIS_KEY_PREFIX: redisKeyPrefix.optional(),
  JOB_CONCURRENCY: integerText(1, 256).optional(),
  JOB_LOCK_MS: integerText(1000, 3_600_000).optional(),
  JOB_ENQUEUE_WAIT_MS: integerText(0, 60_000).optional(),
  WS_MAX_CONNECTIONS_PER_KEY: integerText(1, 100_000).optional(),
  PLATFORM_ADMIN_KEY: adminKey.optional(),
  TRUST_PROXY: commaList.pipe(rangeList).optional(),
  API_KEY_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  LOG_LEVEL: z.enum(logLevels).optional(),
  REQUEST_LOG_SAMPLE: fractionText.optional(),
  BODY_LIMIT_BYTES: integerText(1024, 1024 * 1024 * 1024).optional(),
  KEY_CACHE_TTL_MS: integerText(0, 1000).optional(),
  SHUTDOWN_TIMEOUT_MS: integerText(0, 600_000).optional(),
  REQUEST_TIMEOUT_MS: integerText(1000, 3_600_000).optional(),
  HEADERS_TIMEOUT_MS: integerText(1000, 600_000).optional(),
  KEEP_ALIVE_TIMEOUT_MS: integerText(1000, 600_000).optional(),
  MODELS_DIR: z.string().min(1).optional(),
  MODEL_AUTO_PULL: booleanText.optional(),
  HF_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  LOCAL_MODEL_THREADS: integerText(1, 256).optional(),
  LOCAL_MODEL_GPU: z.enum(['auto', 'false']).optional(),
  MODEL_TIMEOUT_MS: integerText(100, 3_600_000).optional(),
  MODEL_IDLE_TIMEOUT_MS: integerText(100, 3_600_000).optional(),
  SEARXNG_URL: z.url({ protocol: /^https?$/ }).optional(),
  CORS_ORIGINS: commaList.pipe(originList).optional(),
  PUBLIC_URL: publicUrl.optional(),
  SESSION_IDLE_TIMEOUT_MS: integerText(60_000, 30 * 86_400_000).optional(),
  SESSION_MAX_AGE_MS: integerText(60_000, 366 * 86_400_000).optional(),
  SESSION_COOKIE_SECURE: z.enum(['auto', 'true', 'false']).optional(),
  LOGIN_ATTEMPTS_PER_MINUTE: integerText(1, 100_000).optional(),
  WEB_APP_DIR: z.string().min(1).optional(),
  METRICS_PORT: integerText(1, 65535).optional(),
  METRICS_HOST: z.string().min(1).optional(),
});

const tierSchema = z.strictObject({
  per_minute: z.int().positive(),
  per_day: z.int().positive(),
  /** The account's ceiling (all its keys together) for accounts of this tier. */
  account_per_minute: z.int().positive().optional(),
  account_per_day: z.int().positive().optional(),
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
  redis_key_prefix: redisKeyPrefix.optional(),
  jobs: z
    .strictObject({
      concurrency: z.int().min(1).max(256).optional(),
      lock_ms: z.int().min(1000).max(3_600_000).optional(),
      enqueue_wait_ms: z.int().min(0).max(60_000).optional(),
    })
    .optional(),
  trust_proxy: fileList.pipe(rangeList).optional(),
  log_level: z.enum(logLevels).optional(),
  request_log_sample: z.number().min(0).max(1).optional(),
  body_limit_bytes: z
    .int()
    .min(1024)
    .max(1024 * 1024 * 1024)
    .optional(),
  key_cache_ttl_ms: z.int().min(0).max(1000).optional(),
  shutdown_timeout_ms: z.int().min(0).max(600_000).optional(),
  request_timeout_ms: z.int().min(1000).max(3_600_000).optional(),
  headers_timeout_ms: z.int().min(1000).max(600_000).optional(),
  keep_alive_timeout_ms: z.int().min(1000).max(600_000).optional(),
  rate_limits: z
    .strictObject({
      default_tier: z
        .string()
        .regex(/^[a-z0-9_-]{1,32}$/)
        .optional(),
      tiers: z.record(z.string().regex(/^[a-z0-9_-]{1,32}$/), tierSchema).optional(),
      account_multiple: z.number().min(1).max(10_000).optional(),
    })
    .optional(),
  features: featureSchema.optional(),
  default_model: z.string().min(1).optional(),
  models: z.array(modelEntrySchema).max(500).optional(),
  templates: z.array(templateEntrySchema).max(200).optional(),
  models_dir: z.string().min(1).optional(),
  model_auto_pull: z.boolean().optional(),
  hf_endpoint: z.url({ protocol: /^https?$/ }).optional(),
  local_model_threads: z.int().min(1).max(256).optional(),
  local_model_gpu: z.union([z.literal('auto'), z.literal(false)]).optional(),
  model_timeout_ms: z.int().min(100).max(3_600_000).optional(),
  model_idle_timeout_ms: z.int().min(100).max(3_600_000).optional(),
  model_max_retries: z.int().min(0).max(10).optional(),
  web: z
    .strictObject({
      searxng_url: z.url({ protocol: /^https?$/ }).optional(),
      brave_base_url: z.url({ protocol: /^https?$/ }).optional(),
      brave_api_key_env: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
        .optional(),
      tavily_base_url: z.url({ protocol: /^https?$/ }).optional(),
      tavily_api_key_env: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
        .optional(),
      allowed_private_targets: z.array(z.string().min(1).max(255)).max(100).optional(),
      fetch_timeout_ms: z.int().min(100).max(120_000).optional(),
      max_page_bytes: z
        .int()
        .min(1024)
        .max(50 * 1024 * 1024)
        .optional(),
      max_redirects: z.int().min(0).max(20).optional(),
      user_agent: z.string().min(1).max(300).optional(),
    })
    .optional(),
  cors_origins: fileList.pipe(originList).optional(),
  public_url: publicUrl.optional(),
  sessions: z
    .strictObject({
      idle_timeout_ms: z
        .int()
        .min(60_000)
        .max(30 * 86_400_000)
        .optional(),
      max_age_ms: z
        .int()
        .min(60_000)
        .max(366 * 86_400_000)
        .optional(),
      cookie_secure: z.union([z.literal('auto'), z.boolean()]).optional(),
      login_attempts_per_minute: z.int().min(1).max(100_000).optional(),
    })
    .optional(),
  web_app_dir: z.string().min(1).optional(),
  metrics_port: z.int().min(1).max(65535).optional(),
  metrics_host: z.string().min(1).optional(),
  routing: z
    .strictObject({
      cache_max_bytes: z
        .int()
        .min(1024 * 1024)
        .max(64 * 1024 * 1024 * 1024)
        .optional(),
      min_score: z.number().min(0).max(1).optional(),
      max_examples_per_account: z.int().min(1).max(1_000_000).optional(),
      embedding_model: z.union([z.string().min(1), z.literal(false)]).optional(),
      intent_model: z.string().min(1).optional(),
    })
    .optional(),
  speech: z
    .strictObject({
      default_transcription_model: z.string().min(1).optional(),
      default_speech_model: z.string().min(1).optional(),
      max_audio_bytes: z
        .int()
        .min(1024)
        .max(200 * 1024 * 1024)
        .optional(),
      max_audio_seconds: z.int().min(1).max(3600).optional(),
      max_synthesis_characters: z.int().min(1).max(100_000).optional(),
      worker_threads: z.int().min(1).max(64).optional(),
      preload: z.boolean().optional(),
      engine_timeout_ms: z.int().min(100).max(600_000).optional(),
      transcription_processes: z.int().min(1).max(64).optional(),
      builtin_engines: z.boolean().optional(),
      realtime: z
        .strictObject({
          token_ttl_seconds: z.int().min(5).max(3600).optional(),
          session_ttl_seconds: z.int().min(10).max(86_400).optional(),
          idle_timeout_ms: z.int().min(1000).max(3_600_000).optional(),
          max_message_bytes: z
            .int()
            .min(1024)
            .max(64 * 1024 * 1024)
            .optional(),
          ping_interval_ms: z.int().min(100).max(300_000).optional(),
          credential_check_ms: z.int().min(50).max(1000).optional(),
          max_connections_per_key: z.int().min(1).max(100_000).optional(),
          end_of_speech_ms: z.int().min(100).max(5000).optional(),
          speech_start_ms: z.int().min(20).max(2000).optional(),
          vad_mode: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]).optional(),
          max_utterance_seconds: z.int().min(1).max(600).optional(),
        })
        .optional(),
    })
    .optional(),
  knowledge: z
    .strictObject({
      embedding_model: z.string().min(1).optional(),
      chunk_size: z.int().min(200).max(20_000).optional(),
      chunk_overlap: z.int().min(0).max(5000).optional(),
    })
    .optional(),
  text: z
    .strictObject({
      worker_threads: z.int().min(1).max(64).optional(),
      max_queue: z.int().min(1).max(10_000).optional(),
      timeout_ms: z.int().min(100).max(600_000).optional(),
      timeout_ms_per_mib: z.int().min(0).max(600_000).optional(),
      max_heap_mb: z.int().min(64).max(16_384).optional(),
    })
    .optional(),
});

type FileConfig = z.infer<typeof fileSchema>;

export interface LoadConfigOptions {
  env?: Record<string, string | undefined>;
  /** Directory relative paths are resolved against; defaults to the process's working directory. */
  cwd?: string;
  /** Settings applied over the file (used by tests and benchmarks; same schema as the file). */
  overrides?: z.input<typeof fileSchema>;
}

function formatIssues(issues: z.core.$ZodIssue[], label: (issuePath: PropertyKey[]) => string) {
  return issues.map((issue) => `${label(issue.path)}: ${issue.message}`);
}

function readPackageVersion(): { name: string; version: string } {
  const file = path.join(packageRoot, 'package.json');
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

function parseDatabaseUrl(url: string, cwd: string, pgUser: string | undefined): DatabaseConfig {
  if (url.startsWith('sqlite:')) {
    const location = url.slice('sqlite:'.length);
    return {
      kind: 'sqlite',
      path: location === ':memory:' ? location : path.resolve(cwd, location),
    };
  }
  // Like libpq: without a user in the URL or PGUSER, connect as the operating-system user
  // (node-postgres would otherwise rely on $USER, which services and containers often lack).
  const parsed = new URL(url);
  if (parsed.username === '' && pgUser === undefined) {
    parsed.username = encodeURIComponent(userInfo().username);
    return { kind: 'postgres', url: parsed.toString() };
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
  // An account's ceiling (the sum over its keys): the tier's own, else a multiple of its key limits.
  const accountMultiple = file.rate_limits?.account_multiple ?? 5;
  const accountTiers: Record<string, RateLimitTier> = {};
  for (const [name, tier] of Object.entries(tiers)) {
    const fileTiers = file.rate_limits?.tiers ?? {};
    const configured = Object.hasOwn(fileTiers, name) ? fileTiers[name] : undefined;
    accountTiers[name] = {
      perMinute: configured?.account_per_minute ?? Math.ceil(tier.perMinute * accountMultiple),
      perDay: configured?.account_per_day ?? Math.ceil(tier.perDay * accountMultiple),
    };
  }
  const defaultTier = file.rate_limits?.default_tier ?? 'free';
  if (tiers[defaultTier] === undefined) {
    problems.push(
      `${fileLabel ?? 'config'}: rate_limits.default_tier: '${defaultTier}' is not a defined tier (${Object.keys(tiers).join(', ')})`,
    );
  }

  // Every feature of the spec is on unless the configuration switches it off.
  const features = Object.fromEntries(
    featureNames.map((name) => [name, file.features?.[name] ?? true]),
  ) as Record<FeatureName, boolean>;

  const modelsDirectory = path.resolve(
    cwd,
    fromEnv.MODELS_DIR ?? file.models_dir ?? './data/models',
  );
  const cores = availableParallelism();
  const models = buildModelCatalog(
    file.models,
    file.default_model,
    {
      modelsDirectory,
      // More threads than cores only adds contention; on two cores one thread leaves the other
      // to the HTTP server.
      localThreads:
        fromEnv.LOCAL_MODEL_THREADS ?? file.local_model_threads ?? (cores <= 2 ? 1 : cores),
      timeoutMs: fromEnv.MODEL_TIMEOUT_MS ?? file.model_timeout_ms ?? 60_000,
      idleTimeoutMs: fromEnv.MODEL_IDLE_TIMEOUT_MS ?? file.model_idle_timeout_ms ?? 20_000,
      maxRetries: file.model_max_retries ?? 2,
    },
    cwd,
    fileLabel ?? 'config',
    problems,
    file.speech?.builtin_engines ?? true,
  );

  const templates = buildTemplates(file.templates, fileLabel ?? 'config', problems);
  const knowledgeEmbeddingModel = file.knowledge?.embedding_model ?? null;
  if (knowledgeEmbeddingModel !== null) {
    const target = models.definitions.find((model) => model.name === knowledgeEmbeddingModel);
    if (target === undefined || target.type !== 'embedding') {
      problems.push(
        `${fileLabel ?? 'config'}: knowledge.embedding_model: '${knowledgeEmbeddingModel}' is not a defined embedding model`,
      );
    }
  }
  const speechDefaults = {
    transcription: file.speech?.default_transcription_model ?? null,
    speech: file.speech?.default_speech_model ?? null,
  } as const;
  for (const [kind, name] of Object.entries(speechDefaults)) {
    if (name === null) continue;
    const target = models.definitions.find((model) => model.name === name);
    if (target === undefined || target.type !== kind) {
      problems.push(
        `${fileLabel ?? 'config'}: speech.default_${kind === 'speech' ? 'speech' : 'transcription'}_model: '${name}' is not a defined ${kind} model`,
      );
    }
  }
  try {
    TargetAllowList.parse(file.web?.allowed_private_targets ?? []);
  } catch (error) {
    if (!(error instanceof AllowListEntryError)) throw error;
    problems.push(`${fileLabel ?? 'config'}: ${error.message}`);
  }
  const routingEmbeddingModel = file.routing?.embedding_model;
  if (typeof routingEmbeddingModel === 'string') {
    const target = models.definitions.find((model) => model.name === routingEmbeddingModel);
    if (target === undefined || target.type !== 'embedding') {
      problems.push(
        `${fileLabel ?? 'config'}: routing.embedding_model: '${routingEmbeddingModel}' is not a defined embedding model`,
      );
    }
  }
  const intentModel = file.routing?.intent_model ?? null;
  if (intentModel !== null) {
    const target = models.definitions.find((model) => model.name === intentModel);
    if (target === undefined || target.type !== 'chat') {
      problems.push(
        `${fileLabel ?? 'config'}: routing.intent_model: '${intentModel}' is not a defined chat model`,
      );
    }
  }
  const chunkSize = file.knowledge?.chunk_size ?? 1200;
  const chunkOverlap = file.knowledge?.chunk_overlap ?? 150;
  if (chunkOverlap >= chunkSize / 2) {
    problems.push(
      `${fileLabel ?? 'config'}: knowledge.chunk_overlap must be less than half of chunk_size`,
    );
  }

  const requestTimeoutMs = fromEnv.REQUEST_TIMEOUT_MS ?? file.request_timeout_ms ?? 30_000;
  const headersTimeoutMs = fromEnv.HEADERS_TIMEOUT_MS ?? file.headers_timeout_ms ?? 10_000;
  if (headersTimeoutMs > requestTimeoutMs) {
    problems.push(
      'HEADERS_TIMEOUT_MS (headers_timeout_ms) must not exceed REQUEST_TIMEOUT_MS (request_timeout_ms): the headers are part of the request',
    );
  }
  const sessionIdleTimeoutMs =
    fromEnv.SESSION_IDLE_TIMEOUT_MS ?? file.sessions?.idle_timeout_ms ?? 30 * 60_000;
  const sessionMaxAgeMs = fromEnv.SESSION_MAX_AGE_MS ?? file.sessions?.max_age_ms ?? 12 * 3_600_000;
  if (sessionIdleTimeoutMs > sessionMaxAgeMs) {
    problems.push(
      `${fileLabel ?? 'config'}: sessions.idle_timeout_ms (SESSION_IDLE_TIMEOUT_MS) must not exceed sessions.max_age_ms (SESSION_MAX_AGE_MS)`,
    );
  }
  const cookieSecureText = fromEnv.SESSION_COOKIE_SECURE;
  const cookieSecure: boolean | 'auto' =
    cookieSecureText === undefined
      ? (file.sessions?.cookie_secure ?? 'auto')
      : cookieSecureText === 'auto'
        ? 'auto'
        : cookieSecureText === 'true';

  const host = fromEnv.HOST ?? file.host ?? '127.0.0.1';
  const port = fromEnv.PORT ?? file.port ?? 8080;
  const metricsPort = fromEnv.METRICS_PORT ?? file.metrics_port ?? null;
  const metricsHost = fromEnv.METRICS_HOST ?? file.metrics_host ?? host;
  if (metricsPort !== null && metricsPort === port && metricsHost === host) {
    problems.push(
      'METRICS_PORT (metrics_port) must differ from PORT (port): metrics get an address of their own',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const packageInfo = readPackageVersion();
  const config: AppConfig = {
    serviceName: packageInfo.name,
    version: packageInfo.version,
    configFile: fileLabel,
    server: {
      host,
      port,
      bodyLimitBytes: fromEnv.BODY_LIMIT_BYTES ?? file.body_limit_bytes ?? 1024 * 1024,
      trustProxy: fromEnv.TRUST_PROXY ?? file.trust_proxy ?? [],
      shutdownTimeoutMs: fromEnv.SHUTDOWN_TIMEOUT_MS ?? file.shutdown_timeout_ms ?? 10_000,
      requestTimeoutMs,
      headersTimeoutMs,
      keepAliveTimeoutMs: fromEnv.KEEP_ALIVE_TIMEOUT_MS ?? file.keep_alive_timeout_ms ?? 72_000,
      logLevel: fromEnv.LOG_LEVEL ?? file.log_level ?? 'info',
      requestLogSample: fromEnv.REQUEST_LOG_SAMPLE ?? file.request_log_sample ?? 1,
      corsOrigins: fromEnv.CORS_ORIGINS ?? file.cors_origins ?? [],
      publicOrigin: fromEnv.PUBLIC_URL ?? file.public_url ?? null,
    },
    metrics: { port: metricsPort, host: metricsHost },
    sessions: {
      idleTimeoutMs: sessionIdleTimeoutMs,
      maxAgeMs: sessionMaxAgeMs,
      cookieSecure,
      loginAttemptsPerMinute:
        fromEnv.LOGIN_ATTEMPTS_PER_MINUTE ?? file.sessions?.login_attempts_per_minute ?? 10,
    },
    webApp: {
      directory:
        fromEnv.WEB_APP_DIR !== undefined || file.web_app_dir !== undefined
          ? path.resolve(cwd, fromEnv.WEB_APP_DIR ?? file.web_app_dir ?? '')
          : defaultWebAppDirectory(),
    },
    database: parseDatabaseUrl(
      fromEnv.DATABASE_URL ?? file.database_url ?? 'sqlite:./data/platform.db',
      cwd,
      env.PGUSER,
    ),
    redisUrl: fromEnv.REDIS_URL ?? file.redis_url ?? null,
    redisKeyPrefix: fromEnv.REDIS_KEY_PREFIX ?? file.redis_key_prefix ?? '',
    jobs: {
      concurrency: fromEnv.JOB_CONCURRENCY ?? file.jobs?.concurrency ?? 4,
      lockMs: fromEnv.JOB_LOCK_MS ?? file.jobs?.lock_ms ?? 30_000,
      enqueueWaitMs: fromEnv.JOB_ENQUEUE_WAIT_MS ?? file.jobs?.enqueue_wait_ms ?? 2000,
    },
    auth: {
      adminKey: fromEnv.PLATFORM_ADMIN_KEY ?? null,
      apiKeySecret: fromEnv.API_KEY_SECRET ?? null,
      keyCacheTtlMs: fromEnv.KEY_CACHE_TTL_MS ?? file.key_cache_ttl_ms ?? 500,
      lastUsedWriteIntervalMs: 60_000,
    },
    rateLimits: { defaultTier, tiers, accountTiers },
    features,
    models: {
      definitions: models.definitions,
      defaultModel: models.defaultModel,
      modelsDirectory,
      autoPull: fromEnv.MODEL_AUTO_PULL ?? file.model_auto_pull ?? true,
      huggingFaceEndpoint: fromEnv.HF_ENDPOINT ?? file.hf_endpoint ?? 'https://huggingface.co',
      localGpu:
        fromEnv.LOCAL_MODEL_GPU === 'auto'
          ? 'auto'
          : fromEnv.LOCAL_MODEL_GPU === 'false'
            ? false
            : (file.local_model_gpu ?? false),
    },
    web: {
      searxngUrl: fromEnv.SEARXNG_URL ?? file.web?.searxng_url ?? null,
      braveBaseUrl: file.web?.brave_base_url ?? 'https://api.search.brave.com',
      braveApiKeyEnv: file.web?.brave_api_key_env ?? 'BRAVE_API_KEY',
      tavilyBaseUrl: file.web?.tavily_base_url ?? 'https://api.tavily.com',
      tavilyApiKeyEnv: file.web?.tavily_api_key_env ?? 'TAVILY_API_KEY',
      allowedPrivateTargets: file.web?.allowed_private_targets ?? [],
      fetchTimeoutMs: file.web?.fetch_timeout_ms ?? 10_000,
      maxPageBytes: file.web?.max_page_bytes ?? 2 * 1024 * 1024,
      maxRedirects: file.web?.max_redirects ?? 5,
      userAgent: file.web?.user_agent ?? `${packageInfo.name}/${packageInfo.version}`,
    },
    knowledge: { embeddingModel: knowledgeEmbeddingModel, chunkSize, chunkOverlap },
    text: {
      workerThreads: file.text?.worker_threads ?? Math.max(1, Math.min(4, cores - 1)),
      maxQueue: file.text?.max_queue ?? 64,
      timeoutMs: file.text?.timeout_ms ?? 2000,
      timeoutMsPerMib: file.text?.timeout_ms_per_mib ?? 6000,
      maxHeapMb: file.text?.max_heap_mb ?? 1024,
    },
    routing: {
      cacheMaxBytes: file.routing?.cache_max_bytes ?? 256 * 1024 * 1024,
      minScore: file.routing?.min_score ?? defaultRoutingMinScore,
      maxExamplesPerAccount: file.routing?.max_examples_per_account ?? 50_000,
      embeddingModel:
        routingEmbeddingModel === false
          ? false
          : (routingEmbeddingModel ?? knowledgeEmbeddingModel ?? 'auto'),
      intentModel,
    },
    speech: {
      defaultTranscriptionModel: speechDefaults.transcription,
      defaultSpeechModel: speechDefaults.speech,
      maxAudioBytes: file.speech?.max_audio_bytes ?? 25 * 1024 * 1024,
      maxAudioSeconds: file.speech?.max_audio_seconds ?? 600,
      maxSynthesisCharacters: file.speech?.max_synthesis_characters ?? 5000,
      workerThreads: file.speech?.worker_threads ?? Math.max(1, Math.min(4, cores - 1)),
      preload: file.speech?.preload ?? false,
      engineTimeoutMs: file.speech?.engine_timeout_ms ?? 60_000,
      transcriptionProcesses: file.speech?.transcription_processes ?? Math.max(2, cores),
      programSearchPath: (env.PATH ?? '').split(path.delimiter).filter((entry) => entry !== ''),
      realtime: {
        tokenTtlSeconds: file.speech?.realtime?.token_ttl_seconds ?? 120,
        sessionTtlSeconds: file.speech?.realtime?.session_ttl_seconds ?? 3600,
        idleTimeoutMs: file.speech?.realtime?.idle_timeout_ms ?? 120_000,
        maxMessageBytes: file.speech?.realtime?.max_message_bytes ?? 1024 * 1024,
        pingIntervalMs: file.speech?.realtime?.ping_interval_ms ?? 20_000,
        credentialCheckMs: file.speech?.realtime?.credential_check_ms ?? 250,
        maxConnectionsPerKey:
          fromEnv.WS_MAX_CONNECTIONS_PER_KEY ??
          file.speech?.realtime?.max_connections_per_key ??
          20,
        endOfSpeechMs: file.speech?.realtime?.end_of_speech_ms ?? 300,
        speechStartMs: file.speech?.realtime?.speech_start_ms ?? 40,
        vadMode: file.speech?.realtime?.vad_mode ?? 3,
        maxUtteranceSeconds: file.speech?.realtime?.max_utterance_seconds ?? 30,
      },
    },
    templates,
    secrets: {
      get: (name: string) => {
        const value = env[name];
        return value === undefined || value === '' ? undefined : value;
      },
    },
  };
  return deepFreeze(config);
}

/** The built web app next to the server's own files: `<package>/web/dist`. */
function defaultWebAppDirectory(): string {
  return path.join(packageRoot, 'web', 'dist');
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
