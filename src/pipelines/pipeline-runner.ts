// Executes pipelines: each stage's inputs are resolved from the run's inputs and earlier stages'
// outputs, its agent runs through the same code path as an agent execution (with the stage's
// timeout and retries), and its outputs are mapped — every step recorded through the execution
// service, whose change feed tells followers. A failing stage stops the run: the execution fails
// naming the stage and the cause, and later stages are recorded skipped.
//
// Asynchronous runs go through the job queue with their plan (the stages as they were at the
// start) stored on the execution, so any instance can take a run up: stages already completed are
// read back from their records, not run again, and the stage that was interrupted runs again.
import type { Logger } from 'pino';
import { AgentRunError, type AgentExecutor } from '../modules/agents/agent-executor.js';
import type { AgentService } from '../modules/agents/agent-service.js';
import { AppError, InvalidParameterError, NotFoundError } from '../errors/app-error.js';
import type { ExecutionService } from '../executions/execution-service.js';
import {
  executionError,
  executionErrorFrom,
  type Execution,
  type ExecutionError,
  type StageRecord,
} from '../executions/execution.js';
import type { JobQueue, JobResult, RunJob } from '../jobs/job-queue.js';
import type { PipelineStage } from './pipeline.js';
import { checkStageNames, type PipelineService } from './pipeline-service.js';
import { assertSafeTopLevelKeys, defineOwn } from '../validation/safe-keys.js';
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
  /** Carries asynchronous runs (to this instance or another). */
  queue: JobQueue;
  logger: Logger;
  now?: () => number;
}

/** What a queued run keeps on its execution: the stages as they were when it started. */
interface RunPlan {
  pipelineId: string;
  stages: PipelineStage[];
}

function isRunPlan(
  value: Record<string, unknown> | null,
): value is Record<string, unknown> & RunPlan {
  return value !== null && typeof value.pipelineId === 'string' && Array.isArray(value.stages);
}

