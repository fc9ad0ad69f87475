// Executes pipelines: each stage's inputs are resolved from the run's inputs and earlier stages'
// outputs, its agent runs through the same code path as an agent execution (with the stage's
// timeout and retries), and its outputs are mapped — every step recorded through the execution
// service, whose change feed tells followers. A failing stage stops the run: the execution fails
// naming the stage and the cause, and later stages are recorded skipped.
import type { Logger } from 'pino';
import { AgentRunError, type AgentExecutor } from '../agents/agent-executor.js';
import type { AgentService } from '../agents/agent-service.js';
import { AppError, InvalidParameterError, NotFoundError } from '../errors/app-error.js';
import type { ExecutionService } from '../executions/execution-service.js';
import {
  executionError,
  executionErrorFrom,
  type Execution,
  type ExecutionError,
} from '../executions/execution.js';
import type { Pipeline, PipelineStage } from './pipeline.js';
import type { PipelineService } from './pipeline-service.js';
import { parsePath, setAt, valueAt, type PathExpression } from './path-expression.js';

export interface PipelineRunResult {
  execution: Execution;
  stagesCompleted: number;
}

export interface PipelineRunOptions {
  conversationId: string | null;
  userId: string | null;
  /** The key whose request started the run (usage by key). */
  apiKeyId?: string | null;
  /** Run in the background (the answer comes at once) rather than to the end. */
  detach: boolean;
  /** The client's: stops a run that is not detached when the client goes away. */
  signal: AbortSignal;
}

export interface PipelineRunnerOptions {
  pipelines: PipelineService;
  executions: ExecutionService;
  agents: AgentService;
  executor: AgentExecutor;
  logger: Logger;
  now?: () => number;
}

/** A stage failed; `message` is the cause (the execution's error adds the stage name). */
class StageFailure extends Error {
  constructor(
    readonly detail: ExecutionError,
    readonly tokensUsed: number,
  ) {
    super(detail.message);
  }
}

function describePath(path: PathExpression): string {
  return path.root === 'stages'
    ? `stage '${path.stage ?? ''}' has no '${path.steps.join('.')}'`
    : `the run has no input '${path.steps.join('.')}'`;
}

/** Why a run was stopped from outside, recorded on the stage it was in. */
type StopReason = 'client' | 'shutdown';

export class PipelineRunner {
  private readonly now: () => number;
  /** Runs started with `detach`, so shutdown can stop them. */
  private readonly detached = new Map<
    string,
    { controller: AbortController; done: Promise<void> }
  >();

