// Wiring of the domain: builds every service from the configuration, and closes them again.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AccountService } from './modules/accounts/account-service.js';
import type { ApiKeyService } from './modules/accounts/api-key-service.js';
import type { Authenticator } from './modules/accounts/authenticator.js';
import type { LoginThrottle } from './modules/accounts/login-throttle.js';
import { rateLimitExceeded, type RateLimiter } from './modules/accounts/rate-limiter.js';
import type { SessionService } from './modules/accounts/session-service.js';
import { createAccountsModule, type AccountsModule } from './modules/accounts/module.js';
import type { AgentCatalog } from './modules/agents/agent-catalog.js';
import type { AgentExecutor } from './modules/agents/agent-executor.js';
import type { AgentService } from './modules/agents/agent-service.js';
import { createAgentsModule, type AgentsModule } from './modules/agents/module.js';
import type { ChatService } from './modules/chat/chat-service.js';
import { createChatModule, type ChatModule } from './modules/chat/module.js';
import { createCompletionsModule, type CompletionsModule } from './modules/completions/module.js';
import type { ExecutionService } from './modules/pipelines/executions/execution-service.js';
import type { InstanceRegistry } from './modules/pipelines/executions/instance-registry.js';
import type { JobQueue } from './jobs/job-queue.js';
import type { PlatformMetrics } from './modules/metrics/metrics.js';
import { createMetricsModule, type MetricsModule } from './modules/metrics/module.js';
import { createPipelinesModule, type PipelinesModule } from './modules/pipelines/module.js';
import type { PipelineRunner } from './modules/pipelines/pipeline-runner.js';
import type { PipelineService } from './modules/pipelines/pipeline-service.js';
import type { AppConfig, LocalModelDefinition } from './config/config.js';
import {
  createConversationsModule,
  type ConversationsModule,
} from './modules/conversations/module.js';
import type { ConversationService } from './modules/conversations/conversation-service.js';
import type { FeedbackService } from './modules/conversations/feedback-service.js';
import type { KnowledgeService } from './modules/knowledge/knowledge-service.js';
import { TextPool } from './text-pool/text-pool.js';
import { NodeLlamaEngine } from './models/local/local-engine.js';
import { ModelRegistry } from './models/model-registry.js';
import { SpeechEngines } from './models/speech/speech-engines.js';
import type { SpeechService } from './modules/voice/speech-service.js';
import type { VoiceSessionService } from './modules/voice/voice-session-service.js';
import type { CredentialWatch } from './auth/credential-watch.js';
import { createVoiceModule, type VoiceModule } from './modules/voice/module.js';
import { createTemplatesModule, type TemplatesModule } from './modules/templates/module.js';
import type { TemplateCatalog } from './modules/templates/template-catalog.js';
import { openStorage, type Storage } from './storage/database.js';
import { createRoutingModule, type RoutingModule } from './modules/routing/module.js';
import { createLayoutModule, type LayoutModule } from './modules/layout/module.js';
import { createUsageModule, type UsageModule } from './modules/usage/module.js';
import { createHealthModule, type HealthModule } from './modules/health/module.js';
import type { RoutingService } from './modules/routing/routing-service.js';
import { createKnowledgeModule, type KnowledgeModule } from './modules/knowledge/module.js';
import { Closers } from './lifecycle/closers.js';

/** What routes may use: the domain's services, never a repository or a database handle. */
export interface Services {
  readonly config: AppConfig;
  readonly authenticator: Authenticator;
  readonly rateLimiter: RateLimiter;
  readonly sessions: SessionService;
  readonly loginThrottle: LoginThrottle;
  readonly apiKeys: ApiKeyService;
  readonly accounts: AccountService;
  readonly models: ModelRegistry;
  readonly speech: SpeechService;
  readonly voiceSessions: VoiceSessionService;
  /** Ends WebSockets and event streams whose key was revoked or expired (within a second). */
  readonly credentialWatch: CredentialWatch;
  readonly templates: TemplateCatalog;
  readonly conversations: ConversationService;
  readonly chat: ChatService;
  readonly feedback: FeedbackService;
  readonly knowledge: KnowledgeService;
  /** The text worker threads: layouts, knowledge documents and web pages are parsed there. */
  readonly text: TextPool;
  readonly agentCatalog: AgentCatalog;
  readonly agents: AgentService;
  readonly agentExecutor: AgentExecutor;
  /** Execution records of agent and pipeline runs, and their change feed. */
  readonly executions: ExecutionService;
  readonly pipelines: PipelineService;
  readonly pipelineRunner: PipelineRunner;
  /** The queue of background runs: depth by `counts()`, job outcomes by `onEvent()` (metrics). */
  readonly jobs: JobQueue;
  readonly routing: RoutingService;
  /** The feature modules, whose HTTP plugins app.ts registers. */
  readonly modules: {
    readonly accounts: AccountsModule;
    readonly metrics: MetricsModule;
    readonly routing: RoutingModule;
    readonly layout: LayoutModule;
    readonly usage: UsageModule;
    readonly health: HealthModule;
    readonly conversations: ConversationsModule;
    readonly templates: TemplatesModule;
    readonly knowledge: KnowledgeModule;
    readonly pipelines: PipelinesModule;
    readonly agents: AgentsModule;
    readonly chat: ChatModule;
    readonly completions: CompletionsModule;
    readonly voice: VoiceModule;
  };
  /** Prometheus metrics: HTTP, models, WebSocket sessions, jobs, and Node's own. */
  readonly metrics: PlatformMetrics;
}

