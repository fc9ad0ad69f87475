// Runs agents. `run` is the one code path for an agent's work (agent execution and pipeline stages
// both use it); `execute` adds the execution record: stored as running, then completed or failed.
import type { FastifyBaseLogger } from 'fastify';
import { AppError, NotFoundError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type { ModelRegistry } from '../models/model-registry.js';
import { RequestAbortedError } from '../models/spec.js';
import type { Agent } from '../storage/repositories/agents.repository.js';
import type {
  Execution,
  ExecutionError,
  ExecutionsRepository,
} from '../storage/repositories/executions.repository.js';
import type { AgentCatalog } from './agent-catalog.js';
import { AgentModels } from './agent-models.js';
import type { AgentInput } from './agent-type.js';
import type { AgentService } from './agent-service.js';
import { requireSchema } from './schema-validator.js';

export interface AgentRun {
  result: Record<string, unknown>;
  tokensUsed: number;
  executionTimeMs: number;
}

export interface AgentExecutionResponse {
  success: boolean;
  executionId: string;
  result: Record<string, unknown> | null;
  error: ExecutionError | null;
  executionTimeMs: number;
  tokensUsed: number;
}

/** A run that failed, with what it had cost until then. */
export class AgentRunError extends Error {
  constructor(
    readonly error: ExecutionError,
    readonly tokensUsed: number,
    readonly executionTimeMs: number,
    readonly aborted: boolean,
  ) {
    super(error.message);
    this.name = 'AgentRunError';
  }
}

export interface AgentExecutorOptions {
  agents: AgentService;
  catalog: AgentCatalog;
  models: ModelRegistry;
  executions: ExecutionsRepository;
  /** Recorded on executions, to recover runs a stopped instance left running. */
  instanceId: string;
  logger: FastifyBaseLogger;
  now?: () => number;
}

export class AgentExecutor {
  private readonly now: () => number;

  constructor(private readonly options: AgentExecutorOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Checks the input (a 400 before anything is recorded), then runs the agent. Failures of the run
   * become an AgentRunError carrying the contract's error object.
   */
  prepare(agent: Agent, input: AgentInput): { parameters: Record<string, unknown> } {
    const type = this.options.catalog.require(agent.agentType);
    const parameters = requireSchema<Record<string, unknown>>(
      type.parametersSchema,
      input.parameters ?? {},
      'agent parameters',
      'parameters',
    );
    type.validateInput(input, agent.configuration, parameters);
    return { parameters };
  }

  async run(
    agent: Agent,
    input: AgentInput,
    parameters: Record<string, unknown>,
    callerAccountId: string,
    signal: AbortSignal,
  ): Promise<AgentRun> {
    const type = this.options.catalog.require(agent.agentType);
    const models = new AgentModels(this.options.models, agent.modelId, callerAccountId, signal);
    const started = this.now();
    try {
      const result = await type.run(
        { agent, callerAccountId, models, signal },
        agent.configuration,
        input,
        parameters,
      );
      return { result, tokensUsed: models.tokensUsed, executionTimeMs: this.now() - started };
    } catch (error) {
      const aborted = error instanceof RequestAbortedError || signal.aborted;
      throw new AgentRunError(
        this.describe(error, agent, aborted),
        models.tokensUsed,
        this.now() - started,
        aborted,
      );
    }
  }

  /** POST /v1/agents/{id}/execute: one recorded run; a run-time failure is `success: false`. */
  async execute(
    callerAccountId: string,
    agentId: string,
    input: AgentInput & { conversation_id?: string | undefined },
    signal: AbortSignal,
  ): Promise<AgentExecutionResponse> {
    const agent = await this.options.agents.get(callerAccountId, agentId);
    const { parameters } = this.prepare(agent, input);
    const execution: Execution = {
      id: newId('exec'),
      accountId: callerAccountId,
      kind: 'agent',
      agentId: agent.id,
      pipelineId: null,
      conversationId: input.conversation_id ?? null,
      status: 'running',
      input: {
        ...(input.query === undefined ? {} : { query: input.query }),
        parameters,
        ...(input.data === undefined ? {} : { data: input.data }),
        ...(input.urls === undefined ? {} : { urls: input.urls }),
      },
      output: null,
      error: null,
      tokensUsed: 0,
      executionTimeMs: null,
      createdAt: new Date(this.now()).toISOString(),
      completedAt: null,
    };
    await this.options.executions.insertRunning(execution, this.options.instanceId);
    try {
      const run = await this.run(agent, input, parameters, callerAccountId, signal);
      await this.options.executions.finish(execution.id, {
        status: 'completed',
        output: run.result,
        error: null,
        tokensUsed: run.tokensUsed,
        executionTimeMs: run.executionTimeMs,
        completedAt: new Date(this.now()).toISOString(),
      });
      return {
        success: true,
        executionId: execution.id,
        result: run.result,
        error: null,
        executionTimeMs: run.executionTimeMs,
        tokensUsed: run.tokensUsed,
      };
    } catch (error) {
      if (!(error instanceof AgentRunError)) throw error;
      await this.options.executions.finish(execution.id, {
        status: 'failed',
        output: null,
        error: error.error,
        tokensUsed: error.tokensUsed,
        executionTimeMs: error.executionTimeMs,
        completedAt: new Date(this.now()).toISOString(),
      });
      if (error.aborted) throw new RequestAbortedError();
      return {
        success: false,
        executionId: execution.id,
        result: null,
        error: error.error,
        executionTimeMs: error.executionTimeMs,
        tokensUsed: error.tokensUsed,
      };
    }
  }

  async getExecution(accountId: string, id: string): Promise<Execution> {
    const execution = await this.options.executions.find(accountId, id);
    if (execution === undefined) throw new NotFoundError('Execution', id);
    return execution;
  }

  /** The contract's error object for a failed run; an unexpected failure is logged, not echoed. */
  private describe(error: unknown, agent: Agent, aborted: boolean): ExecutionError {
    if (aborted) {
      return {
        message: 'The client closed the request before the agent finished.',
        type: 'api_error',
        code: 'aborted',
      };
    }
    if (error instanceof AppError) {
      const { message, type, code, param, ...details } = error.toBody().error;
      return { message, type, code, ...(param === null ? {} : { param }), ...details };
    }
    this.options.logger.error({ err: error, agent_id: agent.id }, 'agent failed unexpectedly');
    return {
      message: `${agent.agentType} failed unexpectedly; the failure was logged.`,
      type: 'api_error',
      code: 'internal_error',
    };
  }
}
