// The agents module, wired: the agent types in their catalog (the spec's six and ToolAgent), the agents' storage and service,
// the executor that runs them, and the HTTP plugin for app.ts to register.
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
import { agentToolOpener } from './tools/agent-tools.js';
import { toolChecks } from './tools/tool-checks.js';
import { externalTools } from './tools/external-tools.js';
import {
  McpToolSourceSchema,
  OpenApiToolSourceSchema,
  RequiresApprovalSchema,
  IdempotentSchema,
  ToolEntryNameSchema,
  type ToolSources,
} from '../tools/module.js';
import { builtinToolEntrySchemas } from './tools/tool-entries.js';
import Type from 'typebox';
import type { BuiltinDependencies } from './tools/builtin-tools.js';
import { AppError, NotFoundError } from '../../errors/app-error.js';
import { requireSchema } from '../../validation/schema-validator.js';

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
  /** Where every execution is recorded. */
  readonly executions: ExecutionService;
  /** Pipelines a ToolAgent may run as tools (bound once the pipelines module exists). */
  readonly pipelines: PipelineTools;
  /** Tools of MCP servers and OpenAPI documents (the tools module's; closed by its owner). */
  readonly toolSources: ToolSources;
  /** Told when an agent execution pauses for approval. */
  readonly onPaused?: ((executionId: string, accountId: string) => void) | undefined;
  readonly logger: Logger;
  readonly now: () => number;
}

/** What a ToolAgent's `pipeline` tools need of the pipelines module. */
export interface PipelineTools {
  exists(accountId: string, id: string): Promise<boolean>;
  /** Runs the pipeline to its end: its output, or an AppError with the run's failure. */
  run(
    accountId: string,
    id: string,
    inputs: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>;
}

export interface AgentsModule {
  readonly service: AgentService;
  readonly catalog: AgentCatalog;
  /** Runs agents: their execution, and pipelines' stages. */
  readonly executor: AgentExecutor;
  readonly plugin: AgentsPlugin;
  /** Whether a run's error is an agent's own failure (recorded on the run) rather than a fault. */
  readonly isRunFailure: (error: unknown) => error is AgentRunError;
  close(): Promise<void>;
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
  const { config, db, models, text, knowledge, logger, now } = dependencies;
  const webAgent = createWebAgent(config.web, config.secrets, text);
  const external = externalTools(dependencies.toolSources);
  // The built-ins reach the executor and service, made below (called only at run time).
  const late = {} as { executor: AgentExecutor; service: AgentService };
  const builtins: BuiltinDependencies = {
    knowledge: knowledgeSearcher(knowledge),
    async web(configuration, input, signal) {
      const settings = requireSchema<Record<string, unknown>>(
        webAgent.configurationSchema,
        configuration,
        'web tool configuration',
        'configuration',
      );
      const context = { signal } as Parameters<typeof webAgent.run>[0];
      return webAgent.run(context, settings as never, input, {});
    },
    async agent(owner, agentId, query, options) {
      let agent;
      try {
        agent = await late.service.get(owner.accountId, agentId);
      } catch (error) {
        if (error instanceof NotFoundError) {
          throw new AppError('not_found', `The agent '${agentId}' no longer exists.`);
        }
        throw error;
      }
      const { parameters } = await late.executor.prepare(agent, { query });
      try {
        const run = await late.executor.run(agent, { query }, parameters, {
          callerAccountId: owner.accountId,
          signal: options.signal,
          depth: options.depth,
        });
        return run.result;
      } catch (error) {
        if (error instanceof AgentRunError) {
          if (error.aborted) throw error;
          throw new AppError(error.error.code, error.error.message);
        }
        throw error;
      }
    },
    pipeline: (accountId, id, inputs, signal) =>
      dependencies.pipelines.run(accountId, id, inputs, signal),
  };
  const catalog = new AgentCatalog([
    createRetrievalAgent(knowledgeSearcher(knowledge)),
    summarizationAgent,
    reasoningAgent,
    generationAgent,
    webAgent,
    createStructureAgent((task, size, signal) => text.structure(task, size, signal)),
    createToolAgent(
      agentToolOpener(builtins, external),
      toolChecks(
        {
          missingKnowledgeBases: (accountId, ids) =>
            knowledge.missingKnowledgeBases(accountId, ids),
          agentExists: async (accountId, id) =>
            (await late.service.get(accountId, id).catch(() => null))?.accountId === accountId,
          pipelineExists: (accountId, id) => dependencies.pipelines.exists(accountId, id),
        },
        external,
      ),
      // One entry of a ToolAgent's `tools`: an outside source, or a built-in.
      Type.Union([
        McpToolSourceSchema,
        OpenApiToolSourceSchema,
        ...builtinToolEntrySchemas(ToolEntryNameSchema, RequiresApprovalSchema, IdempotentSchema),
      ]),
      {
        maxCallsPerTurn: config.tools.maxCallsPerTurn,
        maxArgumentBytes: config.tools.maxArgumentBytes,
      },
    ),
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
  late.service = service;
  late.executor = executor;
  return {
    service,
    catalog,
    executor,
    plugin: agentsPlugin({ agents: service, catalog, executor }),
    isRunFailure: (error): error is AgentRunError => error instanceof AgentRunError,
    // Agents hold no connection, thread or timer of their own: the database, the text threads
    // and the execution feed they use are closed by their owners.
    close: () => Promise.resolve(),
  };
}
