// A pipeline run as the runner carries it: what it needs, the plan a queued run keeps on its
// execution, its stages, how it may be stopped from outside, and how a stage's failure is told.
import type { Logger } from 'pino';
import type { AgentExecutor, AgentRunError } from '../agents/agent-executor.js';
import type { AgentService } from '../agents/agent-service.js';
import type { ExecutionService } from '../executions/execution-service.js';
import type { Execution, ExecutionError, StageRecord } from '../executions/execution.js';
import type { PipelineStage } from './pipeline.js';

export interface PipelineRunResult {
  execution: Execution;
  stagesCompleted: number;
}

/** What carrying out a run needs: its records, the agents its stages run, and the clock. */
export interface RunContext {
  readonly executions: ExecutionService;
  readonly agents: AgentService;
  readonly executor: AgentExecutor;
  /** A failed run of an agent (its error and its cost), as opposed to a fault of the service. */
  isRunFailure(error: unknown): error is AgentRunError;
  readonly logger: Logger;
  readonly now: () => number;
  /** Told when a run pauses for a person's approval (its deadline is watched from there). */
  onPaused?: (executionId: string, accountId: string) => void;
}

/** What a queued run keeps on its execution: the stages as they were when it started. */
export interface RunPlan {
  pipelineId: string;
  stages: PipelineStage[];
}

export function isRunPlan(
  value: Record<string, unknown> | null,
): value is Record<string, unknown> & RunPlan {
  return value !== null && typeof value.pipelineId === 'string' && Array.isArray(value.stages);
}

/** One stage of a run: its record's id, its definition and, when resuming, its record as it is. */
export interface PlannedStage {
  id: string;
  stage: PipelineStage;
  previous?: StageRecord;
}

/**
 * What stopping a run from outside means: `client`, the client of a synchronous run went away (the
 * stage is recorded failed, aborted); `handover`, this instance is stopping (nothing is recorded:
 * the run stays running and the queue gives it to another instance).
 */
export type StopReason = 'client' | 'handover';

/** The instance is stopping: the run is left running, for another instance to continue. */
export class RunHandedOver extends Error {
  constructor() {
    super('the run was handed over to another instance');
  }
}

/** A stage failed; `message` is the cause (the execution's error adds the stage name). */
export class StageFailure extends Error {
  constructor(
    readonly detail: ExecutionError,
    readonly tokensUsed: number,
  ) {
    super(detail.message);
  }
}

/** The run's error for a stage that failed with `detail`: it names the stage. */
export function stageFailed(stage: PipelineStage, detail: ExecutionError): ExecutionError {
  return {
    ...detail,
    message: `stage '${stage.name}' failed: ${detail.message}`,
    stage: stage.name,
  };
}

/** The context's time, as records store it. */
export function isoNow(context: Pick<RunContext, 'now'>): string {
  return new Date(context.now()).toISOString();
}
