// The pipelines module, wired: pipelines and their runner over the agents (whose runs their stages
// are) and the execution records, the account's pipelines as tools (given to the tool registry),
// and the HTTP plugin of the pipelines' routes for app.ts. The runner takes the queued runs of the
// executions module's queue, agent runs continued after a person's decision included.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AgentExecutor, AgentRunError } from '../agents/agent-executor.js';
import type { AgentService, AgentUsage } from '../agents/agent-service.js';
import type { FeaturePlugin } from '../../http/feature-plugin.js';
import type { JobQueue } from '../../jobs/job-queue.js';
import type { Storage } from '../../storage/database.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { ExecutionService } from '../executions/execution-service.js';
import type { ToolRegistry } from '../tools/tool-registry.js';
import { pipelinesAsTools } from './pipeline-tools.js';
import { PipelineRunner } from './pipeline-runner.js';
import { PipelineService } from './pipeline-service.js';
import { PipelinesRepository } from './pipelines.repository.js';
import { pipelinesPlugin } from './pipelines.routes.js';

/** What stages run: the agents module's objects. */
export interface PipelineAgents {
  /** Stages name agents: checked when a pipeline is saved, read again when a stage runs. */
  readonly service: AgentService;
  /** Runs a stage's agent through the same code path as an agent execution. */
  readonly executor: AgentExecutor;
  /** A failed run of an agent (its error and its cost), as opposed to a fault of the service. */
  isRunFailure(error: unknown): error is AgentRunError;
}

export interface PipelinesModuleDependencies {
  readonly storage: Pick<Storage, 'db'>;
  /** The agents stages run (the agents module's). */
  readonly agents: PipelineAgents;
  /** Where runs are recorded (the executions module's). */
  readonly executions: ExecutionService;
  /** The queue of background runs (the executions module's), whose runs the runner takes. */
  readonly jobs: JobQueue;
  /** Told when a run pauses for a person's approval (the approvals watch its deadline). */
  readonly onPaused: (executionId: string, accountId: string) => void;
  /** The tool registry, given the account's pipelines as tools once the runner exists. */
  readonly tools: Pick<ToolRegistry, 'provide'>;
  readonly logger: Logger;
  readonly now: () => number;
}

export interface PipelinesModule {
  readonly pipelines: PipelineService;
  readonly runner: PipelineRunner;
  /** The pipelines' routes, with their executions list and execute. */
  readonly plugin: FeaturePlugin;
}

/**
 * The pipelines whose stages run an agent, read from their table: an agent's delete asks it before
 * the pipelines module is built (it needs no more than the database).
 */
export function pipelinesUsingAgents(db: Kysely<DatabaseSchema>): AgentUsage {
  const repository = new PipelinesRepository(db);
  return { pipelinesUsing: (agentId) => repository.usingAgent(agentId) };
}

/**
 * Builds the module and starts taking the queue's runs: a run queued before this instance started
 * (or handed over by a stopping one) is continued from its records.
 */
export async function createPipelinesModule(
  dependencies: PipelinesModuleDependencies,
): Promise<PipelinesModule> {
  const { storage, agents, executions, logger, now } = dependencies;
  const pipelines = new PipelineService({
    pipelines: new PipelinesRepository(storage.db),
    agents: agents.service,
    now,
  });
  const runner = new PipelineRunner({
    pipelines,
    executions,
    agents: agents.service,
    executor: agents.executor,
    isRunFailure: (error) => agents.isRunFailure(error),
    queue: dependencies.jobs,
    logger,
    now,
    onPaused: dependencies.onPaused,
  });
  // Before the first queued run is taken: a ToolAgent it continues may run a pipeline as a tool.
  dependencies.tools.provide({ pipelines: pipelinesAsTools(pipelines, runner) });
  try {
    await runner.startWorking();
  } catch (error) {
    throw new Error('Cannot start the job queue', { cause: error });
  }
  // The runner holds nothing of its own: the queue it works is closed by the executions module.
  return {
    pipelines,
    runner,
    plugin: pipelinesPlugin({ pipelines, runner, executions }),
  };
}
