// One stage of a pipeline run: its inputs resolved from the run's inputs and earlier stages'
// outputs, its agent run through the same code path as an agent execution (with the stage's
// timeout and retries), and its outputs mapped — each step recorded on the stage's record. A stage
// that cannot go on is recorded failed and ends with a StageFailure.
import type { Agent } from '../agents/agent.js';
import { AppError, NotFoundError } from '../../errors/app-error.js';
import type { ExecutionService } from '../executions/execution-service.js';
import {
  executionError,
  executionErrorFrom,
  type ExecutionError,
} from '../../errors/execution-error.js';
import type { Execution } from '../executions/execution.js';
import { defineOwn } from '../../validation/safe-keys.js';
import { parsePath, setAt, valueAt, type PathExpression } from './path-expression.js';
import type { PipelineStage } from './pipeline.js';
import { mismatchFailure } from './stage-input-kinds.js';
import {
  isoNow,
  RunHandedOver,
  StageFailure,
  type RunContext,
  type StopReason,
} from './pipeline-run.js';

export interface StageResult {
  output: Record<string, unknown>;
  tokensUsed: number;
}

type StageUpdate = Parameters<ExecutionService['updateStage']>[2];

function describePath(path: PathExpression): string {
  return path.root === 'stages'
    ? `stage '${path.stage ?? ''}' has no '${path.steps.join('.')}'`
    : `the run has no input '${path.steps.join('.')}'`;
}

/**
 * The stage's input: every mapped path must resolve; nothing becomes a silent undefined. On a path
 * that resolves to nothing, the input as far as it was built, and the failure.
 */
function resolveInput(
  execution: Execution,
  stage: PipelineStage,
  outputs: ReadonlyMap<string, Record<string, unknown>>,
): { input: Record<string, unknown>; failure: ExecutionError | null } {
  const input: Record<string, unknown> = {};
  for (const [name, text] of Object.entries(stage.input_mapping)) {
    const path = parsePath(text);
    const source = path.root === 'input' ? execution.input : (outputs.get(path.stage ?? '') ?? {});
    const value = valueAt(source, path.steps);
    if (value === undefined) {
      const failure = executionError(
        'unresolved_path',
        `input '${name}' resolves to nothing: ${text} (${describePath(path)})`,
        { path: text },
      );
      return { input, failure };
    }
    setAt(input, name, value);
  }
  return { input: structuredClone(input), failure: null };
}

/** The stage's output names, each mapped from the agent's result (every path must resolve). */
function mapOutput(
  stage: PipelineStage,
  result: Record<string, unknown>,
): { mapped: Record<string, unknown>; failure: ExecutionError | null } {
  const mapped: Record<string, unknown> = {};
  for (const [name, text] of Object.entries(stage.output_mapping)) {
    const steps = parsePath(text).steps;
    const value = valueAt(result, steps);
    if (value === undefined) {
      const failure = executionError(
        'unresolved_path',
        `output '${name}' resolves to nothing: ${text} (the agent's result has no '${steps.join('.')}')`,
        { path: text },
      );
      return { mapped, failure };
    }
    defineOwn(mapped, name, value);
  }
  return { mapped, failure: null };
}

/** What a stage's agent runs with, once checked. */
interface PreparedAgent {
  agent: Agent;
  input: Record<string, unknown>;
  parameters: Record<string, unknown>;
  model: string | undefined;
}

/** Carries out one stage, recording each step on its record (`recordId`). */
export class StageRun {
  private started = 0;
  private input: Record<string, unknown> = {};
  private attempts = 0;
  private tokensUsed = 0;

  constructor(
    private readonly context: RunContext,
    private readonly execution: Execution,
    private readonly recordId: string,
    private readonly stage: PipelineStage,
  ) {}

  /**
   * Runs the stage over the outputs of the stages before it. A stop of `runSignal` ends it as
   * `stopReason` says: recorded failed (aborted) or, on a handover, left running.
   */
  async run(
    outputs: ReadonlyMap<string, Record<string, unknown>>,
    runSignal: AbortSignal,
    stopReason: StopReason,
  ): Promise<StageResult> {
    this.started = this.context.now();
    await this.record({ status: 'running', startedAt: isoNow(this.context) });
    const resolved = resolveInput(this.execution, this.stage, outputs);
    this.input = resolved.input;
    if (resolved.failure !== null) return this.fail(resolved.failure);
    const prepared = await this.prepare();
    return this.attempt(prepared, runSignal, stopReason);
  }

