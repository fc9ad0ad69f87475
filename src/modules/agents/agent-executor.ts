// Runs agents. `run` is the one code path for an agent's work (agent execution and pipeline stages
// both use it); `execute` records it through the execution service: running, then completed or failed.
import type { Logger } from 'pino';
import { AppError } from '../../errors/app-error.js';
import type { ExecutionService } from '../executions/execution-service.js';
import {
  executionError,
  executionErrorFrom,
  type ExecutionError,
} from '../../errors/execution-error.js';
import type { ModelRegistry } from '../../models/model-registry.js';
import { RequestAbortedError } from '../../models/spec.js';
import type { Agent } from './agent.js';
import type { AgentCatalog } from './agent-catalog.js';
import { AgentModels } from '../../models/agent-models.js';
import {
  AwaitingApproval,
  inlineTextWork,
  type AgentInput,
  type StepLog,
  type TextWork,
} from './agent-type.js';
import type { Execution } from '../executions/execution.js';
import { executionStepLog, memoryStepLog } from './step-log.js';
import type { AgentService } from './agent-service.js';
import { requireSchema } from '../../validation/schema-validator.js';
import { AgentInputMismatch, findInputMismatch } from './agent-input.js';
import { assertSafeKeys, assertSafeTopLevelKeys } from '../../validation/safe-keys.js';
import { agentRunAttributes, traceOperation } from '../../telemetry/operation-spans.js';
import { AgentRunError, RunLeftRunning } from './agent-run-errors.js';

export { AgentRunError, RunLeftRunning } from './agent-run-errors.js';

export interface AgentRun {
  result: Record<string, unknown>;
  tokensUsed: number;
  executionTimeMs: number;
}

/**
 * An agent execution request: free-form, as the spec has it. `query`, `parameters`, `data` and
 * `urls` are what the types read; `conversation_id` and `user_id` are recorded on the execution;
 * `model` replaces the agent's model for this run; every other key is kept in the recorded input.
 */
export interface AgentExecutionRequest extends AgentInput {
  conversation_id?: string | undefined;
  user_id?: string | undefined;
  model?: string | undefined;
  [key: string]: unknown;
}

export interface AgentExecutionResponse {
  success: boolean;
  /** `waiting_for_approval`: a tool call waits for a person (see the execution's steps). */
  status: 'completed' | 'failed' | 'waiting_for_approval';
  executionId: string;
  result: Record<string, unknown> | null;
  error: ExecutionError | null;
  executionTimeMs: number;
  tokensUsed: number;
}

/** The route the usage ledger records an agent execution's model turns under. */
export const agentRoute = 'POST /v1/agents/:agent_id/execute';

/** Whose run it is beyond the account: its key, end user, route and execution. */
export interface RunAttribution {
  readonly apiKeyId: string | null;
  readonly endUser: string | null;
  readonly route: string;
  readonly executionId: string | null;
}

/** The attribution of a recorded run's model turns. */
export function runAttributionOf(
  execution: Pick<Execution, 'id' | 'apiKeyId' | 'userId'>,
  route: string,
): RunAttribution {
  return {
    apiKeyId: execution.apiKeyId,
    endUser: execution.userId,
    route,
    executionId: execution.id,
  };
}

export interface AgentExecutorOptions {
  agents: AgentService;
  catalog: AgentCatalog;
  models: ModelRegistry;
  executions: ExecutionService;
  logger: Logger;
  now?: () => number;
  /** Where agents' text work runs; default: on the event loop. */
  text?: TextWork;
  /** How long a tool call waits for a person's approval before its run fails. */
  approvalTimeoutMs?: number;
  /** Told when a run pauses for approval (the approvals' deadline is watched from there). */
  onPaused?: (executionId: string, accountId: string) => void;
}

export class AgentExecutor {
  private readonly now: () => number;

