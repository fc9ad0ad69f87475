// The only code that reads process.env or the config file: each piece of the configuration reads
// its variables and checks its part of the file, and every problem is reported at once.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import {
  rateLimitsConfig,
  readSessionsEnv,
  sessionsConfig,
} from '../modules/accounts/accounts.config.js';
import { readWebEnv, webConfig } from '../modules/agents/agents.config.js';
import { chatConfig, readChatEnv } from '../modules/chat/chat.config.js';
import { featuresConfig } from '../modules/health/health.config.js';
import { featureNames } from '../modules/health/feature-catalog.js';
import { knowledgeConfig } from '../modules/knowledge/knowledge.config.js';
import { routingConfig } from '../modules/routing/routing.config.js';
import { templatesConfig } from '../modules/templates/templates.config.js';
import { readToolsEnv, toolsConfig } from '../modules/tools/tools.config.js';
import { readUsageEnv, usageConfig } from '../modules/usage/usage.config.js';
import { auditConfig, readAuditEnv } from '../modules/audit/audit.config.js';
import { oidcConfig } from '../modules/accounts/sso/sso.config.js';
import { scopes } from '../auth/scopes.js';
import { cacheConfig } from './cache-config.js';
import { readSpeechEnv, speechConfig } from '../modules/voice/voice.config.js';
import { AllowListEntryError, TargetAllowList } from '../net/address-policy.js';
import { packageRoot } from '../runtime-paths.js';
import type { AppConfig } from './config.js';
import { readSettings, type ConfigFile } from './config-file.js';
import { EnvReader, type Env, type Problems, type SectionContext } from './config-kit.js';
import { databaseConfig, readDatabaseEnv } from './database-config.js';
import { loggingConfig, readLoggingEnv } from './logging-config.js';
import { modelsConfig, readModelsEnv } from './models-config.js';
import { readRedisEnv, redisConfig } from './redis-config.js';
import { readSecretsEnv, secretsConfig } from './secrets-config.js';
import { readServerEnv, serverConfig } from './server-config.js';
import { textConfig } from './text-config.js';
import { telemetrySettings } from './telemetry-config.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export interface LoadConfigOptions {
  env?: Record<string, string | undefined>;
  /** Directory relative paths are resolved against; defaults to the process's working directory. */
  cwd?: string;
  /** Settings applied over the file (used by tests and benchmarks; same schema as the file). */
  overrides?: ConfigFile;
}

/** Every piece's environment variables, read and checked (in the order problems are listed). */
function readEnvironment(env: Env, problems: Problems) {
  const reader = new EnvReader(env, problems);
  return {
    server: readServerEnv(reader, problems),
    logging: readLoggingEnv(reader),
    database: readDatabaseEnv(reader),
    redis: readRedisEnv(reader),
    secrets: readSecretsEnv(reader, problems),
    models: readModelsEnv(reader),
    sessions: readSessionsEnv(reader),
    web: readWebEnv(reader),
    tools: readToolsEnv(reader),
    usage: readUsageEnv(reader),
    audit: readAuditEnv(reader),
    speech: readSpeechEnv(reader, path.delimiter),
    chat: readChatEnv(reader),
  };
}

type FromEnv = ReturnType<typeof readEnvironment>;

/** Where problems go and what they are resolved against, for every piece. */
interface Composition {
  env: Env;
  fromEnv: FromEnv;
  file: ConfigFile;
  cwd: string;
  /** The config file's path, or `config`. */
  label: string;
  problems: Problems;
}

