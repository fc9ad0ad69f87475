// A person's decisions on tool calls that wait for approval: approving (with the arguments as
// proposed, or edited) sets the run running again and hands it to the job queue, so whichever
// instance takes it up continues it from its records; rejecting ends it with the reason. A call
// not decided by its deadline ends its run too — watched by a timer on the instance that paused
// it, and swept by every instance's heartbeat (so a restart loses no deadline).
import type { Logger } from 'pino';
import { ConflictError, NotFoundError } from '../../errors/app-error.js';
import type { JobQueue } from '../../jobs/job-queue.js';
import type { ExecutionService } from './execution-service.js';
import type { ToolArguments } from '../tools/tool-arguments.js';
import {
  awaitingDecision,
  executionError,
  type ExecutionDetail,
  type StepRecord,
} from './execution.js';

export type Decision =
  | { approve: true; stepId?: string | undefined; arguments?: Record<string, unknown> | undefined }
  | { approve: false; stepId?: string | undefined; reason?: string | undefined };

export interface ApprovalServiceOptions {
  executions: ExecutionService;
  queue: JobQueue;
  logger: Logger;
  /** Edited arguments meet the checks the model's met (the tools module's). */
  arguments: Pick<ToolArguments, 'approvalProblem'>;
  now?: () => number;
}

export class ApprovalService {
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private nextDeadline = Infinity;
  private closed = false;

  constructor(private readonly options: ApprovalServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Decides one waiting call of the account's execution (`stepId`, or the first waiting): 404 for
   * an execution or call it cannot see, 409 when the run is not waiting or the call was decided,
   * 400 naming the field when edited arguments do not fit the tool's input schema (the call still
   * waits). A call `interrupted` by a stopped instance is decided the same way: approved, it runs
   * again.
   */
  async decide(
    accountId: string,
    executionId: string,
    decision: Decision,
    apiKeyId: string | null,
  ): Promise<ExecutionDetail> {
    const { executions } = this.options;
    const detail = await executions.get(accountId, executionId);
    const { execution } = detail;
    if (execution.status !== 'waiting_for_approval') {
      throw new ConflictError(
        `Execution '${executionId}' is not waiting for approval (its status is ${execution.status}).`,
      );
    }
    const waiting = detail.steps.filter((step) => awaitingDecision.includes(step.status));
    const step =
      decision.stepId === undefined
        ? waiting[0]
        : detail.steps.find((candidate) => candidate.id === decision.stepId);
    if (step === undefined) {
      if (decision.stepId !== undefined) throw new NotFoundError('Step', decision.stepId);
      throw new ConflictError(`Execution '${executionId}' has no call waiting for approval.`);
    }
    if (!awaitingDecision.includes(step.status)) {
      throw new ConflictError(`The call '${step.id}' was already decided (${step.status}).`);
    }
    const decidedAt = new Date(this.now()).toISOString();
    if (decision.approve) {
      const edited = decision.arguments !== undefined;
      if (decision.arguments !== undefined) this.checkArguments(step, decision.arguments);
      const changed = await executions.updateStep(
        execution.id,
        step.id,
        {
          status: 'approved',
          arguments: decision.arguments ?? step.arguments,
          decision: { decision: 'approved', reason: null, edited, apiKeyId, decidedAt },
        },
        awaitingDecision,
      );
      if (!changed) throw new ConflictError(`The call '${step.id}' was already decided.`);
      const othersWaiting = waiting.some((other) => other.id !== step.id);
      // The run goes on once every call of its turn is decided: here or on another instance.
      if (!othersWaiting && (await executions.reopen(execution.id))) {
        await this.options.queue.enqueue({ executionId: execution.id, accountId });
      }
    } else {
      const reason = decision.reason ?? null;
      const changed = await executions.updateStep(
        execution.id,
        step.id,
        {
          status: 'rejected',
          decision: { decision: 'rejected', reason, edited: false, apiKeyId, decidedAt },
          completedAt: decidedAt,
        },
        awaitingDecision,
      );
      if (!changed) throw new ConflictError(`The call '${step.id}' was already decided.`);
      await this.end(
        detail,
        executionError(
          'approval_rejected',
          `The call of '${step.name}' was rejected${reason === null ? '' : `: ${reason}`}.`,
          { step_id: step.id, ...(reason === null ? {} : { reason }) },
        ),
      );
    }
    return executions.get(accountId, executionId);
  }

