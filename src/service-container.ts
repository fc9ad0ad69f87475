// What the wiring hands the HTTP layer and the tools: the services routes may use, read off the
// feature modules, the modules' plugins in the order app.ts registers them, and what only the
// wiring, tools and tests touch.
import type { Redis } from 'ioredis';
import type { AccountService } from './modules/accounts/account-service.js';
import type { ApiKeyService } from './modules/accounts/api-key-service.js';
import type { Authenticator } from './modules/accounts/authenticator.js';
import type { LoginThrottle } from './modules/accounts/login-throttle.js';
import type { RateLimiter } from './modules/accounts/rate-limiter.js';
import type { SessionService } from './modules/accounts/session-service.js';
import type { AccountsModule } from './modules/accounts/module.js';
import type { AgentCatalog } from './modules/agents/agent-catalog.js';
import type { AgentExecutor } from './modules/agents/agent-executor.js';
import type { AgentService } from './modules/agents/agent-service.js';
import type { AgentsModule } from './modules/agents/module.js';
import type { ChatService } from './modules/chat/chat-service.js';
import type { ChatModule } from './modules/chat/module.js';
import type { CompletionsModule } from './modules/completions/module.js';
import type { MessagesModule } from './modules/messages/module.js';
import type { ResponsesModule } from './modules/responses/module.js';
import type { ExecutionService } from './modules/executions/execution-service.js';
import type { InstanceRegistry } from './modules/executions/instance-registry.js';
import type { JobQueue } from './jobs/job-queue.js';
import type { PlatformMetrics } from './modules/metrics/metrics.js';
import type { MetricsModule } from './modules/metrics/module.js';
import type { PipelinesModule } from './modules/pipelines/module.js';
import type { ExecutionsModule } from './modules/executions/module.js';
import type { PipelineRunner } from './modules/pipelines/pipeline-runner.js';
import type { PipelineService } from './modules/pipelines/pipeline-service.js';
import type { AppConfig } from './config/config.js';
import type { ConversationsModule } from './modules/conversations/module.js';
import type { ConversationService } from './modules/conversations/conversation-service.js';
import type { FeedbackService } from './modules/conversations/feedback-service.js';
import type { KnowledgeService } from './modules/knowledge/knowledge-service.js';
import type { TextPool } from './text-pool/text-pool.js';
import type { NodeLlamaEngine } from './models/local/local-engine.js';
import type { ModelRegistry } from './models/model-registry.js';
import type { SpeechService } from './modules/voice/speech-service.js';
import type { VoiceSessionService } from './modules/voice/voice-session-service.js';
import type { CredentialWatch } from './auth/credential-watch.js';
import type { FeaturePlugin } from './http/feature-plugin.js';
import type { VoiceModule } from './modules/voice/module.js';
import type { TemplatesModule } from './modules/templates/module.js';
import type { TemplateCatalog } from './modules/templates/template-catalog.js';
import type { Storage } from './storage/database.js';
import type { RoutingModule } from './modules/routing/module.js';
import type { LayoutModule } from './modules/layout/module.js';
import type { UsageLedgerModule, UsageModule } from './modules/usage/module.js';
import type { BudgetsModule } from './modules/budgets/module.js';
import type { AuditLog, AuditModule } from './modules/audit/module.js';
import type { HealthModule } from './modules/health/module.js';
import type { RoutingService } from './modules/routing/routing-service.js';
import type { KnowledgeModule } from './modules/knowledge/module.js';
import type { McpModule } from './modules/mcp/module.js';

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
  /** The audit log: administrative changes, hash-chained per account (docs/audit.md). */
  readonly audit: AuditLog;
  /** The feature modules, whose HTTP plugins app.ts registers (`httpPlugins`). */
  readonly modules: {
    readonly accounts: AccountsModule;
    readonly metrics: MetricsModule;
    readonly routing: RoutingModule;
    readonly layout: LayoutModule;
    readonly usage: UsageModule;
    readonly budgets: BudgetsModule;
    readonly audit: AuditModule;
    readonly health: HealthModule;
    readonly conversations: ConversationsModule;
    readonly templates: TemplatesModule;
    readonly knowledge: KnowledgeModule;
    readonly executions: ExecutionsModule;
    readonly pipelines: PipelinesModule;
    readonly agents: AgentsModule;
    readonly chat: ChatModule;
    readonly completions: CompletionsModule;
    readonly messages: MessagesModule;
    readonly responses: ResponsesModule;
    readonly voice: VoiceModule;
    /** The platform as an MCP server (POST /mcp). */
    readonly mcp: McpModule;
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
  /** The usage ledger: every model call's record (flush() writes what is buffered). */
  readonly usageLedger: UsageLedgerModule;
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
  /**
   * What a model of several deployments draws its choice with (default Math.random); `() => 0`
   * tries them in the order listed, for tests that must know which one is called first.
   */
  deploymentRandom?: () => number;
}

/** What routes may use, read off the modules. */
export function servicesOf(
  config: AppConfig,
  modules: Services['modules'],
  shared: { models: ModelRegistry; text: TextPool },
): Services {
  const { accounts, conversations, pipelines, agents, voice } = modules;
  return {
    config,
    authenticator: accounts.authenticator,
    rateLimiter: accounts.rateLimiter,
    sessions: accounts.sessions,
    loginThrottle: accounts.loginThrottle,
    apiKeys: accounts.apiKeys,
    accounts: accounts.accounts,
    models: shared.models,
    speech: voice.speech,
    voiceSessions: voice.voiceSessions,
    credentialWatch: accounts.credentialWatch,
    templates: modules.templates.service,
    conversations: conversations.service,
    chat: modules.chat.service,
    feedback: conversations.feedback,
    knowledge: modules.knowledge.service,
    text: shared.text,
    agentCatalog: agents.catalog,
    agents: agents.service,
    agentExecutor: agents.executor,
    executions: modules.executions.service,
    pipelines: pipelines.pipelines,
    pipelineRunner: pipelines.runner,
    jobs: modules.executions.jobs,
    routing: modules.routing.service,
    audit: modules.audit.log,
    modules,
    metrics: modules.metrics.metrics,
  };
}

/**
 * The HTTP application's parts, in the order app.ts registers them, which is the order the OpenAPI
 * document lists their routes: each module's plugin (a module whose routes lie in two places of
 * the document gives one for each), and the dashboard's before the voice module's.
 */
export function httpPlugins(
  modules: Services['modules'],
  dashboard: FeaturePlugin,
): readonly FeaturePlugin[] {
  return [
    modules.health.plugin,
    modules.metrics.plugin,
    modules.health.featuresPlugin,
    modules.accounts.plugin,
    modules.chat.modelsPlugin,
    modules.templates.plugin,
    modules.chat.plugin,
    modules.completions.plugin,
    modules.messages.plugin,
    modules.completions.embeddingsPlugin,
    modules.responses.plugin,
    modules.conversations.plugin,
    modules.knowledge.plugin,
    modules.agents.plugin,
    modules.pipelines.plugin,
    modules.routing.plugin,
    modules.layout.plugin,
    modules.executions.plugin,
    modules.accounts.authPlugin,
    modules.usage.plugin,
    modules.budgets.plugin,
    modules.audit.plugin,
    modules.mcp.plugin,
    dashboard,
    modules.voice.plugin,
  ];
}
