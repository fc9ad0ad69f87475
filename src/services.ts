// Wiring of the domain: builds every service from the configuration, and closes them again.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { AccountService } from './accounts/account-service.js';
import { ApiKeyService } from './auth/api-key-service.js';
import { Authenticator } from './auth/authenticator.js';
import { KeyHasher } from './auth/key-hasher.js';
import { RateLimiter } from './auth/rate-limiter.js';
import { AgentCatalog } from './agents/agent-catalog.js';
import { AgentExecutor } from './agents/agent-executor.js';
import { AgentService } from './agents/agent-service.js';
import type { KnowledgeSearcher } from './agents/agent-type.js';
import { generationAgent } from './agents/types/generation-agent.js';
import { reasoningAgent } from './agents/types/reasoning-agent.js';
import { createRetrievalAgent } from './agents/types/retrieval-agent.js';
import { structureAgent } from './agents/types/structure-agent.js';
import { summarizationAgent } from './agents/types/summarization-agent.js';
import { createWebAgent } from './agents/types/web-agent.js';
import { ChatService } from './chat/chat-service.js';
import { InstanceRegistry } from './pipelines/instance-registry.js';
import { PipelineRunner } from './pipelines/pipeline-runner.js';
import { PipelineService } from './pipelines/pipeline-service.js';
import type { AppConfig, LocalModelDefinition } from './config/config.js';
import { ConversationService } from './conversations/conversation-service.js';
import { FeedbackService } from './feedback/feedback-service.js';
import { KnowledgeService } from './knowledge/knowledge-service.js';
import { NodeLlamaEngine } from './models/local/local-engine.js';
import { ModelRegistry } from './models/model-registry.js';
import { TemplateCatalog } from './templates/template-catalog.js';
import { openStorage, type Storage } from './storage/database.js';
import { createKnowledgeIndex } from './storage/dialects/knowledge-dialect.js';
import { AccountsRepository } from './storage/repositories/accounts.repository.js';
import { AgentsRepository } from './storage/repositories/agents.repository.js';
import { ExecutionsRepository } from './storage/repositories/executions.repository.js';
import { ApiKeysRepository } from './storage/repositories/api-keys.repository.js';
import { ConversationsRepository } from './storage/repositories/conversations.repository.js';
import { FeedbackRepository } from './storage/repositories/feedback.repository.js';
import { PipelinesRepository } from './storage/repositories/pipelines.repository.js';
import { KnowledgeRepository } from './storage/repositories/knowledge.repository.js';

export interface Services {
  readonly config: AppConfig;
  readonly storage: Storage;
  readonly redis: Redis | null;
  readonly authenticator: Authenticator;
  readonly rateLimiter: RateLimiter;
  readonly apiKeys: ApiKeyService;
  readonly accounts: AccountService;
  readonly localEngine: NodeLlamaEngine;
  readonly models: ModelRegistry;
  readonly templates: TemplateCatalog;
  readonly conversations: ConversationService;
  readonly chat: ChatService;
  readonly feedback: FeedbackService;
  readonly knowledge: KnowledgeService;
  readonly agentCatalog: AgentCatalog;
  readonly agents: AgentService;
  readonly agentExecutor: AgentExecutor;
  readonly pipelineRepository: PipelinesRepository;
  readonly pipelines: PipelineService;
  readonly pipelineRunner: PipelineRunner;
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

  const localEngine = new NodeLlamaEngine({
    gpu: config.models.localGpu,
    huggingFaceEndpoint: config.models.huggingFaceEndpoint,
    huggingFaceToken: () => config.secrets.get('HF_TOKEN'),
    logger,
  });
  const models = new ModelRegistry(config, localEngine, logger);
  const templates = new TemplateCatalog(config.templates);
  const conversationsRepository = new ConversationsRepository(storage.db);
  const conversations = new ConversationService({
    conversations: conversationsRepository,
    models,
    templates,
    now,
  });
  const chat = new ChatService({ models, conversations, conversationsRepository, now });
  const feedback = new FeedbackService({
    feedback: new FeedbackRepository(storage.db),
    conversations,
    conversationsRepository,
    now,
  });
  const knowledgeIndex = createKnowledgeIndex(storage);
  try {
    await knowledgeIndex.prepare();
  } catch (error) {
    await storage.close();
    redis?.disconnect();
    throw error;
  }
  logger.debug({ vector_search: knowledgeIndex.vectorMethod }, 'knowledge-base vector search');
  const knowledge = new KnowledgeService({
    repository: new KnowledgeRepository(storage.db, knowledgeIndex),
    index: knowledgeIndex,
    models,
    settings: config.knowledge,
    logger,
    now,
  });

  // RetrievalAgent sees knowledge-base search in the shape of its result (`documents`).
  const knowledgeSearcher: KnowledgeSearcher = {
    async search(accountId, knowledgeBaseIds, query, options) {
      const found = await knowledge.search(accountId, knowledgeBaseIds, query, options);
      return {
        results: found.results.map((hit) => ({
          document_id: hit.documentId,
          title: hit.title,
          text: hit.text,
          score: hit.score,
          source: hit.source,
        })),
        mode: found.mode,
        notice: found.notice,
      };
    },
  };
  const agentCatalog = new AgentCatalog([
    createRetrievalAgent(knowledgeSearcher),
    summarizationAgent,
    reasoningAgent,
    generationAgent,
    createWebAgent(config.web, config.secrets),
    structureAgent,
  ]);
  const agents = new AgentService({
    agents: new AgentsRepository(storage.db),
    catalog: agentCatalog,
    models,
    now,
  });
  const instances = new InstanceRegistry({ db: storage.db, logger, now });
  const executions = new ExecutionsRepository(storage.db);
  const agentExecutor = new AgentExecutor({
    agents,
    catalog: agentCatalog,
    models,
    executions,
    instanceId: instances.id,
    logger,
    now,
  });
  const pipelineRepository = new PipelinesRepository(storage.db);
  const pipelines = new PipelineService({ pipelines: pipelineRepository, agents, now });
  const pipelineRunner = new PipelineRunner({
    pipelines,
    repository: pipelineRepository,
    executions,
    agents,
    executor: agentExecutor,
    instanceId: instances.id,
    logger,
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
    localEngine,
    models,
    templates,
    conversations,
    chat,
    feedback,
    knowledge,
    agentCatalog,
    agents,
    agentExecutor,
    pipelineRepository,
    pipelines,
    pipelineRunner,
    instances,
    startBackgroundWork() {
      if (config.models.autoPull) {
        localEngine.startAutoPull(
          config.models.definitions.filter(
            (definition): definition is LocalModelDefinition => definition.provider === 'local',
          ),
        );
      }
    },
    async close() {
      await pipelineRunner.close();
      await instances.stop().catch(() => undefined);
      await localEngine.close();
      if (redis !== null) await redis.quit().catch(() => redis?.disconnect());
      await storage.close();
    },
  };
}
