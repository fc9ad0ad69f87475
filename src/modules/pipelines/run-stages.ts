// A run's stages in order, then the run finished. Stages a stopped instance completed are read
// back from their records, not run again; one recorded failed ends the run as it would have. A
// failing stage stops the run: the execution fails naming the stage and the cause, and later
// stages are recorded skipped (by the execution service, when the run is finished).
import { AppError } from '../../errors/app-error.js';
import {
  executionError,
  executionErrorFrom,
  type ExecutionError,
} from '../../errors/execution-error.js';
import type { Execution } from '../executions/execution.js';
import { checkStageNames } from './pipeline-service.js';
import {
  isoNow,
  RunHandedOver,
  StageFailure,
  stageFailed,
  type PipelineRunResult,
  type PlannedStage,
  type RunContext,
  type StopReason,
} from './pipeline-run.js';
import { StageRun } from './stage-run.js';
import { traceOperation } from '../../telemetry/operation-spans.js';

/** A run to carry out: its execution and stages, what stops it, and when it started. */
export interface StagedRun {
  execution: Execution;
  pipelineId: string;
  stages: readonly PlannedStage[];
  signal: AbortSignal;
  stopReason: StopReason;
  /** When the run started (its execution time is counted from there). */
  started: number;
}

/** What the stages so far have produced. */
interface Tally {
  /** By stage name: a Map, so that no stage name is ever a property of an object. */
  outputs: Map<string, Record<string, unknown>>;
  tokensUsed: number;
  completed: number;
  last: Record<string, unknown>;
}

/**
 * Stages are checked at save time, but a run's plan is read back from the database: one saved
 * before a rule existed (or written there by other means) with a reserved or malformed name or
 * path (`parameters.__proto__.x`) must not run at all. The first such stage is recorded failed
 * with the same 400 it would get at save time, before any stage runs; null when all are sound.
 */
async function refuseStoredNames(
  context: RunContext,
  execution: Execution,
  stages: readonly PlannedStage[],
): Promise<ExecutionError | null> {
  for (const [index, { id, stage, previous }] of stages.entries()) {
    if (previous?.status === 'completed') continue;
    try {
      checkStageNames(stage, `stages[${index}]`);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const detail = executionErrorFrom(error);
      await context.executions.updateStage(execution.id, id, {
        status: 'failed',
        attempts: 0,
        error: detail,
        tokensUsed: 0,
        executionTimeMs: 0,
        completedAt: isoNow(context),
      });
      return stageFailed(stage, detail);
    }
  }
  return null;
}

/** Carries one stage forward: read back, or run now. The run's failure, or null to go on. */
async function advance(
  context: RunContext,
  run: StagedRun,
  { id, stage, previous }: PlannedStage,
  tally: Tally,
): Promise<ExecutionError | null> {
  // Done before (by this instance or one that stopped): its output is read back, not rerun.
  if (previous?.status === 'completed') {
    const output = previous.output ?? {};
    tally.tokensUsed += previous.tokensUsed;
    tally.outputs.set(stage.name, output);
    tally.last = output;
    tally.completed += 1;
    return null;
  }
  if (previous?.status === 'failed' || previous?.status === 'skipped') {
    // Recorded failed, the run not yet finished: it ends as it would have.
    tally.tokensUsed += previous.tokensUsed;
    return stageFailed(
      stage,
      previous.error ?? executionError('internal_error', 'the stage failed; see its record'),
    );
  }
  if (run.signal.aborted && run.stopReason === 'handover') throw new RunHandedOver();
  try {
    const stageRun = new StageRun(context, run.execution, id, stage);
    const result = await stageRun.run(tally.outputs, run.signal, run.stopReason);
    tally.tokensUsed += result.tokensUsed;
    tally.outputs.set(stage.name, result.output);
    tally.last = result.output;
    tally.completed += 1;
    return null;
  } catch (error) {
    if (error instanceof RunHandedOver || context.executor.isAwaitingApproval(error)) throw error;
    if (!(error instanceof StageFailure)) {
      context.logger.error(
        { err: error, execution_id: run.execution.id, pipeline_id: run.pipelineId },
        'pipeline stage failed unexpectedly',
      );
    }
    const detail =
      error instanceof StageFailure
        ? error.detail
        : executionError('internal_error', 'the stage failed unexpectedly; the failure was logged');
    tally.tokensUsed += error instanceof StageFailure ? error.tokensUsed : 0;
    return stageFailed(stage, detail);
  }
}

/**
 * Carries out the run's stages in order until one fails, then records how the run ended. Throws
 * RunHandedOver, leaving the run running, when this instance stops (`stopReason` handover).
 */
export function runStages(context: RunContext, run: StagedRun): Promise<PipelineRunResult> {
  return traceOperation(
    'invoke_workflow',
    run.pipelineId,
    {
      'platform.pipeline.id': run.pipelineId,
      'platform.execution.id': run.execution.id,
      'platform.account.id': run.execution.accountId,
    },
    () => runTracedStages(context, run),
    (result) => ({
      attributes: {
        'platform.execution.status': result.execution.status,
        'platform.pipeline.stages_completed': result.stagesCompleted,
      },
      errorType: result.execution.status === 'failed' ? 'run_failed' : null,
    }),
  );
}

async function runTracedStages(context: RunContext, run: StagedRun): Promise<PipelineRunResult> {
  const tally: Tally = { outputs: new Map(), tokensUsed: 0, completed: 0, last: {} };
  let failure = await refuseStoredNames(context, run.execution, run.stages);
  for (const planned of failure === null ? run.stages : []) {
    try {
      failure = await advance(context, run, planned, tally);
    } catch (error) {
      if (!context.executor.isAwaitingApproval(error)) throw error;
      // A stage's agent waits for a person: the run pauses with its plan, for any instance to
      // continue once decided (completed stages are read back then, not rerun).
      await context.executions.pause(
        run.execution.id,
        { pipelineId: run.pipelineId, stages: run.stages.map((stage) => stage.stage) },
        planned.id,
        context.now() - run.started,
      );
      context.onPaused?.(run.execution.id, run.execution.accountId);
      return {
        execution: { ...run.execution, status: 'waiting_for_approval' },
        stagesCompleted: tally.completed,
      };
    }
    if (failure !== null) break;
  }
  const finished = await context.executions.finish(run.execution, {
    status: failure === null ? 'completed' : 'failed',
    output: failure === null ? tally.last : null,
    error: failure,
    tokensUsed: tally.tokensUsed,
    executionTimeMs: context.now() - run.started,
  });
  return { execution: finished, stagesCompleted: tally.completed };
}