  constructor(private readonly options: PipelineRunnerOptions) {
    this.now = options.now ?? Date.now;
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  /**
   * Starts a run: records the execution and its pending stages (a `conversationId` of another
   * account or user is a 404, nothing recorded), then either runs it to the end or in the
   * background (returning at once).
   */
  async start(
    accountId: string,
    pipelineId: string,
    inputs: Record<string, unknown>,
    options: PipelineRunOptions,
  ): Promise<PipelineRunResult> {
    const pipeline = await this.options.pipelines.get(accountId, pipelineId);
    if (pipeline.stages.length === 0) {
      throw new InvalidParameterError('stages', `Pipeline '${pipelineId}' has no stages to run.`);
    }
    const { execution, stages } = await this.options.executions.start(
      {
        accountId,
        kind: 'pipeline',
        pipelineId: pipeline.id,
        conversationId: options.conversationId,
        userId: options.userId,
        apiKeyId: options.apiKeyId ?? null,
        input: inputs,
      },
      pipeline.stages.map((stage) => ({
        stageId: stage.id,
        name: stage.name,
        agentId: stage.agent_id,
      })),
    );
    const records = stages.map((record, index) => ({
      id: record.id,
      stage: pipeline.stages[index]!,
    }));
    if (!options.detach) {
      return this.run(execution, pipeline, records, options.signal, 'client');
    }
    const controller = new AbortController();
    const done = this.run(execution, pipeline, records, controller.signal, 'shutdown')
      .then(() => undefined)
      .catch((error: unknown) =>
        this.options.logger.error(
          { err: error, execution_id: execution.id },
          'pipeline run failed',
        ),
      )
      .finally(() => this.detached.delete(execution.id));
    this.detached.set(execution.id, { controller, done });
    return { execution, stagesCompleted: 0 };
  }

  private async run(
    execution: Execution,
    pipeline: Pipeline,
    records: ReadonlyArray<{ id: string; stage: PipelineStage }>,
    signal: AbortSignal,
    stopReason: StopReason,
  ): Promise<PipelineRunResult> {
    const started = this.now();
    const outputs: Record<string, Record<string, unknown>> = {};
    let tokensUsed = 0;
    let completed = 0;
    let last: Record<string, unknown> = {};
    let failure: ExecutionError | null = null;
    for (const { id, stage } of records) {
      try {
        const result = await this.runStage(execution, id, stage, outputs, signal, stopReason);
        tokensUsed += result.tokensUsed;
        outputs[stage.name] = result.output;
        last = result.output;
        completed += 1;
      } catch (error) {
        if (!(error instanceof StageFailure)) {
          this.options.logger.error(
            { err: error, execution_id: execution.id, pipeline_id: pipeline.id },
            'pipeline stage failed unexpectedly',
          );
        }
        const detail =
          error instanceof StageFailure
            ? error.detail
            : executionError(
                'internal_error',
                'the stage failed unexpectedly; the failure was logged',
              );
        tokensUsed += error instanceof StageFailure ? error.tokensUsed : 0;
        failure = {
          ...detail,
          message: `stage '${stage.name}' failed: ${detail.message}`,
          stage: stage.name,
        };
        break;
      }
    }
    const finished = await this.options.executions.finish(execution, {
      status: failure === null ? 'completed' : 'failed',
      output: failure === null ? last : null,
      error: failure,
      tokensUsed,
      executionTimeMs: this.now() - started,
    });
    return { execution: finished, stagesCompleted: completed };
  }

  private async runStage(
    execution: Execution,
    recordId: string,
    stage: PipelineStage,
    outputs: Record<string, Record<string, unknown>>,
    runSignal: AbortSignal,
    stopReason: StopReason,
  ): Promise<{ output: Record<string, unknown>; tokensUsed: number }> {
    const { executions } = this.options;
    const record = (update: Parameters<ExecutionService['updateStage']>[2]) =>
      executions.updateStage(execution.id, recordId, update);
    const started = this.now();
    await record({ status: 'running', startedAt: this.iso() });
    let input: Record<string, unknown> = {};
    let attempts = 0;
    let tokensUsed = 0;
    const fail = async (detail: ExecutionError): Promise<never> => {
      await record({
        status: 'failed',
        attempts,
        input,
        error: detail,
        tokensUsed,
        executionTimeMs: this.now() - started,
        completedAt: this.iso(),
      });
      throw new StageFailure(detail, tokensUsed);
    };

    // Inputs: every mapped path must resolve; nothing becomes a silent undefined.
    for (const [name, text] of Object.entries(stage.input_mapping)) {
      const path = parsePath(text);
      const source = path.root === 'input' ? execution.input : (outputs[path.stage ?? ''] ?? {});
      const value = valueAt(source, path.steps);
      if (value === undefined) {
        return fail(
          executionError(
            'unresolved_path',
            `input '${name}' resolves to nothing: ${text} (${describePath(path)})`,
            { path: text },
          ),
        );
      }
      setAt(input, name, value);
    }
    input = structuredClone(input);
    // `model` is not an input of the agent's type: it replaces the agent's model for the stage.
    const { model, ...agentInput } = input;
    if (model !== undefined && typeof model !== 'string') {
      return fail(
        executionError('invalid_parameter', "input 'model' must be a model name (a string)", {
          param: 'model',
        }),
      );
    }

    let agent;
    try {
      agent = await this.options.agents.get(execution.accountId, stage.agent_id);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      return fail(executionError('not_found', `agent '${stage.agent_id}' no longer exists`));
    }
    let parameters: Record<string, unknown>;
    try {
      parameters = this.options.executor.prepare(agent, agentInput, model).parameters;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return fail(executionErrorFrom(error));
    }

    const tries = 1 + (stage.retries ?? 0);
    let lastError: ExecutionError | null = null;
    for (attempts = 1; attempts <= tries; attempts += 1) {
      const timeout = stage.timeout_ms === undefined ? null : AbortSignal.timeout(stage.timeout_ms);
      const signal = timeout === null ? runSignal : AbortSignal.any([runSignal, timeout]);
      try {
        const run = await this.options.executor.run(agent, agentInput, parameters, {
          callerAccountId: execution.accountId,
          signal,
          model: model ?? null,
        });
        tokensUsed += run.tokensUsed;
        const mapped: Record<string, unknown> = {};
        for (const [name, text] of Object.entries(stage.output_mapping)) {
          const steps = parsePath(text).steps;
          const value = valueAt(run.result, steps);
          if (value === undefined) {
            return fail(
              executionError(
                'unresolved_path',
                `output '${name}' resolves to nothing: ${text} (the agent's result has no '${steps.join('.')}')`,
                { path: text },
              ),
            );
          }
          mapped[name] = value;
        }
        // Later stages see the agent's result and the mapped names (the mapped ones win).
        const output = { ...run.result, ...mapped };
        await record({
          status: 'completed',
          attempts,
          input,
          output,
          tokensUsed,
          executionTimeMs: this.now() - started,
          completedAt: this.iso(),
        });
        return { output, tokensUsed };
      } catch (error) {
        if (!(error instanceof AgentRunError)) throw error;
        tokensUsed += error.tokensUsed;
        if (runSignal.aborted) {
          return fail(
            stopReason === 'client'
              ? executionError('aborted', 'the run was stopped: the client closed the request')
              : executionError(
                  'interrupted',
                  'the run was stopped: the service instance is shutting down',
                ),
          );
        }
        lastError =
          timeout?.aborted === true
            ? executionError('upstream_timeout', `timed out after ${stage.timeout_ms ?? 0} ms`)
            : error.error;
      }
    }
    attempts = tries;
    const detail = lastError ?? executionError('internal_error', 'failed');
    return fail(
      tries > 1 ? { ...detail, message: `${detail.message} (after ${tries} attempts)` } : detail,
    );
  }

  /** Stops background runs (they are recorded as failed, interrupted) and waits for them. */
  async close(): Promise<void> {
    const runs = [...this.detached.values()];
    for (const run of runs) run.controller.abort();
    await Promise.all(runs.map((run) => run.done));
  }
}
