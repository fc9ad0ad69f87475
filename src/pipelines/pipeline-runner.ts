// Executes pipelines: each stage's inputs are resolved from the run's inputs and earlier stages'
// outputs, its agent runs through the same code path as an agent execution (with the stage's
// timeout and retries), and its outputs are mapped — every step recorded. A failing stage stops the
// run: the execution fails naming the stage and the cause, and later stages are recorded skipped.
import { EventEmitter } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import { AgentRunError, type AgentExecutor } from '../agents/agent-executor.js';
import type { AgentService } from '../agents/agent-service.js';
import { AppError, InvalidParameterError, NotFoundError } from '../errors/app-error.js';
import { newId } from '../ids.js';
import type {
  Execution,
  ExecutionError,
  ExecutionsRepository,
} from '../storage/repositories/executions.repository.js';
import type {
  Pipeline,
  PipelineStage,
  PipelinesRepository,
} from '../storage/repositories/pipelines.repository.js';
import type { PipelineService } from './pipeline-service.js';
import { parsePath, setAt, valueAt, type PathExpression } from './path-expression.js';

export interface PipelineRunResult {
  execution: Execution;
  stagesCompleted: number;
}

export interface PipelineRunnerOptions {
  pipelines: PipelineService;
  repository: PipelinesRepository;
  executions: ExecutionsRepository;
  agents: AgentService;
  executor: AgentExecutor;
  instanceId: string;
  logger: FastifyBaseLogger;
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

export class PipelineRunner {
  private readonly now: () => number;
  /** 'changed:<execution id>' fires after every recorded step (for event streams). */
  readonly changes = new EventEmitter();
  /** Runs started with `async: true`, so shutdown can stop them. */
  private readonly detached = new Map<
    string,
    { controller: AbortController; done: Promise<void> }
  >();

