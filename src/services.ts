// Wiring of the domain: builds every service from the configuration, and closes them again.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { AccountService } from './accounts/account-service.js';
import { ApiKeyService } from './auth/api-key-service.js';
import { Authenticator } from './auth/authenticator.js';
import { KeyHasher } from './auth/key-hasher.js';
import { LoginThrottle } from './auth/login-throttle.js';
import { RateLimiter } from './auth/rate-limiter.js';
import { SessionService } from './auth/session-service.js';
import type { AgentCatalog } from './modules/agents/agent-catalog.js';
import type { AgentExecutor } from './modules/agents/agent-executor.js';
import type { AgentService } from './modules/agents/agent-service.js';
import { createAgentsModule, type AgentsModule } from './modules/agents/module.js';
import { ChatService } from './chat/chat-service.js';
import {
  ExecutionChangeFeed,
  postgresChangeTransport,
  redisChangeTransport,
  type ChangeTransport,
} from './executions/change-feed.js';
import { ExecutionService } from './executions/execution-service.js';
import { InstanceRegistry } from './executions/instance-registry.js';
import { newId } from './ids.js';
import { MemoryJobQueue, type JobQueue, type RunJob } from './jobs/job-queue.js';
import { PlatformMetrics } from './metrics/metrics.js';
import { PipelineRunner } from './pipelines/pipeline-runner.js';
import { PipelineService } from './pipelines/pipeline-service.js';
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
import { SpeechService } from './speech/speech-service.js';
import { VoiceSessionsRepository } from './storage/repositories/voice-sessions.repository.js';
import { VoiceSessionService } from './voice/voice-session-service.js';
import { CredentialWatch } from './auth/credential-watch.js';
import { createTemplatesModule, type TemplatesModule } from './modules/templates/module.js';
import type { TemplateCatalog } from './modules/templates/template-catalog.js';
import { openStorage, type Storage } from './storage/database.js';
import { PostgresListener } from './storage/dialects/postgres-notifications.js';
import { AccountsRepository } from './storage/repositories/accounts.repository.js';
import { ExecutionsRepository } from './storage/repositories/executions.repository.js';
import { ApiKeysRepository } from './storage/repositories/api-keys.repository.js';
import { PipelinesRepository } from './storage/repositories/pipelines.repository.js';
import { SessionsRepository } from './storage/repositories/sessions.repository.js';
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
    readonly routing: RoutingModule;
    readonly layout: LayoutModule;
    readonly usage: UsageModule;
    readonly health: HealthModule;
    readonly conversations: ConversationsModule;
    readonly templates: TemplatesModule;
    readonly knowledge: KnowledgeModule;
    readonly agents: AgentsModule;
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

/** The background-run queue's depth and outcomes, as Prometheus metrics (`platform_jobs_*`). */
function observeJobs(jobs: JobQueue, metrics: PlatformMetrics): void {
  const queue = 'pipeline-runs';
  // Start times of this instance's running jobs (at most the queue's concurrency).
  const started = new Map<string, number>();
  const ended = (executionId: string, outcome: 'completed' | 'failed' | 'retried') => {
    const since = started.get(executionId);
    started.delete(executionId);
    metrics.jobEnded(queue, outcome, since === undefined ? 0 : (performance.now() - since) / 1000);
  };
  jobs.onEvent((event) => {
    if (event.type === 'started') started.set(event.job.executionId, performance.now());
    else if (event.type === 'completed') ended(event.job.executionId, 'completed');
    else if (event.type === 'failed') ended(event.job.executionId, 'failed');
    // Handed back by a stopping instance: it runs again elsewhere.
    else if (event.type === 'handed-over') ended(event.job.executionId, 'retried');
    jobs.counts().then(
      (counts) => metrics.setJobCounts(queue, counts),
      () => undefined,
    );
  });
}

/**
 * The queue of background runs: BullMQ on Redis when REDIS_URL is set (loaded only then), shared
 * by every instance on that Redis and prefix; else in this process.
 */
async function createJobQueue(
  config: AppConfig,
  redis: Redis | null,
  logger: Logger,
  overrides: ServiceOverrides,
): Promise<JobQueue> {
  const onError = (job: RunJob, error: unknown) =>
    logger.error(
      { err: error, execution_id: job.executionId || undefined },
      'background job failed',
    );
  if (redis === null) {
    return new MemoryJobQueue({ concurrency: config.jobs.concurrency, onError });
  }
  const { BullmqJobQueue } = await import('./jobs/bullmq-job-queue.js');
  return new BullmqJobQueue({
    redis,
    prefix: overrides.jobPrefix ?? redisName(config, 'bull'),
    concurrency: config.jobs.concurrency,
    lockMs: config.jobs.lockMs,
    enqueueWaitMs: config.jobs.enqueueWaitMs,
    onError,
    onHeld: (job) =>
      logger.warn(
        { execution_id: job.executionId },
        'Redis did not take a background run in time: it is recorded, and queued when Redis answers',
      ),
  });
}

/** The PostgreSQL NOTIFY channel and default Redis channel of execution changes. */
const executionChangesChannel = 'platform_execution_changes';

/**
 * How execution changes reach the other instances: Redis pub/sub when REDIS_URL is set (it needs
 * no database connection of its own and works behind transaction-pooling proxies), else
 * PostgreSQL LISTEN/NOTIFY, else nothing: SQLite without Redis is one instance's.
 */
