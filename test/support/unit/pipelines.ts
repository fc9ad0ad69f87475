// What PipelineRunner needs, built over real storage as src/services.ts builds it: the six agent
// types (their knowledge search the real knowledge service's), agents, pipelines, execution records
// with a change feed of this process only, and the in-process job queue. Agents' text work runs on
// the calling thread (the executor's default), so no worker thread starts.
import type { KnowledgeSearcher } from '../../../src/modules/agents/agent-type.js';
import { createToolAgent } from '../../../src/modules/agents/types/tool-agent.js';
import {
  createToolsModule,
  ToolEntrySchema,
  type ToolsModule,
} from '../../../src/modules/tools/module.js';
import { AgentCatalog } from '../../../src/modules/agents/agent-catalog.js';
import { AgentExecutor, AgentRunError } from '../../../src/modules/agents/agent-executor.js';
import { AgentService } from '../../../src/modules/agents/agent-service.js';
import { generationAgent } from '../../../src/modules/agents/types/generation-agent.js';
import { reasoningAgent } from '../../../src/modules/agents/types/reasoning-agent.js';
import { createRetrievalAgent } from '../../../src/modules/agents/types/retrieval-agent.js';
import { createStructureAgent } from '../../../src/modules/agents/types/structure-agent.js';
import { summarizationAgent } from '../../../src/modules/agents/types/summarization-agent.js';
import { createWebAgent } from '../../../src/modules/agents/types/web-agent.js';
import type { ConversationService } from '../../../src/modules/conversations/conversation-service.js';
import { ExecutionChangeFeed } from '../../../src/modules/executions/change-feed.js';
import { ExecutionService } from '../../../src/modules/executions/execution-service.js';
import { newId } from '../../../src/ids.js';
import { MemoryJobQueue, type RunJob } from '../../../src/jobs/job-queue.js';
import { KnowledgeService } from '../../../src/modules/knowledge/knowledge-service.js';
import type { ModelRegistry } from '../../../src/models/model-registry.js';
import { PipelineRunner } from '../../../src/modules/pipelines/pipeline-runner.js';
import { PipelineService } from '../../../src/modules/pipelines/pipeline-service.js';
import { createKnowledgeIndex } from '../../../src/storage/dialects/knowledge-dialect.js';
import { ExecutionsRepository } from '../../../src/modules/executions/executions.repository.js';
import { ExecutionStepsRepository } from '../../../src/modules/executions/execution-steps.repository.js';
import { DocumentStore } from '../../../src/modules/knowledge/document-store.repository.js';
import { KnowledgeRepository } from '../../../src/modules/knowledge/knowledge.repository.js';
import { PipelinesRepository } from '../../../src/modules/pipelines/pipelines.repository.js';
import { AgentsRepository } from '../../../src/modules/agents/agents.repository.js';
import { TextPool } from '../../../src/text-pool/text-pool.js';
import type { TestClock } from './clock.js';
import type { UnitStorage } from './storage.js';

export interface PipelineStack {
  agents: AgentService;
  pipelines: PipelineService;
  executions: ExecutionService;
  runner: PipelineRunner;
  queue: MemoryJobQueue;
  /** Unexpected exceptions of queued runs (the queue's `onError`). */
  jobErrors: unknown[];
  /** Resolves when the queue has finished the job of `executionId` (completed or failed). */
  jobEnded(executionId: string): Promise<RunJob>;
  close(): Promise<void>;
}

export interface PipelineStackOptions {
  unit: UnitStorage;
  models: ModelRegistry;
  conversations: ConversationService;
  clock: TestClock;
}

async function agentCatalog(
  { unit, models, clock }: PipelineStackOptions,
  text: TextPool,
): Promise<{ catalog: AgentCatalog; knowledge: KnowledgeService; tools: ToolsModule }> {
  const index = createKnowledgeIndex(unit.storage);
  await index.prepare();
  const knowledge = new KnowledgeService({
    repository: new KnowledgeRepository(unit.storage.db),
    documents: new DocumentStore(unit.storage.db, index),
    index,
    models,
    text,
    settings: unit.config.knowledge,
    logger: unit.logger,
    now: clock.now,
  });
  const searcher: KnowledgeSearcher = {
    async search(accountId, knowledgeBaseIds, query, options) {
      const found = await knowledge.search(accountId, knowledgeBaseIds, query, options);
      const results = found.results.map(({ documentId, title, text, score, source }) => ({
        document_id: documentId,
        title,
        text,
        score,
        source,
      }));
      return { results, mode: found.mode, notice: found.notice };
    },
  };
  // The service's tool registry; the pipeline units run no ToolAgent (test/http/tool-agent does,
  // with the agents' and pipelines' parts given as the service gives them).
  const tools = createToolsModule({ config: unit.config, text, knowledge, logger: unit.logger });
  const catalog = new AgentCatalog([
    createRetrievalAgent(searcher),
    summarizationAgent,
    reasoningAgent,
    generationAgent,
    createWebAgent(unit.config.web, unit.config.secrets, text),
    createStructureAgent(),
    createToolAgent({
      tools: tools.registry,
      entrySchema: ToolEntrySchema,
      maxCallsPerTurn: unit.config.tools.maxCallsPerTurn,
    }),
  ]);
  return { catalog, knowledge, tools };
}

export async function pipelineStack(options: PipelineStackOptions): Promise<PipelineStack> {
  const { unit, models, conversations, clock } = options;
  const { storage, logger } = unit;
  const text = new TextPool(unit.config.text);
  const { catalog, knowledge, tools } = await agentCatalog(options, text);
  const pipelineRepository = new PipelinesRepository(storage.db);
  const agents = new AgentService({
    agents: new AgentsRepository(storage.db),
    catalog,
    models,
    knowledgeBases: {
      missing: (accountId, ids) => knowledge.missingKnowledgeBases(accountId, ids),
    },
    usage: { pipelinesUsing: (agentId) => pipelineRepository.usingAgent(agentId) },
    now: clock.now,
  });
  const instanceId = newId('inst');
  const feed = new ExecutionChangeFeed({ transport: null, origin: instanceId, logger });
  await feed.start();
  const executions = new ExecutionService({
    repository: new ExecutionsRepository(storage.db),
    steps: new ExecutionStepsRepository(storage.db),
    feed,
    conversations,
    instanceId,
    now: clock.now,
  });
  const jobErrors: unknown[] = [];
  const queue = new MemoryJobQueue({
    concurrency: unit.config.jobs.concurrency,
    onError: (_job, error) => jobErrors.push(error),
  });
  const pipelines = new PipelineService({ pipelines: pipelineRepository, agents, now: clock.now });
  const runner = new PipelineRunner({
    pipelines,
    executions,
    agents,
    executor: new AgentExecutor({ agents, catalog, models, executions, logger, now: clock.now }),
    isRunFailure: (error) => error instanceof AgentRunError,
    queue,
    logger,
    now: clock.now,
  });
  await runner.startWorking();
  return {
    agents,
    pipelines,
    executions,
    runner,
    queue,
    jobErrors,
    jobEnded: (executionId) =>
      new Promise((resolve) => {
        const stop = queue.onEvent((event) => {
          if (event.type !== 'completed' && event.type !== 'failed') return;
          if (event.job.executionId !== executionId) return;
          stop();
          resolve(event.job);
        });
      }),
    async close() {
      await runner.close();
      await feed.close();
      await tools.close();
      await text.close();
    },
  };
}
