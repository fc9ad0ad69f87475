// Wiring of the feature modules, in the order they are built: each over the ones it uses. What a
// module starts (a timer, a pool, a queue, a feed) is put on the closer stack as it starts, so it
// is closed again last-started-first, also when a later step fails; a module that starts nothing
// has nothing to close and is not put there.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AppConfig } from './config/config.js';
import type { Closers } from './lifecycle/closers.js';
import type { NodeLlamaEngine } from './models/local/local-engine.js';
import type { ModelRegistry } from './models/model-registry.js';
import type { SpeechEngines } from './models/speech/speech-engines.js';
import type { AccountsModule } from './modules/accounts/module.js';
import type { BudgetsModule } from './modules/budgets/module.js';
import { rateLimitExceeded } from './modules/accounts/rate-limiter.js';
import { createAgentsModule } from './modules/agents/module.js';
import { createChatModule, type ChatModule } from './modules/chat/module.js';
import { createCompletionsModule } from './modules/completions/module.js';
import {
  createConversationsModule,
  type ConversationsModule,
} from './modules/conversations/module.js';
import { createExecutionsModule } from './modules/executions/module.js';
import { createHealthModule } from './modules/health/module.js';
import { createKnowledgeModule } from './modules/knowledge/module.js';
import { createLayoutModule } from './modules/layout/module.js';
import { createMcpModule } from './modules/mcp/module.js';
import { createMessagesModule } from './modules/messages/module.js';
import type { MetricsModule } from './modules/metrics/module.js';
import { createPipelinesModule, pipelinesUsingAgents } from './modules/pipelines/module.js';
import { createResponsesModule } from './modules/responses/module.js';
import { createRoutingModule, type RoutingModule } from './modules/routing/module.js';
import { createTemplatesModule } from './modules/templates/module.js';
import { createToolsModule } from './modules/tools/module.js';
import { createUsageModule, type UsageLedgerModule } from './modules/usage/module.js';
import { createVoiceModule, type VoiceModule } from './modules/voice/module.js';
import type { ServiceOverrides } from './service-container.js';
import type { Storage } from './storage/database.js';
import { TextPool } from './text-pool/text-pool.js';

/** What every step of the wiring reads: the configuration, the stores, the clock, the closers. */
export interface Wiring {
  readonly config: AppConfig;
  readonly logger: Logger;
  readonly overrides: ServiceOverrides;
  readonly closers: Closers;
  readonly storage: Storage;
  readonly redis: Redis | null;
  readonly now: () => number;
}

/** The engines the modules run models on, and the metrics and usage ledger they record into. */
export interface Engines {
  localEngine: NodeLlamaEngine;
  speechEngines: SpeechEngines;
  metrics: MetricsModule;
  /** The budgets every metered call reserves on, and their routes. */
  budgets: BudgetsModule;
  models: ModelRegistry;
  /** Every model call's record, written in batches; its meter is the registry's. */
  usage: UsageLedgerModule;
}

/** A Redis key or channel name under the configured prefix (none: the name as it always was). */
export function redisName(config: AppConfig, name: string): string {
  return config.redisKeyPrefix === '' ? name : `${config.redisKeyPrefix}:${name}`;
}

export type ContentModules = Awaited<ReturnType<typeof contentModules>>;
export type RunModules = Awaited<ReturnType<typeof runModules>>;
type Built = ContentModules & RunModules & { accounts: AccountsModule };

/** Prompt templates, conversations, the text threads and knowledge bases. */
export async function contentModules(wiring: Wiring, models: ModelRegistry) {
  const { config, closers, storage, logger, now } = wiring;
  const templates = createTemplatesModule({ config });
  const conversations = createConversationsModule({
    db: storage.db,
    models,
    templates: templates.service,
    now,
  });
  const text = closers.started('text threads', new TextPool(config.text));
  const knowledge = await createKnowledgeModule({ config, storage, models, text, logger, now });
  return { templates, conversations, text, knowledge };
}

/**
 * The tool registry and the execution records first, then the agents that record their runs there,
 * then the pipelines whose stages run agents: each built over the ones before it, given what it
 * needs. The agents and pipelines modules give the registry their parts (themselves, as tools).
 */
export async function runModules(
  wiring: Wiring,
  engines: Engines,
  content: ContentModules,
  accounts: AccountsModule,
) {
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
  const agents = createAgentsModule({
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
  });
  const pipelines = await createPipelinesModule({
    storage,
    agents,
    executions: executions.service,
    jobs: executions.jobs,
    onPaused,
    tools: tools.registry,
    logger,
    now,
  });
  return { tools, executions, agents, pipelines };
}

/** The modules that answer requests over the others: usage, routing, chat, the dialects, voice. */
export function servingModules(wiring: Wiring, engines: Engines, built: Built) {
  const { config, storage, redis, overrides, logger, now } = wiring;
  const { accounts, agents, text } = built;
  const usage = createUsageModule({
    db: storage.db,
    dialect: storage.kind,
    keys: accounts.keyLookup,
    flushLedger: () => engines.usage.ledger.flush(),
    now,
  });
  const routing = createRoutingModule({
    config,
    db: storage.db,
    models: engines.models,
    agents: agents.service,
    agentCatalog: agents.catalog,
    pipelines: built.pipelines.pipelines,
    conversations: built.conversations.service,
    text,
    logger,
    now,
    policyClock: overrides.now,
  });
  const dialects = dialectModules(wiring, engines, built, routing.service);
  const voice = voiceModuleOf(wiring, engines, {
    accounts,
    chat: dialects.chat.service,
    conversations: built.conversations.service,
  });
  const layout = createLayoutModule({ text });
  const mcp = createMcpModule({
    tools: built.tools.registry,
    version: config.version,
    rateLimiter: accounts.rateLimiter,
  });
  const health = createHealthModule({
    config,
    pingDatabase: (timeoutMs) => storage.ping(timeoutMs),
    redis,
    voiceChatReadiness: () => voice.speech.voiceChatReadiness(),
  });
  return { usage, routing, ...dialects, voice, layout, health, mcp };
}

/** Chat, and the dialects over its turn handler: OpenAI's, Anthropic's and the Responses API. */
function dialectModules(
  wiring: Wiring,
  engines: Engines,
  built: Built,
  routing: RoutingModule['service'],
) {
  const { config, storage, now } = wiring;
  const { models } = engines;
  const conversations = built.conversations.service;
  const chat = createChatModule({
    models,
    conversations,
    routing,
    credentialWatch: built.accounts.credentialWatch,
    config,
    now,
  });
  const completions = createCompletionsModule({
    turns: chat.turns,
    models,
    bodyLimit: chat.bodyLimit,
  });
  const messages = createMessagesModule({
    turns: chat.turns,
    models,
    secrets: config.secrets,
    observer: engines.metrics.metrics,
    meter: engines.usage.meter,
    bodyLimit: chat.bodyLimit,
  });
  const responses = createResponsesModule({
    db: storage.db,
    turns: chat.turns,
    conversations,
    bodyLimit: chat.bodyLimit,
    now,
  });
  return { chat, completions, messages, responses };
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