  constructor(private readonly options: PipelineRunnerOptions) {
    this.now = options.now ?? Date.now;
    this.changes.setMaxListeners(0);
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  private notify(executionId: string): void {
    this.changes.emit(`changed:${executionId}`);
  }

  /**
   * Starts a run: records the execution and its pending stages, then either runs it to the end
   * (`detach` false: the client's signal stops it) or in the background (returns at once).
   */
  async start(
    accountId: string,
    pipelineId: string,
    inputs: Record<string, unknown>,
    options: { conversationId: string | null; detach: boolean; signal: AbortSignal },
  ): Promise<PipelineRunResult> {
    const pipeline = await this.options.pipelines.get(accountId, pipelineId);
    if (pipeline.stages.length === 0) {
      throw new InvalidParameterError('stages', `Pipeline '${pipelineId}' has no stages to run.`);
    }
    const execution: Execution = {
      id: newId('exec'),
      accountId,
      kind: 'pipeline',
      agentId: null,
      pipelineId: pipeline.id,
      conversationId: options.conversationId,
      status: 'running',
      input: inputs,
      output: null,
      error: null,
      tokensUsed: 0,
      executionTimeMs: null,
      createdAt: this.iso(),
      completedAt: null,
    };
    const records = pipeline.stages.map((stage) => ({ id: newId('stage'), stage }));
    await this.options.repository.insertExecution(execution, this.options.instanceId, records);
    if (!options.detach) {
      return this.run(execution, pipeline, records, options.signal);
    }
    const controller = new AbortController();
    const done = this.run(execution, pipeline, records, controller.signal)
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
  ): Promise<PipelineRunResult> {
    const started = this.now();
    const outputs: Record<string, Record<string, unknown>> = {};
    let tokensUsed = 0;
    let completed = 0;
    let last: Record<string, unknown> = {};
    let failure: ExecutionError | null = null;
    for (const { id, stage } of records) {
      try {
        const result = await this.runStage(execution, id, stage, outputs, signal);
        tokensUsed += result.tokensUsed;
        outputs[stage.name] = result.output;
        last = result.output;
        completed += 1;
      } catch (error) {
        const detail =
          error instanceof StageFailure
            ? error.detail
            : {
                message: 'the stage failed unexpectedly; the failure was logged',
                type: 'api_error',
                code: 'internal_error',
              };
        if (!(error instanceof StageFailure)) {
          this.options.logger.error(
            { err: error, execution_id: execution.id },
            'pipeline stage failed unexpectedly',
          );
        }
        tokensUsed += error instanceof StageFailure ? error.tokensUsed : 0;
        failure = {
          ...detail,
          message: `stage '${stage.name}' failed: ${detail.message}`,
          stage: stage.name,
        };
        break;
      }
    }
    if (failure !== null) await this.options.repository.skipRemaining(execution.id);
    const outcome = {
      status: failure === null ? ('completed' as const) : ('failed' as const),
      output: failure === null ? last : null,
      error: failure,
      tokensUsed,
      executionTimeMs: this.now() - started,
      completedAt: this.iso(),
    };
    await this.options.executions.finish(execution.id, outcome);
    this.notify(execution.id);
    return {
      execution: { ...execution, ...outcome },
      stagesCompleted: completed,
    };
  }

  private async runStage(
    execution: Execution,
    recordId: string,
    stage: PipelineStage,
    outputs: Record<string, Record<string, unknown>>,
    runSignal: AbortSignal,
  ): Promise<{ output: Record<string, unknown>; tokensUsed: number }> {
    const { repository } = this.options;
    const started = this.now();
    const startedAt = this.iso();
    await repository.updateStage(recordId, { status: 'running', startedAt });
    this.notify(execution.id);
    let input: Record<string, unknown> = {};
    let attempts = 0;
    let tokensUsed = 0;
    const fail = async (detail: ExecutionError): Promise<never> => {
      await repository.updateStage(recordId, {
        status: 'failed',
        attempts,
        input,
        error: detail,
        tokensUsed,
        executionTimeMs: this.now() - started,
        completedAt: this.iso(),
      });
      this.notify(execution.id);
      throw new StageFailure(detail, tokensUsed);
    };

    // Inputs: every mapped path must resolve; nothing becomes a silent undefined.
    for (const [name, text] of Object.entries(stage.input_mapping)) {
      const path = parsePath(text);
      const source = path.root === 'input' ? execution.input : (outputs[path.stage ?? ''] ?? {});
      const value = valueAt(source, path.steps);
      if (value === undefined) {
        return fail({
          message: `input '${name}' resolves to nothing: ${text} (${describePath(path)})`,
          type: 'invalid_request_error',
          code: 'unresolved_path',
          path: text,
        });
      }
      setAt(input, name, value);
    }
    input = structuredClone(input);

    let agent;
    try {
      agent = await this.options.agents.get(execution.accountId, stage.agent_id);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      return fail({
        message: `agent '${stage.agent_id}' no longer exists`,
        type: 'not_found_error',
        code: 'not_found',
      });
    }
    let parameters: Record<string, unknown>;
    try {
      parameters = this.options.executor.prepare(agent, input).parameters;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const { message, type, code, param } = error.toBody().error;
      return fail({ message, type, code, ...(param === null ? {} : { param }) });
    }

    const tries = 1 + (stage.retries ?? 0);
    let lastError: ExecutionError | null = null;
    for (attempts = 1; attempts <= tries; attempts += 1) {
      const timeout = stage.timeout_ms === undefined ? null : AbortSignal.timeout(stage.timeout_ms);
      const signal = timeout === null ? runSignal : AbortSignal.any([runSignal, timeout]);
      try {
        const run = await this.options.executor.run(
          agent,
          input,
          parameters,
          execution.accountId,
          signal,
        );
        tokensUsed += run.tokensUsed;
        const mapped: Record<string, unknown> = {};
        for (const [name, text] of Object.entries(stage.output_mapping)) {
          const value = valueAt(run.result, parsePath(text).steps);
          if (value === undefined) {
            return fail({
              message: `output '${name}' resolves to nothing: ${text} (the agent's result has no '${parsePath(text).steps.join('.')}')`,
              type: 'invalid_request_error',
              code: 'unresolved_path',
              path: text,
            });
          }
          mapped[name] = value;
        }
        // Later stages see the agent's result and the mapped names (the mapped ones win).
        const output = { ...run.result, ...mapped };
        await repository.updateStage(recordId, {
          status: 'completed',
          attempts,
          input,
          output,
          tokensUsed,
          executionTimeMs: this.now() - started,
          completedAt: this.iso(),
        });
        this.notify(execution.id);
        return { output, tokensUsed };
      } catch (error) {
        if (!(error instanceof AgentRunError)) throw error;
        tokensUsed += error.tokensUsed;
        if (runSignal.aborted) {
          return fail({
            message: 'the run was stopped (the client went away or the service is shutting down)',
            type: 'api_error',
            code: 'interrupted',
          });
        }
        lastError =
          timeout?.aborted === true
            ? {
                message: `timed out after ${stage.timeout_ms ?? 0} ms`,
                type: 'upstream_error',
                code: 'upstream_timeout',
              }
            : error.error;
      }
    }
    attempts = tries;
    const detail = lastError ?? { message: 'failed', type: 'api_error', code: 'internal_error' };
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