function executionTransport(
  config: AppConfig,
  storage: Storage,
  redis: Redis | null,
  logger: Logger,
  overrides: ServiceOverrides,
): ChangeTransport | null {
  if (redis !== null) {
    return redisChangeTransport(
      redis,
      overrides.executionChannel ?? redisName(config, executionChangesChannel),
      logger,
    );
  }
  if (config.database.kind === 'postgres') {
    return postgresChangeTransport(
      new PostgresListener({
        url: config.database.url,
        db: storage.db,
        channel: executionChangesChannel,
        logger,
      }),
    );
  }
  return null;
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

/** The tier with the largest per-minute limit. */
function mostGenerousTier(config: AppConfig): string {
  const entries = Object.entries(config.rateLimits.tiers);
  return entries.reduce((best, entry) =>
    entry[1].perMinute > best[1].perMinute ? entry : best,
  )[0];
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
    overrides.rateLimitPrefix ?? redisName(config, 'rl'),
    config.rateLimits.accountTiers,
  );
  const sessions = new SessionService({
    sessions: new SessionsRepository(storage.db),
    authenticator,
    idleTimeoutMs: config.sessions.idleTimeoutMs,
    maxAgeMs: config.sessions.maxAgeMs,
    cacheTtlMs: config.auth.keyCacheTtlMs,
    logger,
    now,
  });
  const loginThrottle = new LoginThrottle(
    config.sessions.loginAttemptsPerMinute,
    redis === null ? { kind: 'memory' } : { kind: 'redis', client: redis },
    `${overrides.rateLimitPrefix ?? redisName(config, 'rl')}:login`,
  );
  const apiKeys = new ApiKeyService({
    keys: keysRepository,
    hasher,
    authenticator,
    sessions,
    tiers: config.rateLimits.tiers,
    defaultTier: config.rateLimits.defaultTier,
    // The streams and sockets of a key revoked here end at once (elsewhere within a second).
    onRevoked: () => void credentialWatch.checkNow(),
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
  closers.add('local model engine', () => localEngine.close());
  const speechEngines = SpeechEngines.fromConfig(config);
  closers.add('speech engines', () => speechEngines.close());
  const metrics = new PlatformMetrics();
  const models = new ModelRegistry(config, localEngine, logger, speechEngines, metrics);
  const speech = new SpeechService({
    models,
    pool: speechEngines.pool,
    config: config.speech,
  });
  const templatesModule = createTemplatesModule({ config });
  closers.add('templates', () => templatesModule.close());
  const templates = templatesModule.service;
  const conversationsModule = createConversationsModule({ db: storage.db, models, templates, now });
  closers.add('conversations', () => conversationsModule.close());
  const conversations = conversationsModule.service;
  const feedback = conversationsModule.feedback;
  const chat = new ChatService({ models, conversations, now });
  const voiceSessions = new VoiceSessionService({
    repository: new VoiceSessionsRepository(storage.db),
    models,
    speech,
    conversations,
    limits: config.speech.realtime,
    now,
  });
  const credentialWatch = new CredentialWatch(
    (keyIds) => voiceSessions.keyStates(keyIds),
    config.speech.realtime.credentialCheckMs,
    logger,
  );
  closers.add('credential watch', () => credentialWatch.stop());
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

  const pipelineRepository = new PipelinesRepository(storage.db);
  const instanceId = newId('inst');
  const executionsRepository = new ExecutionsRepository(storage.db);
  const feed = new ExecutionChangeFeed({
    transport: executionTransport(config, storage, redis, logger, overrides),
    origin: instanceId,
    logger,
  });
  closers.add('execution change feed', () => feed.close());
  try {
    await feed.start();
  } catch (error) {
    throw new Error(`Cannot listen for execution changes (${feed.reach})`, { cause: error });
  }
  const executions = new ExecutionService({
    repository: executionsRepository,
    feed,
    conversations,
    instanceId,
    now,
  });
  // Runs of a stopped instance are queued again by the others (requeue is called only once the
  // service runs, after the queue exists). It stops after the queue has handed its running jobs
  // over (closers run last-added first); a heartbeat failing against a database that is going
  // away is no reason to fail a shutdown.
  const instances = new InstanceRegistry({
    id: instanceId,
    repository: executionsRepository,
    executions,
    requeue: (run) => jobs.enqueue(run),
    logger,
    now,
  });
  closers.add('instance registry', () => instances.stop().catch(() => undefined));
  const jobs = await createJobQueue(config, redis, logger, overrides);
  // The pipeline runner's close() is the queue's.
  closers.add('job queue', () => jobs.close());
  observeJobs(jobs, metrics);
  const agentsModule = createAgentsModule({
    config,
    db: storage.db,
    models,
    text,
    knowledge,
    usage: { pipelinesUsing: (agentId) => pipelineRepository.usingAgent(agentId) },
    executions,
    logger,
    now,
  });
  closers.add('agents', () => agentsModule.close());
  const agents = agentsModule.service;
  const agentCatalog = agentsModule.catalog;
  const agentExecutor = agentsModule.executor;
  const pipelines = new PipelineService({ pipelines: pipelineRepository, agents, now });
  const pipelineRunner = new PipelineRunner({
    pipelines,
    executions,
    agents,
    executor: agentExecutor,
    queue: jobs,
    logger,
    now,
  });
  try {
    await pipelineRunner.startWorking();
  } catch (error) {
    throw new Error('Cannot start the job queue', { cause: error });
  }

  const usageModule = createUsageModule({
    db: storage.db,
    dialect: storage.kind,
    keys: keysRepository,
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
      routing: routingModule,
      layout: layoutModule,
      usage: usageModule,
      health: healthModule,
      conversations: conversationsModule,
      templates: templatesModule,
      knowledge: knowledgeModule,
      agents: agentsModule,
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