/** Reads environment and config file once, validates both, and returns a frozen configuration. */
export function loadConfig(options: LoadConfigOptions = {}): AppConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const problems: Problems = [];
  const fromEnv = readEnvironment(env, problems);
  const settings = readSettings(env.PLATFORM_CONFIG, options.overrides, cwd, problems);
  const composition: Composition = {
    env,
    fromEnv,
    file: settings.file,
    cwd,
    label: settings.label ?? 'config',
    problems,
  };
  const packageInfo = readPackageVersion();
  const features = featureSections(composition, `${packageInfo.name}/${packageInfo.version}`);
  const service = serviceSections(composition);
  if (problems.length > 0) throw new ConfigError(problems);
  const config: AppConfig = {
    serviceName: packageInfo.name,
    version: packageInfo.version,
    configFile: settings.label,
    ...service,
    database: databaseConfig(fromEnv.database, settings.file, cwd),
    ...features,
    telemetry: telemetrySettings(env, packageInfo.name),
  };
  return deepFreeze(config);
}

/** The service's own sections: server, logging, Redis and jobs, keys and secrets, text workers. */
function serviceSections(composition: Composition) {
  const { env, fromEnv, file, cwd, problems } = composition;
  const { server, metrics, webApp } = serverConfig(fromEnv.server, file, { cwd, problems });
  return {
    server: { ...server, ...loggingConfig(fromEnv.logging, file) },
    metrics,
    webApp,
    ...redisConfig(fromEnv.redis, file),
    ...withSingleSignOn(secretsConfig(fromEnv.secrets, file, env), composition),
    text: textConfig(file.text),
  };
}

/** Single sign-on (`auth.oidc`) beside the keys' own settings in `auth`. */
function withSingleSignOn<Secrets extends { auth: object }>(
  secrets: Secrets,
  { env, file, label, problems }: Composition,
) {
  const oidc = oidcConfig(file.auth?.oidc, { label, problems, env, knownScopes: scopes });
  return { ...secrets, auth: { ...secrets.auth, oidc } };
}

/** The model catalog and the sections of the feature modules, cross-checked against it. */
function featureSections(composition: Composition, defaultUserAgent: string) {
  const { fromEnv, file, cwd, label, problems } = composition;
  const models = modelsConfig(fromEnv.models, file, {
    keepBuiltInEngines: file.speech?.builtin_engines ?? true,
    cwd,
    label,
    problems,
  });
  const kinds = new Map(models.definitions.map((model) => [model.name, model.type]));
  const context: SectionContext = { label, problems, modelTypeOf: (name) => kinds.get(name) };
  const knowledge = knowledgeConfig(file.knowledge, context);
  checkAllowList(file.web?.allowed_private_targets ?? [], 'web.allowed_private_targets', context);
  checkAllowList(
    file.tools?.allowed_private_targets ?? [],
    'tools.allowed_private_targets',
    context,
  );
  return {
    rateLimits: rateLimitsConfig(file.rate_limits, context),
    sessions: sessionsConfig(fromEnv.sessions, file.sessions, context),
    // Every feature of the spec is on unless the configuration switches it off.
    features: featuresConfig(featureNames, file.features),
    models,
    templates: templatesConfig(file.templates, context),
    web: webConfig(fromEnv.web, file.web, defaultUserAgent),
    tools: toolsConfig(file.tools),
    usage: usageConfig(fromEnv.usage, file.usage),
    audit: auditConfig(fromEnv.audit, file.audit),
    cache: cacheConfig(file.cache),
    chat: chatConfig(fromEnv.chat, file.chat),
    knowledge,
    routing: routingConfig(file.routing, knowledge.embeddingModel, context),
    speech: speechConfig(fromEnv.speech, file.speech, {
      ...context,
      cores: availableParallelism(),
    }),
  };
}

/** An allow-list (the web agent's, the tool connections'), read as the address policy will. */
function checkAllowList(
  entries: readonly string[],
  setting: string,
  context: SectionContext,
): void {
  try {
    TargetAllowList.parse(entries, setting);
  } catch (error) {
    if (!(error instanceof AllowListEntryError)) throw error;
    context.problems.push(`${context.label}: ${error.message}`);
  }
}

function readPackageVersion(): { name: string; version: string } {
  const file = path.join(packageRoot, 'package.json');
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { name: string; version: string };
  return { name: parsed.name, version: parsed.version };
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
