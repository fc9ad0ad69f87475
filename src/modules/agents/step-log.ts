// The steps of a tool-calling agent recorded on its execution: what the execution detail and its
// events show, and what a paused or interrupted run is continued from.
import type { ExecutionService } from '../executions/execution-service.js';
import type { StepRecord } from '../executions/execution.js';
import type { StepLog } from './agent-type.js';

/**
 * The log of one agent's steps in execution `executionId` (of the stage record `stageRecordId`,
 * or the agent execution's own when null); `recorded` is every step the execution has so far.
 */
export function executionStepLog(
  executions: ExecutionService,
  executionId: string,
  stageRecordId: string | null,
  recorded: readonly StepRecord[],
  approvalTimeoutMs: number,
): StepLog {
  // Positions are the execution's: after every step recorded so far, whichever agent took it.
  let position = recorded.reduce((last, step) => Math.max(last, step.position), 0);
  return {
    previous: recorded.filter((step) => step.stageRecordId === stageRecordId),
    canPause: true,
    approvalTimeoutMs,
    add(step) {
      position += 1;
      return executions.addStep(executionId, position, { ...step, stageRecordId });
    },
    update(step, update, from) {
      return executions.updateStep(executionId, step.id, update, from);
    },
  };
}

/** The steps of a run kept in memory: a nested run (an agent called as a tool) cannot pause. */
export function memoryStepLog(executions: Pick<ExecutionService, 'draftStep'>): StepLog {
  let position = 0;
  return {
    previous: [],
    canPause: false,
    approvalTimeoutMs: 0,
    add(step) {
      position += 1;
      return Promise.resolve(
        executions.draftStep(`step_${position}`, position, { ...step, stageRecordId: null }),
      );
    },
    update: () => Promise.resolve(true),
  };
}
