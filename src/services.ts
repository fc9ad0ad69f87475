// Wiring of the domain: builds every service from the configuration, and closes them again.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { rateLimitExceeded } from './modules/accounts/rate-limiter.js';
import { createAccountsModule, type AccountsModule } from './modules/accounts/module.js';
import { createAgentsModule, type AgentsModule } from './modules/agents/module.js';
import { createToolsModule, type ToolsModule } from './modules/tools/module.js';
import { createExecutionsModule, type ExecutionsModule } from './modules/executions/module.js';
import { createChatModule, type ChatModule } from './modules/chat/module.js';
import { createCompletionsModule } from './modules/completions/module.js';
import { createMessagesModule } from './modules/messages/module.js';
import { createResponsesModule } from './modules/responses/module.js';
import { createMetricsModule, type MetricsModule } from './modules/metrics/module.js';
import {
  createPipelinesModule,
  pipelinesUsingAgents,
  type PipelinesModule,
} from './modules/pipelines/module.js';
import type { AppConfig, LocalModelDefinition } from './config/config.js';
import {
  createConversationsModule,
  type ConversationsModule,
} from './modules/conversations/module.js';
import { TextPool } from './text-pool/text-pool.js';
import { NodeLlamaEngine } from './models/local/local-engine.js';
import { ModelRegistry } from './models/model-registry.js';
import { SpeechEngines } from './models/speech/speech-engines.js';
import { createVoiceModule, type VoiceModule } from './modules/voice/module.js';
import { createTemplatesModule } from './modules/templates/module.js';
import { openStorage, type Storage } from './storage/database.js';
import { createRoutingModule } from './modules/routing/module.js';
import { createLayoutModule } from './modules/layout/module.js';
import {
  createUsageLedger,
  createUsageModule,
  type UsageLedgerModule,
} from './modules/usage/module.js';
import { createHealthModule } from './modules/health/module.js';
import { createKnowledgeModule } from './modules/knowledge/module.js';
import { createMcpModule } from './modules/mcp/module.js';
import { Closers } from './lifecycle/closers.js';
import { servicesOf, type ServiceContainer, type ServiceOverrides } from './service-container.js';

export type { ServiceContainer, ServiceOverrides, Services } from './service-container.js';

/** A Redis key or channel name under the configured prefix (none: the name as it always was). */
function redisName(config: AppConfig, name: string): string {
  return config.redisKeyPrefix === '' ? name : `${config.redisKeyPrefix}:${name}`;
}

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

/** What every step of the wiring reads: the configuration, the stores, the clock, the closers. */
interface Wiring {
  readonly config: AppConfig;
  readonly logger: Logger;
  readonly overrides: ServiceOverrides;
  readonly closers: Closers;
  readonly storage: Storage;
  readonly redis: Redis | null;
  readonly now: () => number;
}

async function wireServices(
  config: AppConfig,
  logger: Logger,
  overrides: ServiceOverrides,
  closers: Closers,
): Promise<ServiceContainer> {
  const { storage, redis } = await openStores(config, logger, overrides, closers);
  const now = overrides.now ?? Date.now;
  const wiring: Wiring = { config, logger, overrides, closers, storage, redis, now };
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
    }),
  );
  const engines = openEngines(wiring);
  const content = await contentModules(wiring, engines.models);
  const runs = await runModules(wiring, engines, content, accounts);
  const serving = servingModules(wiring, engines, { ...content, ...runs, accounts });
  const modules = { accounts, metrics: engines.metrics, ...content, ...runs, ...serving };
  return {
    ...servicesOf(config, modules, { models: engines.models, text: content.text }),
    storage,
    redis,
    localEngine: engines.localEngine,
    instances: runs.executions.instances,
    usageLedger: engines.usage,
    startBackgroundWork: () => startBackgroundWork(config, engines, logger),
    close: () => closers.closeAll(),
  };
}

/** Prompt templates, conversations, the text threads and knowledge bases. */
async function contentModules(wiring: Wiring, models: ModelRegistry) {
  const { config, closers, storage, logger, now } = wiring;
  const templates = closers.started('templates', createTemplatesModule({ config }));
  const conversations = closers.started(
    'conversations',
    createConversationsModule({ db: storage.db, models, templates: templates.service, now }),
  );
  const text = closers.started('text threads', new TextPool(config.text));
  const knowledge = closers.started(
    'knowledge',
    await createKnowledgeModule({ config, storage, models, text, logger, now }),
  );
  return { templates, conversations, text, knowledge };
}

/**
 * The tool registry and the execution records first, then the agents that record their runs there,
 * then the pipelines whose stages run agents: each built over the ones before it, given what it
 * needs. The agents and pipelines modules give the registry their parts (themselves, as tools).
 */