  constructor(private readonly options: AgentExecutorOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Checks the input before anything is recorded (a 400 naming the field): the kinds of value of
   * `query`, `urls`, `parameters` and the type's `data` (an AgentInputMismatch: a pipeline stage's
   * input comes from path mappings, which can hold anything), the per-run `parameters` against the
   * type's schema (defaults filled in), what the type needs, and a `model` that replaces the
   * agent's.
   */
  async prepare(
    agent: Agent,
    input: AgentInput,
    model?: string | null,
  ): Promise<{ parameters: Record<string, unknown> }> {
    const type = this.options.catalog.require(agent.agentType);
    const mismatch = findInputMismatch(input, type.dataInput);
    if (mismatch !== null) throw mismatch;
    this.options.agents.requireChatModel(model, 'model');
    assertSafeKeys(input.parameters, 'parameters');
    const parameters = requireSchema<Record<string, unknown>>(
      type.parametersSchema,
      input.parameters ?? {},
      'agent parameters',
      'parameters',
    );
    await type.validateInput(input, agent.configuration, parameters);
    return { parameters };
  }

  /**
   * The first field of `input` holding a kind of value the agent does not take there (the check
   * `prepare` makes first); `agent` null when it is not known, and then `data` is not checked.
   */
  inputMismatch(agent: Agent | null, input: object): AgentInputMismatch | null {
    const dataInput =
      agent === null ? undefined : this.options.catalog.require(agent.agentType).dataInput;
    return findInputMismatch(input, dataInput);
  }

  /** `error` when it is an input of the wrong kind (a stage names the mapping behind it). */
  inputMismatchOf(error: unknown): AgentInputMismatch | null {
    return error instanceof AgentInputMismatch ? error : null;
  }