/** The instance is stopping: the run is left running, for another instance to continue. */
class RunHandedOver extends Error {
  constructor() {
    super('the run was handed over to another instance');
  }
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

/**
 * What stopping a run from outside means: `client`, the client of a synchronous run went away (the
 * stage is recorded failed, aborted); `handover`, this instance is stopping (nothing is recorded:
 * the run stays running and the queue gives it to another instance).
 */
type StopReason = 'client' | 'handover';

/** One stage of a run: its record's id, its definition and, when resuming, its record as it is. */
interface PlannedStage {
  id: string;
  stage: PipelineStage;
  previous?: StageRecord;
}

export class PipelineRunner {
  private readonly now: () => number;

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
    // Input names are the client's (`$.input.<name>`); their values are data.
    assertSafeTopLevelKeys(inputs);
    const pipeline = await this.options.pipelines.get(accountId, pipelineId);
    if (pipeline.stages.length === 0) {
      throw new InvalidParameterError('stages', `Pipeline '${pipelineId}' has no stages to run.`);
    }
    const plan: RunPlan | null = options.detach
      ? { pipelineId: pipeline.id, stages: pipeline.stages }
      : null;
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
      plan === null ? null : { ...plan },
    );
    const records = stages.map((record, index) => ({
      id: record.id,
      stage: pipeline.stages[index]!,
    }));
    if (!options.detach) {
      return this.run(execution, pipeline.id, records, options.signal, 'client', this.now());
    }
    try {
      await this.options.queue.enqueue({ executionId: execution.id, accountId });
    } catch (error) {
      // Not queued, nobody would ever run it: recorded failed, and the client told.
      await this.options.executions.finish(execution, {
        status: 'failed',
        output: null,
        error: executionError('internal_error', 'the run could not be queued; try again'),
        tokensUsed: 0,
        executionTimeMs: 0,
      });
      throw error;
    }
    return { execution, stagesCompleted: 0 };
  }

  /**
   * The job queue's handler: carries out (or continues) a queued run from its records. A run
   * already finished is left alone; completed stages keep their outputs; the rest run here.
   */
  async resume(job: RunJob, signal: AbortSignal): Promise<JobResult> {
    const { executions } = this.options;
    let detail;
    try {
      detail = await executions.get(job.accountId, job.executionId);
    } catch (error) {
      if (error instanceof NotFoundError) return 'done';
      throw error;
    }
    const { execution } = detail;
    if (execution.status !== 'running') return 'done';
    const plan = await executions.runPlanOf(execution.id);
    if (!isRunPlan(plan) || plan.stages.length !== detail.stages.length) {
      await executions.finish(execution, {
        status: 'failed',
        output: null,
        error: executionError('internal_error', 'the run has no plan to continue from'),
        tokensUsed: 0,
        executionTimeMs: this.now() - Date.parse(execution.createdAt),
      });
      return 'done';
    }
    // From now on this instance's heartbeat vouches for the run.
    await executions.claim(execution.id);
    const records = detail.stages.map((record) => ({
      id: record.id,
      stage: plan.stages[record.position]!,
      previous: record,
    }));
    try {
      await this.run(
        execution,
        plan.pipelineId,
        records,
        signal,
        'handover',
        Date.parse(execution.createdAt),
      );
      return 'done';
    } catch (error) {
      if (error instanceof RunHandedOver) return 'handed-over';
      throw error;
    }
  }

  private async run(
    execution: Execution,
    pipelineId: string,
    records: readonly PlannedStage[],
    signal: AbortSignal,
    stopReason: StopReason,
    started: number,
  ): Promise<PipelineRunResult> {
    // By stage name: a Map, so that no stage name is ever a property of an object.
    const outputs = new Map<string, Record<string, unknown>>();
    let tokensUsed = 0;
    let completed = 0;
    let last: Record<string, unknown> = {};
    let failure: ExecutionError | null = await this.refuseStoredNames(execution, records);
    for (const { id, stage, previous } of failure === null ? records : []) {
      // Done before (by this instance or one that stopped): its output is read back, not rerun.
      if (previous?.status === 'completed') {
        const output = previous.output ?? {};
        tokensUsed += previous.tokensUsed;
        outputs.set(stage.name, output);
        last = output;
        completed += 1;
        continue;
      }
      if (previous?.status === 'failed' || previous?.status === 'skipped') {
        // Recorded failed, the run not yet finished: it ends as it would have.
        tokensUsed += previous.tokensUsed;
        const detail =
          previous.error ?? executionError('internal_error', 'the stage failed; see its record');
        failure = {
          ...detail,
          message: `stage '${stage.name}' failed: ${detail.message}`,
          stage: stage.name,
        };
        break;
      }
      if (signal.aborted && stopReason === 'handover') throw new RunHandedOver();
      try {
        const result = await this.runStage(execution, id, stage, outputs, signal, stopReason);
        tokensUsed += result.tokensUsed;
        outputs.set(stage.name, result.output);
        last = result.output;
        completed += 1;
      } catch (error) {
        if (error instanceof RunHandedOver) throw error;
        if (!(error instanceof StageFailure)) {
          this.options.logger.error(
            { err: error, execution_id: execution.id, pipeline_id: pipelineId },
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

  /**
   * Stages are checked at save time, but a run's plan is read back from the database: one saved
   * before a rule existed (or written there by other means) with a reserved or malformed name or
   * path (`parameters.__proto__.x`) must not run at all. The first such stage is recorded failed
   * with the same 400 it would get at save time, before any stage runs; null when all are sound.
   */
  private async refuseStoredNames(
    execution: Execution,
    records: readonly PlannedStage[],
  ): Promise<ExecutionError | null> {
    for (const [index, { id, stage, previous }] of records.entries()) {
      if (previous?.status === 'completed') continue;
      try {
        checkStageNames(stage, `stages[${index}]`);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        const detail = executionErrorFrom(error);
        await this.options.executions.updateStage(execution.id, id, {
          status: 'failed',
          attempts: 0,
          error: detail,
          tokensUsed: 0,
          executionTimeMs: 0,
          completedAt: this.iso(),
        });
        return {
          ...detail,
          message: `stage '${stage.name}' failed: ${detail.message}`,
          stage: stage.name,
        };
      }
    }
    return null;
  }

  private async runStage(
    execution: Execution,
    recordId: string,
    stage: PipelineStage,
    outputs: ReadonlyMap<string, Record<string, unknown>>,
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
      const source =
        path.root === 'input' ? execution.input : (outputs.get(path.stage ?? '') ?? {});
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
      parameters = (await this.options.executor.prepare(agent, agentInput, model)).parameters;
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
          defineOwn(mapped, name, value);
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
          if (stopReason === 'handover') throw new RunHandedOver();
          return fail(
            executionError('aborted', 'the run was stopped: the client closed the request'),
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

  /** Takes queued runs from the job queue (call once, when the instance starts serving). */
  startWorking(): Promise<void> {
    return this.options.queue.start((job, signal) => this.resume(job, signal));
  }

  /**
   * Stops taking queued runs; the ones running here are handed over (left running, for another
   * instance or this one's next start), not recorded failed.
   */
  close(): Promise<void> {
    return this.options.queue.close();
  }
}
