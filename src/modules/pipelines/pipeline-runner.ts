// Executes pipelines: a run is started here (recorded, then carried to its end or queued), and
// queued runs are taken from the job queue and continued; run-stages.ts carries out the stages.
//
// Asynchronous runs go through the job queue with their plan (the stages as they were at the
// start) stored on the execution, so any instance can take a run up: stages already completed are
// read back from their records, not run again, and the stage that was interrupted runs again.
import type { Logger } from 'pino';
import type { AgentExecutor, AgentRunError } from '../agents/agent-executor.js';
import type { AgentService } from '../agents/agent-service.js';
import { InvalidParameterError, NotFoundError } from '../../errors/app-error.js';
import type { ExecutionService } from '../executions/execution-service.js';
import { executionError } from '../../errors/execution-error.js';
import type { Execution } from '../executions/execution.js';
import type { JobQueue, JobResult, RunJob } from '../../jobs/job-queue.js';
import type { PipelineService } from './pipeline-service.js';
import { assertSafeTopLevelKeys } from '../../validation/safe-keys.js';
import {
  isRunPlan,
  RunHandedOver,
  type PipelineRunResult,
  type RunContext,
  type RunPlan,
} from './pipeline-run.js';
import { runStages } from './run-stages.js';
import type { PipelineStage } from './pipeline.js';
import { refuseMisfitRunInputs } from './stage-input-kinds.js';
import type { AgentInputMismatch } from '../agents/agent-input.js';

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
  /** A failed run of an agent (its error and its cost), as opposed to a fault of the service. */
  isRunFailure(error: unknown): error is AgentRunError;
  /** Carries asynchronous runs (to this instance or another). */
  queue: JobQueue;
  logger: Logger;
  now?: () => number;
  /** Told when a run pauses for a person's approval. */
  onPaused?: (executionId: string, accountId: string) => void;
}

export class PipelineRunner {
  private readonly context: RunContext;

  constructor(private readonly options: PipelineRunnerOptions) {
    this.context = {
      executions: options.executions,
      agents: options.agents,
      executor: options.executor,
      isRunFailure: (error) => options.isRunFailure(error),
      logger: options.logger,
      now: options.now ?? Date.now,
      ...(options.onPaused === undefined ? {} : { onPaused: options.onPaused }),
    };
  }

  /**
   * Starts a run: records the execution and its pending stages (a `conversationId` of another
   * account or user is a 404, nothing recorded; so is an input of a kind a stage's agent does not
   * take, a 400), then either runs it to the end or in the background (returning at once).
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
    await refuseMisfitRunInputs(pipeline.stages, inputs, (stage, input) =>
      this.inputMismatch(accountId, stage, input),
    );
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
    if (options.detach) return this.enqueue(execution);
    return runStages(this.context, {
      execution,
      pipelineId: pipeline.id,
      stages: stages.map((record, index) => ({ id: record.id, stage: pipeline.stages[index]! })),
      signal: options.signal,
      stopReason: 'client',
      started: this.context.now(),
    });
  }

  /**
   * A stage input of a kind its agent does not take (AgentExecutor's check). `data` is checked
   * by the agent's type, so only then is the agent read; a deleted one is left to the stage, which
   * fails naming it.
   */
  private async inputMismatch(
    accountId: string,
    stage: PipelineStage,
    input: Record<string, unknown>,
  ): Promise<AgentInputMismatch | null> {
    const { executor, agents } = this.options;
    if (!Object.hasOwn(input, 'data')) return executor.inputMismatch(null, input);
    try {
      return executor.inputMismatch(await agents.get(accountId, stage.agent_id), input);
    } catch (error) {
      if (error instanceof NotFoundError) return null;
      throw error;
    }
  }

  /** Hands a detached run to the job queue; one it cannot take is recorded failed. */
  private async enqueue(execution: Execution): Promise<PipelineRunResult> {
    try {
      await this.options.queue.enqueue({
        executionId: execution.id,
        accountId: execution.accountId,
      });
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
    if (execution.kind === 'agent') {
      // An agent run continued after a person's decision (or after its instance stopped).
      await executions.claim(execution.id);
      return this.options.executor.resume(execution, signal);
    }
    const plan = await executions.runPlanOf(execution.id);
    if (!isRunPlan(plan) || plan.stages.length !== detail.stages.length) {
      await executions.finish(execution, {
        status: 'failed',
        output: null,
        error: executionError('internal_error', 'the run has no plan to continue from'),
        tokensUsed: 0,
        executionTimeMs: this.context.now() - Date.parse(execution.createdAt),
      });
      return 'done';
    }
    // From now on this instance's heartbeat vouches for the run.
    await executions.claim(execution.id);
    try {
      await runStages(this.context, {
        execution,
        pipelineId: plan.pipelineId,
        stages: detail.stages.map((record) => ({
          id: record.id,
          stage: plan.stages[record.position]!,
          previous: record,
        })),
        signal,
        stopReason: 'handover',
        started: this.options.executions.workStart(execution, this.context.now()),
      });
      return 'done';
    } catch (error) {
      if (error instanceof RunHandedOver) return 'handed-over';
      throw error;
    }
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