async function runModules(
  wiring: Wiring,
  engines: Engines,
  content: Awaited<ReturnType<typeof contentModules>>,
  accounts: AccountsModule,
): Promise<{
  tools: ToolsModule;
  executions: ExecutionsModule;
  agents: AgentsModule;
  pipelines: PipelinesModule;
}> {
  const { config, closers, storage, redis, overrides, logger, now } = wiring;
  // MCP servers' and OpenAPI APIs' tools: one connection pool and tool-list cache per process.
  // Large answers of MCP servers are parsed in the text threads.
  const tools = closers.started(
    'tools',
    createToolsModule({ config, text: content.text, knowledge: content.knowledge.service, logger }),
  );
  const executions = closers.started(
    'executions',
    await createExecutionsModule({
      config,
      storage,
      redis,
      redisName: (name) => redisName(config, name),
      executionChannel: overrides.executionChannel,
      jobPrefix: overrides.jobPrefix,
      conversations: content.conversations.service,
      arguments: tools.arguments,
      credentialWatch: accounts.credentialWatch,
      metrics: engines.metrics.metrics,
      logger,
      now,
    }),
  );
  const onPaused = (executionId: string, accountId: string) =>
    executions.approvals.paused(executionId, accountId);
  const agents = closers.started(
    'agents',
    createAgentsModule({
      config,
      db: storage.db,
      models: engines.models,
      text: content.text,
      knowledge: content.knowledge.service,
      usage: pipelinesUsingAgents(storage.db),
      executions: executions.service,
      tools: tools.registry,
      onPaused,
      logger,
      now,
    }),
  );
  const pipelines = closers.started(
    'pipelines',
    await createPipelinesModule({
      storage,
      agents,
      executions: executions.service,
      jobs: executions.jobs,
      onPaused,
      tools: tools.registry,
      logger,
      now,
    }),
  );
  return { tools, executions, agents, pipelines };
}

/** The modules that answer requests over the others: usage, routing, chat, the dialects, voice. */
function servingModules(
  wiring: Wiring,
  engines: Engines,
  built: Awaited<ReturnType<typeof contentModules>> &
    Awaited<ReturnType<typeof runModules>> & { accounts: AccountsModule },
) {
  const { config, closers, storage, redis, overrides, logger, now } = wiring;
  const { models } = engines;
  const { accounts, agents, text } = built;
  const conversations = built.conversations.service;
  const { credentialWatch } = accounts;
  const usage = closers.started(
    'usage',
    createUsageModule({ db: storage.db, dialect: storage.kind, keys: accounts.keyLookup, now }),
  );
  const routing = closers.started(
    'routing',
    createRoutingModule({
      config,
      db: storage.db,
      models,
      agents: agents.service,
      agentCatalog: agents.catalog,
      pipelines: built.pipelines.pipelines,
      conversations,
      text,
      logger,
      now,
      policyClock: overrides.now,
    }),
  );
  const chat = closers.started(
    'chat',
    createChatModule({
      models,
      conversations,
      routing: routing.service,
      credentialWatch,
      config,
      now,
    }),
  );
  const completions = closers.started(
    'completions',
    createCompletionsModule({ turns: chat.turns, models, bodyLimit: chat.bodyLimit }),
  );
  const messages = closers.started(
    'messages',
    createMessagesModule({
      turns: chat.turns,
      models,
      secrets: config.secrets,
      observer: engines.metrics.metrics,
      meter: engines.usage.meter,
      bodyLimit: chat.bodyLimit,
    }),
  );
  const responses = closers.started(
    'responses',
    createResponsesModule({
      db: storage.db,
      turns: chat.turns,
      conversations,
      bodyLimit: chat.bodyLimit,
      now,
    }),
  );
  const voice = closers.started(
    'voice',
    voiceModuleOf(wiring, engines, { accounts, chat: chat.service, conversations }),
  );
  const layout = closers.started('layout', createLayoutModule({ text }));
  const mcp = closers.started(
    'mcp',
    createMcpModule({
      tools: built.tools.registry,
      version: config.version,
      rateLimiter: accounts.rateLimiter,
    }),
  );
  const health = closers.started(
    'health',
    createHealthModule({
      config,
      pingDatabase: (timeoutMs) => storage.ping(timeoutMs),
      redis,
      voiceChatReadiness: () => voice.speech.voiceChatReadiness(),
    }),
  );
  return { usage, routing, chat, completions, messages, responses, voice, layout, health, mcp };
}

/** Speech, voice sessions and the WebSockets, whose turns are chat turns counted like requests. */
function voiceModuleOf(
  wiring: Wiring,
  engines: Engines,
  uses: {
    accounts: AccountsModule;
    chat: ChatModule['service'];
    conversations: ConversationsModule['service'];
  },
): VoiceModule {
  const { config, storage, now } = wiring;
  const { accounts, chat, conversations } = uses;
  return createVoiceModule({
    config,
    db: storage.db,
    models: engines.models,
    audio: engines.speechEngines.pool,
    conversations,
    chat,
    keyStates: accounts.keyStates,
    credentialWatch: accounts.credentialWatch,
    limitTurn: async ({ keyId, tier, accountId, accountTier }) => {
      const decision = await accounts.rateLimiter.consume(keyId, tier, {
        id: accountId,
        tier: accountTier,
      });
      return decision.allowed ? null : rateLimitExceeded(decision, { retryAfterInDetails: true });
    },
    metrics: engines.metrics.metrics,
    now,
  });
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

interface Engines {
  localEngine: NodeLlamaEngine;
  speechEngines: SpeechEngines;
  metrics: MetricsModule;
  models: ModelRegistry;
  /** Every model call's record, written in batches; its meter is the registry's. */
  usage: UsageLedgerModule;
}

/**
 * The local model engine, the speech engines, the metrics, the usage ledger, and the model
 * registry over them (every call it hands out metered by the ledger).
 */
function openEngines({ config, logger, closers, storage, now }: Wiring): Engines {
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
  const metrics = closers.started('metrics', createMetricsModule({ config }));
  const usage = closers.started(
    'usage ledger',
    createUsageLedger({ config: config.usage, storage, logger, now }),
  );
  const models = new ModelRegistry(
    config,
    localEngine,
    logger,
    speechEngines,
    metrics.metrics,
    usage.meter,
  );
  return { localEngine, speechEngines, metrics, models, usage };
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
