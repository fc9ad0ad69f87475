// The agents module, wired: the agent types in their catalog (the spec's six and ToolAgent, whose
// tools are the tool registry's), the agents' storage and service, the executor that runs them,
// the agents' part of the tool registry, and the HTTP plugin for app.ts to register.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config.js';
import type { ExecutionService } from '../executions/execution-service.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { TextPool } from '../../text-pool/text-pool.js';
import type { KnowledgeService } from '../knowledge/knowledge-service.js';
import { AgentCatalog } from './agent-catalog.js';
import { AgentExecutor, AgentRunError } from './agent-executor.js';
import { AgentService, type AgentUsage } from './agent-service.js';
import type { KnowledgeSearcher } from './agent-type.js';
import { AgentsRepository } from './agents.repository.js';
import { agentsPlugin, type AgentsPlugin } from './agents.routes.js';
import { generationAgent } from './types/generation-agent.js';
import { reasoningAgent } from './types/reasoning-agent.js';
import { createRetrievalAgent } from './types/retrieval-agent.js';
import { createStructureAgent } from './types/structure-agent.js';
import { summarizationAgent } from './types/summarization-agent.js';
import { createWebAgent } from './types/web-agent.js';
import { createToolAgent } from './types/tool-agent.js';
import { agentsAsTools, webTools } from './agent-tools.js';
import { ToolEntrySchema } from '../tools/module.js';
import type { ToolRegistry } from '../tools/tool-registry.js';

export interface AgentsModuleDependencies {
  readonly config: AppConfig;
  readonly db: Kysely<DatabaseSchema>;
  readonly models: ModelRegistry;
  /** The text threads: web pages, large tables and agents' text work run there. */
  readonly text: TextPool;
  /** RetrievalAgent's search, and the knowledge bases an agent's configuration may name. */
  readonly knowledge: Pick<KnowledgeService, 'search' | 'missingKnowledgeBases'>;
  /** The pipelines whose stages run an agent (a delete while some do is a 409). */
  readonly usage: AgentUsage;
  /** Where every execution is recorded (the executions module's). */
  readonly executions: ExecutionService;
  /**
   * The ToolAgent's tools (the tools module's registry). The module gives it the account's agents
   * as tools, and the WebAgent's search and page reading, once its executor exists.
   */
  readonly tools: Pick<ToolRegistry, 'prepare' | 'shown' | 'open' | 'arguments' | 'provide'>;
  /** Told when an agent execution pauses for approval. */
  readonly onPaused?: ((executionId: string, accountId: string) => void) | undefined;
  readonly logger: Logger;
  readonly now: () => number;
}

export interface AgentsModule {
  readonly service: AgentService;
  readonly catalog: AgentCatalog;
  /** Runs agents: their execution, and pipelines' stages. */
  readonly executor: AgentExecutor;
  readonly plugin: AgentsPlugin;
  /** Whether a run's error is an agent's own failure (recorded on the run) rather than a fault. */
  readonly isRunFailure: (error: unknown) => error is AgentRunError;
}

/** RetrievalAgent sees knowledge-base search in the shape of its result (`documents`). */
function knowledgeSearcher(knowledge: AgentsModuleDependencies['knowledge']): KnowledgeSearcher {
  return {
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
}

export function createAgentsModule(dependencies: AgentsModuleDependencies): AgentsModule {
  const { config, db, models, text, knowledge, tools, logger, now } = dependencies;
  const webAgent = createWebAgent(config.web, config.secrets, text);
  const catalog = new AgentCatalog([
    createRetrievalAgent(knowledgeSearcher(knowledge)),
    summarizationAgent,
    reasoningAgent,
    generationAgent,
    webAgent,
    createStructureAgent((task, size, signal) => text.structure(task, size, signal)),
    createToolAgent({
      tools,
      entrySchema: ToolEntrySchema,
      maxCallsPerTurn: config.tools.maxCallsPerTurn,
    }),
  ]);
  const service = new AgentService({
    agents: new AgentsRepository(db),
    catalog,
    models,
    knowledgeBases: {
      missing: (accountId, ids) => knowledge.missingKnowledgeBases(accountId, ids),
    },
    usage: dependencies.usage,
    now,
  });
  const executor = new AgentExecutor({
    agents: service,
    catalog,
    models,
    executions: dependencies.executions,
    logger,
    now,
    text: text.agentTextWork,
    approvalTimeoutMs: config.tools.approvalTimeoutMs,
    ...(dependencies.onPaused === undefined ? {} : { onPaused: dependencies.onPaused }),
  });
  // The registry offers the account's agents as tools (a ToolAgent's `agent` entries, /mcp's
  // exposed agents) and the WebAgent's parts as web_search and read_page, from now on.
  tools.provide({
    agents: agentsAsTools({ service, executor, catalog }),
    web: webTools(webAgent),
  });
  return {
    service,
    catalog,
    executor,
    plugin: agentsPlugin({ agents: service, catalog, executor }),
    // Agents hold no connection, thread or timer of their own (nothing to close): the database,
    // the text threads and the execution feed they use are closed by their owners.
    isRunFailure: (error): error is AgentRunError => error instanceof AgentRunError,
  };
}