  /** The agent and its checked parameters; `model` of the input replaces the agent's model. */
  private async prepare(): Promise<PreparedAgent> {
    // `model` is not an input of the agent's type: it replaces the agent's model for the stage.
    const { model, ...input } = this.input;
    if (model !== undefined && typeof model !== 'string') {
      return this.fail(
        executionError('invalid_parameter', "input 'model' must be a model name (a string)", {
          param: 'model',
        }),
      );
    }
    let agent;
    try {
      agent = await this.context.agents.get(this.execution.accountId, this.stage.agent_id);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      return this.fail(
        executionError('not_found', `agent '${this.stage.agent_id}' no longer exists`),
      );
    }
    try {
      const { parameters } = await this.context.executor.prepare(agent, input, model);
      return { agent, input, parameters, model };
    } catch (error) {
      const mismatch = this.context.executor.inputMismatchOf(error);
      if (mismatch !== null) return this.fail(mismatchFailure(this.stage, mismatch));
      if (!(error instanceof AppError)) throw error;
      return this.fail(executionErrorFrom(error));
    }
  }

  /** Runs the agent, once and then once per retry while it fails, each try under the timeout. */
  private async attempt(
    prepared: PreparedAgent,
    runSignal: AbortSignal,
    stopReason: StopReason,
  ): Promise<StageResult> {
    const { stage } = this;
    const tries = 1 + (stage.retries ?? 0);
    let lastError: ExecutionError | null = null;
    for (this.attempts = 1; this.attempts <= tries; this.attempts += 1) {
      const timeout = stage.timeout_ms === undefined ? null : AbortSignal.timeout(stage.timeout_ms);
      const signal = timeout === null ? runSignal : AbortSignal.any([runSignal, timeout]);
      try {
        const recorded = await this.context.executions.stepsOf(this.execution.id);
        const run = await this.context.executor.run(
          prepared.agent,
          prepared.input,
          prepared.parameters,
          {
            callerAccountId: this.execution.accountId,
            signal,
            model: prepared.model ?? null,
            // A tool-calling agent's steps are the stage's: a paused stage goes on from them.
            steps: this.context.executor.stepLog(this.execution.id, this.recordId, recorded),
            // The usage ledger records the stage's model turns under the pipeline's run.
            attribution: {
              apiKeyId: this.execution.apiKeyId,
              endUser: this.execution.userId,
              route: 'POST /v1/pipelines/:pipeline_id/execute',
              executionId: this.execution.id,
            },
          },
        );
        this.tokensUsed += run.tokensUsed;
        return await this.complete(run.result);
      } catch (error) {
        if (!this.context.isRunFailure(error)) throw error;
        this.tokensUsed += error.tokensUsed;
        if (runSignal.aborted) {
          if (stopReason === 'handover') throw new RunHandedOver();
          return this.fail(
            executionError('aborted', 'the run was stopped: the client closed the request'),
          );
        }
        lastError =
          timeout?.aborted === true
            ? executionError('upstream_timeout', `timed out after ${stage.timeout_ms ?? 0} ms`)
            : error.error;
      }
    }
    this.attempts = tries;
    const detail = lastError ?? executionError('internal_error', 'failed');
    return this.fail(
      tries > 1 ? { ...detail, message: `${detail.message} (after ${tries} attempts)` } : detail,
    );
  }

  /** Maps the agent's result and records the stage completed with it. */
  private async complete(result: Record<string, unknown>): Promise<StageResult> {
    const { mapped, failure } = mapOutput(this.stage, result);
    if (failure !== null) return this.fail(failure);
    // Later stages see the agent's result and the mapped names (the mapped ones win).
    const output = { ...result, ...mapped };
    await this.record({
      status: 'completed',
      attempts: this.attempts,
      input: this.input,
      output,
      tokensUsed: this.tokensUsed,
      executionTimeMs: this.context.now() - this.started,
      completedAt: isoNow(this.context),
    });
    return { output, tokensUsed: this.tokensUsed };
  }

  /** Records the stage failed with `detail`, and ends it. */
  private async fail(detail: ExecutionError): Promise<never> {
    await this.record({
      status: 'failed',
      attempts: this.attempts,
      input: this.input,
      error: detail,
      tokensUsed: this.tokensUsed,
      executionTimeMs: this.context.now() - this.started,
      completedAt: isoNow(this.context),
    });
    throw new StageFailure(detail, this.tokensUsed);
  }

  private record(update: StageUpdate): Promise<void> {
    return this.context.executions.updateStage(this.execution.id, this.recordId, update);
  }
}
