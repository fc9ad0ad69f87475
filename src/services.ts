// Wiring of the service: opens the stores and engines, builds every feature module over them
// (src/service-modules.ts), and closes them again.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createAccountsModule } from './modules/accounts/module.js';
import { createMetricsModule } from './modules/metrics/module.js';
import type { AppConfig, LocalModelDefinition } from './config/config.js';
import { NodeLlamaEngine } from './models/local/local-engine.js';
import { ModelRegistry } from './models/model-registry.js';
import { MemoryDeploymentHealth } from './models/deployments/deployment-health.js';
import { RedisDeploymentHealth } from './models/deployments/redis-deployment-health.js';
import { MemoryResponseStore, RedisResponseStore } from './models/cache/response-cache.js';
import { SpeechEngines } from './models/speech/speech-engines.js';
import { openStorage, type Storage } from './storage/database.js';
import { createUsageLedger } from './modules/usage/module.js';
import { createBudgetsModule } from './modules/budgets/module.js';
import { createAuditModule } from './modules/audit/module.js';
import type { AccountsModule } from './modules/accounts/module.js';
import { Closers } from './lifecycle/closers.js';
import { servicesOf, type ServiceContainer, type ServiceOverrides } from './service-container.js';
import {
  contentModules,
  redisName,
  runModules,
  servingModules,
  type Engines,
  type Wiring,
} from './service-modules.js';
import { startTelemetry } from './telemetry/otel-runtime.js';

export type { ServiceContainer, ServiceOverrides, Services } from './service-container.js';

