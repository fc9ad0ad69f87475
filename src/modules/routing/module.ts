// The routing module, wired: its storage, router cache, intent classifier and service built from
// what the rest of the service lends it, and its HTTP plugin for app.ts to register.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AgentCatalog } from '../agents/agent-catalog.js';
import type { AgentService } from '../agents/agent-service.js';
import type { AppConfig } from '../../config/config.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { PipelineService } from '../pipelines/pipeline-service.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import { IntentClassifier } from './intent-classifier.js';
import { RouterCache } from './router-cache.js';
import { RoutingService } from './routing-service.js';
import { RoutingRepository } from './routing.repository.js';
import { routingPlugin, type RoutingPlugin } from './routing.routes.js';

export interface RoutingModuleDependencies {
  readonly config: AppConfig;
  readonly db: Kysely<DatabaseSchema>;
  readonly models: ModelRegistry;
  readonly agents: AgentService;
  readonly agentCatalog: AgentCatalog;
  readonly pipelines: PipelineService;
  readonly conversations: ConversationService;
  /** The text threads: names in a message are tagged there, off the event loop. */
  readonly text: Pick<TextPool, 'entities'>;
  readonly logger: Logger;
  readonly now: () => number;
  /** The clock cached policies' freshness is judged by (default: performance.now). */
  readonly policyClock?: (() => number) | undefined;
}

export interface RoutingModule {
  readonly service: RoutingService;
  readonly plugin: RoutingPlugin;
}

export function createRoutingModule(dependencies: RoutingModuleDependencies): RoutingModule {
  const { config, db, models, text, logger, now, policyClock } = dependencies;
  const repository = new RoutingRepository(db);
  const service = new RoutingService({
    config,
    repository,
    cache: new RouterCache({
      repository,
      maxBytes: config.routing.cacheMaxBytes,
      logger,
      ...(policyClock === undefined ? {} : { now: policyClock }),
    }),
    classifier: new IntentClassifier(models),
    namedEntities: (message, at, signal) => text.entities(message, at, signal),
    models,
    agents: dependencies.agents,
    agentCatalog: dependencies.agentCatalog,
    pipelines: dependencies.pipelines,
    conversations: dependencies.conversations,
    logger,
    now,
  });
  // Routing holds no connection, thread or timer of its own: its cache is memory alone.
  return {
    service,
    plugin: routingPlugin(service),
  };
}
