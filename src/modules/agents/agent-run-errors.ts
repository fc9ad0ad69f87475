// How an agent run ends other than with its result: failed (with what it had cost), or left
// running for another instance.
import type { ExecutionError } from '../executions/execution.js';

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

/** A continued run stopped because this instance stops: it is left for another instance. */
export class RunLeftRunning extends Error {
  constructor() {
    super('the run was left running for another instance');
  }
}