/** Everything createServices builds: the services, and what only wiring, tools and tests touch. */
export interface ServiceContainer extends Services {
  readonly storage: Storage;
  readonly redis: Redis | null;
  readonly localEngine: NodeLlamaEngine;
  /** This instance's heartbeat; `start()` before serving, so its runs are not taken for orphans. */
  readonly instances: InstanceRegistry;
  /** Starts background work that must not run in command-line tools (model downloads). */
  startBackgroundWork(): void;
  close(): Promise<void>;
}

export interface ServiceOverrides {
  now?: () => number;
  /** Namespace for rate-limit counters in Redis (tests isolate themselves with it). */
  rateLimitPrefix?: string;
  /** Command-line tools need no shared counters. */
  withoutRedis?: boolean;
  /** Redis channel of the executions' change feed (tests isolate themselves with it). */
  executionChannel?: string;
  /** BullMQ key prefix of the job queue (tests isolate themselves with it). */
  jobPrefix?: string;
}

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

async function wireServices(
  config: AppConfig,
  logger: Logger,
  overrides: ServiceOverrides,
  closers: Closers,
): Promise<ServiceContainer> {
  const storage = await openStorage(config.database);
  closers.add('storage', () => storage.close());
  let redis: Redis | null = null;
  if (config.redisUrl !== null && overrides.withoutRedis !== true) {
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
      redis = client;
    } catch (error) {
      throw new Error(`Cannot connect to Redis at REDIS_URL`, { cause: error });
    }
  }

  const now = overrides.now ?? Date.now;
  const accountsModule = createAccountsModule({
    config,
    db: storage.db,
    isUniqueViolation: (error) => storage.isUniqueViolation(error),
    redis,
    rateLimitPrefix: overrides.rateLimitPrefix ?? redisName(config, 'rl'),
    logger,
    now,
  });
  closers.add('accounts', () => accountsModule.close());
  const {
    authenticator,
    rateLimiter,
    sessions,
    loginThrottle,
    apiKeys,
    accounts,
    credentialWatch,
  } = accountsModule;

  const localEngine = new NodeLlamaEngine({
    gpu: config.models.localGpu,
    huggingFaceEndpoint: config.models.huggingFaceEndpoint,
    huggingFaceToken: () => config.secrets.get('HF_TOKEN'),
    logger,
  });
  closers.add('local model engine', () => localEngine.close());
  const speechEngines = SpeechEngines.fromConfig(config);
  closers.add('speech engines', () => speechEngines.close());
  const metricsModule = createMetricsModule({ config });
  closers.add('metrics', () => metricsModule.close());
  const metrics = metricsModule.metrics;
  const models = new ModelRegistry(config, localEngine, logger, speechEngines, metrics);
  const templatesModule = createTemplatesModule({ config });
  closers.add('templates', () => templatesModule.close());
  const templates = templatesModule.service;
  const conversationsModule = createConversationsModule({ db: storage.db, models, templates, now });
  closers.add('conversations', () => conversationsModule.close());
  const conversations = conversationsModule.service;
  const feedback = conversationsModule.feedback;
  const text = new TextPool(config.text);
  closers.add('text threads', () => text.close());
  const knowledgeModule = await createKnowledgeModule({
    config,
    storage,
    models,
    text,
    logger,
    now,
  });
  closers.add('knowledge', () => knowledgeModule.close());
  const knowledge = knowledgeModule.service;

  // Agents record their runs in the pipelines module's executions: the agents module is made
  // there, once they exist (and before the module's queue takes its first run).
  let agentsModule!: AgentsModule;
  const pipelinesModule = await createPipelinesModule({
    config,
    storage,
    redis,
    redisName: (name) => redisName(config, name),
    executionChannel: overrides.executionChannel,
    jobPrefix: overrides.jobPrefix,
    conversations,
    agents: (executions) => {
      agentsModule = createAgentsModule({
        config,
        db: storage.db,
        models,
        text,
        knowledge,
        // Called only once the service runs, after the pipelines module exists.
        usage: { pipelinesUsing: (agentId) => pipelinesModule.pipelines.usingAgent(agentId) },
        executions,
        logger,
        now,
      });
      closers.add('agents', () => agentsModule.close());
      return {
        service: agentsModule.service,
        executor: agentsModule.executor,
        isRunFailure: agentsModule.isRunFailure,
      };
    },
    credentialWatch,
    metrics,
    logger,
    now,
  });
  closers.add('pipelines', () => pipelinesModule.close());
  const { pipelines, executions, instances, jobs } = pipelinesModule;
  const pipelineRunner = pipelinesModule.runner;
  const agents = agentsModule.service;
  const agentCatalog = agentsModule.catalog;
  const agentExecutor = agentsModule.executor;

  const usageModule = createUsageModule({
    db: storage.db,
    dialect: storage.kind,
    keys: accountsModule.keyLookup,
    now,
  });
  closers.add('usage', () => usageModule.close());

  const routingModule = createRoutingModule({
    config,
    db: storage.db,
    models,
    agents,
    agentCatalog,
    pipelines,
    conversations,
    text,
    logger,
    now,
    policyClock: overrides.now,
  });
  closers.add('routing', () => routingModule.close());
  const routing = routingModule.service;

  const chatModule = createChatModule({ models, conversations, routing, credentialWatch, now });
  closers.add('chat', () => chatModule.close());
  const chat = chatModule.service;
  const completionsModule = createCompletionsModule({ chat, models, routing, credentialWatch });
  closers.add('completions', () => completionsModule.close());

  const voiceModule = createVoiceModule({
    config,
    db: storage.db,
    models,
    audio: speechEngines.pool,
    conversations,
    chat,
    keyStates: accountsModule.keyStates,
    credentialWatch,
    limitTurn: async ({ keyId, tier, accountId, accountTier }) => {
      const decision = await rateLimiter.consume(keyId, tier, { id: accountId, tier: accountTier });
      return decision.allowed ? null : rateLimitExceeded(decision, { retryAfterInDetails: true });
    },
    metrics,
    now,
  });
  closers.add('voice', () => voiceModule.close());
  const { speech, voiceSessions } = voiceModule;

  const layoutModule = createLayoutModule({ text });
  closers.add('layout', () => layoutModule.close());

  const healthModule = createHealthModule({
    config,
    pingDatabase: (timeoutMs) => storage.ping(timeoutMs),
    redis,
    voiceChatReadiness: () => speech.voiceChatReadiness(),
  });
  closers.add('health', () => healthModule.close());

  return {
    config,
    storage,
    redis,
    authenticator,
    rateLimiter,
    sessions,
    loginThrottle,
    apiKeys,
    accounts,
    localEngine,
    models,
    speech,
    voiceSessions,
    credentialWatch,
    templates,
    conversations,
    chat,
    feedback,
    knowledge,
    text,
    agentCatalog,
    agents,
    agentExecutor,
    executions,
    pipelines,
    pipelineRunner,
    jobs,
    routing,
    modules: {
      accounts: accountsModule,
      metrics: metricsModule,
      routing: routingModule,
      layout: layoutModule,
      usage: usageModule,
      health: healthModule,
      conversations: conversationsModule,
      templates: templatesModule,
      knowledge: knowledgeModule,
      pipelines: pipelinesModule,
      agents: agentsModule,
      chat: chatModule,
      completions: completionsModule,
      voice: voiceModule,
    },
    metrics,
    instances,
    startBackgroundWork() {
      // eSpeak NG loads in each audio thread ahead of the first synthesis, when so configured.
      if (
        config.speech.preload &&
        config.models.definitions.some(
          (definition) => definition.provider === 'espeak-ng' && definition.type === 'speech',
        )
      ) {
        speechEngines.pool
          .warmUp()
          .catch((error: unknown) => logger.warn({ err: error }, 'audio workers failed to start'));
      }
      if (config.models.autoPull) {
        localEngine.startAutoPull(
          config.models.definitions.filter(
            (definition): definition is LocalModelDefinition => definition.provider === 'local',
          ),
        );
      }
    },
    close: () => closers.closeAll(),
  };
}