/** ioredis is loaded only when REDIS_URL is set. */
async function connectRedis(url: string, logger: Logger): Promise<Redis> {
  const { Redis: RedisClient } = await import('ioredis');
  const client = new RedisClient(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  client.on('error', (error: Error) => logger.warn({ err: error }, 'redis connection error'));
  return client;
}

/**
 * Builds every service. Each resource that needs closing is added to a closer stack as soon as it
 * exists: when a later step fails, what was started before it is closed (last first) and the
 * step's error is thrown; the container's close() walks the same stack.
 */
export async function createServices(
  config: AppConfig,
  logger: Logger,
  overrides: ServiceOverrides = {},
): Promise<ServiceContainer> {
  const closers = new Closers();
  try {
    return await wireServices(config, logger, overrides, closers);
  } catch (error) {
    await closers
      .closeAll()
      .catch((failure: unknown) =>
        logger.warn({ err: failure }, 'closing what had started before a failed start'),
      );
    throw error;
  }
}

async function wireServices(
  config: AppConfig,
  logger: Logger,
  overrides: ServiceOverrides,
  closers: Closers,
): Promise<ServiceContainer> {
  // First started, last stopped: what the others' closing does is still traced and flushed.
  if (config.telemetry.enabled) {
    closers.add('telemetry', await startTelemetry(config.telemetry, logger));
  }
  const { storage, redis } = await openStores(config, logger, overrides, closers);
  const now = overrides.now ?? Date.now;
  const wiring: Wiring = { config, logger, overrides, closers, storage, redis, now };
  const audit = closers.started(
    'audit log',
    createAuditModule({ storage, config: config.audit, logger, now }),
  );
  const accounts = closers.started(
    'accounts',
    createAccountsModule({
      config,
      db: storage.db,
      isUniqueViolation: (error) => storage.isUniqueViolation(error),
      redis,
      rateLimitPrefix: overrides.rateLimitPrefix ?? redisName(config, 'rl'),
      logger,
      now,
      // Single sign-on records its sign-ins there.
      auditLog: audit.log,
    }),
  );
  const engines = openEngines(wiring, accounts);
  const content = await contentModules(wiring, engines.models);
  const runs = await runModules(wiring, engines, content, accounts);
  const serving = servingModules(wiring, engines, { ...content, ...runs, accounts });
  const modules = {
    accounts,
    audit,
    metrics: engines.metrics,
    budgets: engines.budgets,
    ...content,
    ...runs,
    ...serving,
  };
  return {
    ...servicesOf(config, modules, { models: engines.models, text: content.text }),
    storage,
    redis,
    localEngine: engines.localEngine,
    instances: runs.executions.instances,
    usageLedger: engines.usage,
    startBackgroundWork: () => {
      audit.startPruning();
      startBackgroundWork(config, engines, logger);
    },
    close: () => closers.closeAll(),
  };
}

/** The database, and Redis when one is configured. */
async function openStores(
  config: AppConfig,
  logger: Logger,
  overrides: ServiceOverrides,
  closers: Closers,
): Promise<{ storage: Storage; redis: Redis | null }> {
  const storage = await openStorage(config.database);
  closers.add('storage', () => storage.close());
  if (config.redisUrl === null || overrides.withoutRedis === true) return { storage, redis: null };
  try {
    const client = await connectRedis(config.redisUrl, logger);
    // A client that never connected (or lost its connection) has nothing to say QUIT to.
    closers.add('redis', () =>
      client.status === 'ready'
        ? client.quit().then(
            () => undefined,
            () => client.disconnect(),
          )
        : client.disconnect(),
    );
    await client.connect();
    return { storage, redis: client };
  } catch (error) {
    throw new Error(`Cannot connect to Redis at REDIS_URL`, { cause: error });
  }
}

/**
 * The local model engine, the speech engines, the metrics, the budgets, the usage ledger, and the
 * model registry over them (every call it hands out metered by the ledger, under the budgets).
 */
function openEngines(wiring: Wiring, accounts: AccountsModule): Engines {
  const { config, logger, closers, storage, redis, now, overrides } = wiring;
  const localEngine = closers.started(
    'local model engine',
    new NodeLlamaEngine({
      gpu: config.models.localGpu,
      huggingFaceEndpoint: config.models.huggingFaceEndpoint,
      huggingFaceToken: () => config.secrets.get('HF_TOKEN'),
      logger,
    }),
  );
  const speechEngines = closers.started('speech engines', SpeechEngines.fromConfig(config));
  const metrics = createMetricsModule({ config });
  const budgets = createBudgetsModule({
    storage,
    redis,
    redisName: (name) => redisName(config, name),
    failOpen: config.usage.budgetsFailOpen,
    keys: accounts.keyLookup,
    observer: metrics.metrics,
    logger,
    now,
  });
  const usage = closers.started(
    'usage ledger',
    createUsageLedger({
      config: config.usage,
      storage,
      logger,
      observer: metrics.metrics,
      now,
      budgets: budgets.gate,
    }),
  );
  // Deployments' cooldowns: seen by every instance through Redis, else this process's own.
  const health = closers.started(
    'deployment health',
    redis === null
      ? new MemoryDeploymentHealth(config.models.upstreams)
      : new RedisDeploymentHealth(
          redis,
          redisName(config, 'deployments'),
          config.models.upstreams,
          logger,
        ),
  );
  if (
    config.models.definitions.some(
      (model) => 'deployments' in model && model.deployments.length > 0,
    )
  ) {
    // Subscribed before the first request, so that no other instance's change is missed.
    void health.start();
  }
  const models = new ModelRegistry(config, localEngine, logger, {
    speech: speechEngines,
    observer: metrics.metrics,
    meter: usage.meter,
    health,
    ...(overrides.deploymentRandom === undefined ? {} : { random: overrides.deploymentRandom }),
    // The exact response cache: in Redis when there is one, else in this process.
    responses:
      redis === null
        ? new MemoryResponseStore(config.cache.maxBytes, config.cache.maxEntryBytes)
        : new RedisResponseStore(redis, redisName(config, 'responses'), config.cache.maxEntryBytes),
  });
  return { localEngine, speechEngines, metrics, budgets, models, usage };
}

/** Background work that must not run in command-line tools: audio threads warming up, model pulls. */
function startBackgroundWork(config: AppConfig, engines: Engines, logger: Logger): void {
  // eSpeak NG loads in each audio thread ahead of the first synthesis, when so configured.
  if (
    config.speech.preload &&
    config.models.definitions.some(
      (definition) => definition.provider === 'espeak-ng' && definition.type === 'speech',
    )
  ) {
    engines.speechEngines.pool
      .warmUp()
      .catch((error: unknown) => logger.warn({ err: error }, 'audio workers failed to start'));
  }
  if (config.models.autoPull) {
    engines.localEngine.startAutoPull(
      config.models.definitions.filter(
        (definition): definition is LocalModelDefinition => definition.provider === 'local',
      ),
    );
  }
}