  /**
   * Edited arguments meet what the model's met: the byte limit and the tool's input schema (kept
   * on the waiting step). A 400 naming the field; nothing is changed.
   */
  private checkArguments(step: StepRecord, args: Record<string, unknown>): void {
    const problem = this.options.arguments.approvalProblem(step.toolSchema, args);
    if (problem !== null) throw problem;
  }

  /** Ends the paused run as failed with `error` (its tokens and time so far counted). */
  private async end(detail: ExecutionDetail, error: ReturnType<typeof executionError>) {
    const { execution, steps } = detail;
    await this.options.executions.finish(execution, {
      status: 'failed',
      output: null,
      error,
      tokensUsed: steps.reduce((sum, step: StepRecord) => sum + step.tokensUsed, 0),
      // The time it worked until it paused: the wait for a decision is not counted.
      executionTimeMs: execution.executionTimeMs ?? this.now() - Date.parse(execution.createdAt),
    });
  }

  /** Ends every paused run whose waiting call's deadline has passed; answers how many. */
  async expire(): Promise<number> {
    const { executions } = this.options;
    const expired = await executions.expiredApprovals();
    for (const run of expired) {
      const detail = await executions.get(run.accountId, run.id);
      if (detail.execution.status !== 'waiting_for_approval') continue;
      const decidedAt = new Date(this.now()).toISOString();
      const late = detail.steps.filter((step) => awaitingDecision.includes(step.status));
      for (const step of late) {
        await executions.updateStep(
          run.id,
          step.id,
          {
            status: 'rejected',
            decision: {
              decision: 'rejected',
              reason: 'no decision before the deadline',
              edited: false,
              apiKeyId: null,
              decidedAt,
            },
            completedAt: decidedAt,
          },
          awaitingDecision,
        );
      }
      await this.end(
        detail,
        executionError(
          'approval_timeout',
          `No one approved or rejected the call of '${late[0]?.name ?? 'a tool'}' before its deadline (${late[0]?.expiresAt ?? ''}).`,
        ),
      );
    }
    if (expired.length > 0) {
      this.options.logger.info(
        { executions: expired.map((run) => run.id) },
        'ended runs whose tool calls were not approved in time',
      );
    }
    return expired.length;
  }

  /** Watches a paused run's deadline from this instance (the heartbeat's sweep covers restarts). */
  watch(expiresAt: string | null): void {
    if (expiresAt === null || this.closed) return;
    const deadline = Date.parse(expiresAt);
    if (!(deadline < this.nextDeadline)) return;
    this.nextDeadline = deadline;
    clearTimeout(this.timer);
    // Past the deadline by a little, so that the database's clock comparison sees it passed.
    const delay = Math.min(Math.max(0, deadline - this.now()) + 50, 2 ** 31 - 1);
    this.timer = setTimeout(() => {
      this.nextDeadline = Infinity;
      this.expire().catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'ending runs not approved in time failed'),
      );
    }, delay);
    this.timer.unref();
  }

  /**
   * The deadline of the run's waiting calls, once paused: watched from here. A failure to read
   * them is logged (the heartbeat's sweep still ends the run on time).
   */
  paused(executionId: string, accountId: string): void {
    this.options.executions.get(accountId, executionId).then(
      (detail) => {
        for (const step of detail.steps) {
          if (awaitingDecision.includes(step.status)) this.watch(step.expiresAt);
        }
      },
      (error: unknown) =>
        this.options.logger.warn(
          { err: error, execution_id: executionId },
          'watching an approval deadline',
        ),
    );
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