  /** Runs the agent; failures become an AgentRunError carrying the contract's error object. */
  async run(
    agent: Agent,
    input: AgentInput,
    parameters: Record<string, unknown>,
    options: {
      callerAccountId: string;
      signal: AbortSignal;
      model?: string | null;
      /** Where a tool-calling agent records its steps (memory when not given). */
      steps?: StepLog;
      depth?: number;
      /** Whose run it is beyond the account, for the usage ledger (a nested run: the account's). */
      attribution?: RunAttribution;
    },
  ): Promise<AgentRun> {
    const { callerAccountId, signal } = options;
    const type = this.options.catalog.require(agent.agentType);
    const models = new AgentModels(
      this.options.models,
      options.model ?? agent.modelId,
      {
        accountId: callerAccountId,
        apiKeyId: options.attribution?.apiKeyId ?? null,
        endUser: options.attribution?.endUser ?? null,
        route: options.attribution?.route ?? agentRoute,
        executionId: options.attribution?.executionId ?? null,
      },
      signal,
    );
    const started = this.now();
    try {
      const work = () =>
        type.run(
          {
            agent,
            callerAccountId,
            models,
            signal,
            text: this.options.text ?? inlineTextWork,
            steps: options.steps ?? memoryStepLog(this.options.executions),
            depth: options.depth ?? 0,
          },
          agent.configuration,
          input,
          parameters,
        );
      const attributes = agentRunAttributes(
        agent,
        callerAccountId,
        options.model,
        options.attribution?.executionId,
      );
      const result = await traceOperation('invoke_agent', agent.name, attributes, work);
      return { result, tokensUsed: models.tokensUsed, executionTimeMs: this.now() - started };
    } catch (error) {
      // A pause is not a failure: the caller records it, and the run goes on once decided.
      if (error instanceof AwaitingApproval) throw error;
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
    request: AgentExecutionRequest,
    signal: AbortSignal,
    apiKeyId: string | null = null,
  ): Promise<AgentExecutionResponse> {
    const agent = await this.options.agents.get(callerAccountId, agentId);
    // Any other key is kept in the recorded input under the client's name (its values are data).
    assertSafeTopLevelKeys(request);
    const { conversation_id: conversationId, user_id: userId, ...rest } = request;
    const { parameters } = await this.prepare(agent, request, request.model);
    const { execution } = await this.options.executions.start({
      accountId: callerAccountId,
      kind: 'agent',
      agentId: agent.id,
      conversationId: conversationId ?? null,
      userId: userId ?? null,
      apiKeyId,
      input: { ...rest, parameters },
    });
    return this.carryOut(execution, agent, request, parameters, signal, []);
  }

  /**
   * The log of the steps an agent takes in execution `executionId`: its own (`stageRecordId`
   * null), or a pipeline stage's (that stage record's).
   */
  stepLog(
    executionId: string,
    stageRecordId: string | null,
    recorded: Parameters<typeof executionStepLog>[3],
  ): StepLog {
    return executionStepLog(
      this.options.executions,
      executionId,
      stageRecordId,
      recorded,
      this.approvalTimeoutMs,
    );
  }

  /** Whether a run stopped to wait for a person's approval (rather than failing). */
  isAwaitingApproval(error: unknown): boolean {
    return error instanceof AwaitingApproval;
  }

  get approvalTimeoutMs(): number {
    return this.options.approvalTimeoutMs ?? 24 * 60 * 60 * 1000;
  }

  /**
   * Continues an agent execution from its records (the job queue's handler, once a person has
   * decided on its waiting calls): its input and steps are read back, the agent runs on.
   */
  async resume(execution: Execution, signal: AbortSignal): Promise<'done' | 'handed-over'> {
    let agent;
    try {
      agent = await this.options.agents.get(execution.accountId, execution.agentId ?? '');
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      await this.options.executions.finish(execution, {
        status: 'failed',
        output: null,
        error: executionErrorFrom(error),
        tokensUsed: execution.tokensUsed,
        executionTimeMs: this.now() - Date.parse(execution.createdAt),
      });
      return 'done';
    }
    const input = execution.input as AgentExecutionRequest;
    const parameters = input.parameters ?? {};
    const steps = await this.options.executions.stepsOf(execution.id);
    try {
      await this.carryOut(execution, agent, input, parameters, signal, steps, 'handover');
      return 'done';
    } catch (error) {
      if (error instanceof RunLeftRunning) return 'handed-over';
      throw error;
    }
  }

  private async carryOut(
    execution: Execution,
    agent: Agent,
    request: AgentExecutionRequest,
    parameters: Record<string, unknown>,
    signal: AbortSignal,
    recorded: Parameters<typeof executionStepLog>[3],
    /** What `signal` aborting means: the client left (recorded failed), or this instance stops. */
    onStop: 'fail' | 'handover' = 'fail',
  ): Promise<AgentExecutionResponse> {
    const earlierTokens = recorded.reduce((sum, step) => sum + step.tokensUsed, 0);
    const started = this.options.executions.workStart(execution, this.now());
    try {
      const run = await this.run(agent, request, parameters, {
        callerAccountId: execution.accountId,
        signal,
        model: request.model ?? null,
        steps: this.stepLog(execution.id, null, recorded),
        attribution: runAttributionOf(execution, agentRoute),
      });
      await this.options.executions.finish(execution, {
        status: 'completed',
        output: run.result,
        error: null,
        tokensUsed: earlierTokens + run.tokensUsed,
        executionTimeMs: this.now() - started,
      });
      return {
        success: true,
        status: 'completed',
        executionId: execution.id,
        result: run.result,
        error: null,
        executionTimeMs: run.executionTimeMs,
        tokensUsed: run.tokensUsed,
      };
    } catch (error) {
      if (error instanceof AwaitingApproval) {
        const worked = this.now() - started;
        await this.options.executions.pause(execution.id, { kind: 'agent' }, null, worked);
        this.options.onPaused?.(execution.id, execution.accountId);
        return {
          success: false,
          status: 'waiting_for_approval',
          executionId: execution.id,
          result: null,
          error: null,
          executionTimeMs: this.now() - started,
          tokensUsed: earlierTokens + error.tokensUsed,
        };
      }
      if (!(error instanceof AgentRunError)) throw error;
      // This instance is stopping: the run stays running, and another instance continues it.
      if (error.aborted && onStop === 'handover') throw new RunLeftRunning();
      await this.options.executions.finish(execution, {
        status: 'failed',
        output: null,
        error: error.error,
        tokensUsed: earlierTokens + error.tokensUsed,
        executionTimeMs: this.now() - started,
      });
      if (error.aborted) throw new RequestAbortedError();
      return {
        success: false,
        status: 'failed',
        executionId: execution.id,
        result: null,
        error: error.error,
        executionTimeMs: error.executionTimeMs,
        tokensUsed: error.tokensUsed,
      };
    }
  }

  /** The contract's error object for a failed run; an unexpected failure is logged, not echoed. */
  private describe(error: unknown, agent: Agent, aborted: boolean): ExecutionError {
    if (aborted) {
      return executionError(
        'aborted',
        'The run was stopped before the agent finished (the client closed the request).',
      );
    }
    if (error instanceof AppError) return executionErrorFrom(error);
    this.options.logger.error({ err: error, agent_id: agent.id }, 'agent failed unexpectedly');
    return executionError(
      'internal_error',
      `${agent.agentType} failed unexpectedly; the failure was logged.`,
    );
  }
}
