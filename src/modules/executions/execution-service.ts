// Execution records, for agent runs and pipeline runs alike: started, their stages moved, finished
// once — each change written, then announced on the change feed — read back, listed, and followed
// as a stream of events derived from the records.
import { NotFoundError } from '../../errors/app-error.js';
import { newId } from '../../ids.js';
import type { ExecutionsRepository } from './executions.repository.js';
import type { ExecutionStepsRepository } from './execution-steps.repository.js';
import type { ExecutionChangeFeed } from './change-feed.js';
import {
  awaitingDecision,
  executionError,
  stepRecordOf,
  workStart,
  type Execution,
  type ExecutionDetail,
  type ExecutionEvent,
  type ExecutionOutcome,
  type NewExecution,
  type NewStep,
  type StagePlan,
  type StageRecord,
  type StageUpdate,
  type StepRecord,
  type StepUpdate,
} from './execution.js';

/** Finds a conversation of the account (and of the user, when one is given) or throws NotFoundError. */
export interface ConversationLookup {
  get(accountId: string, id: string, userId?: string | null): Promise<unknown>;
}

export interface ExecutionServiceOptions {
  repository: ExecutionsRepository;
  /** The steps of tool-calling agents. */
  steps: ExecutionStepsRepository;
  feed: ExecutionChangeFeed;
  conversations: ConversationLookup;
  /** Recorded on executions, to recover runs a stopped instance left running. */
  instanceId: string;
  now?: () => number;
}

export const interruptedError = executionError(
  'interrupted',
  'interrupted: the service instance running this execution stopped before it finished',
);

const finishedStage = new Set<StageRecord['status']>(['completed', 'failed', 'skipped']);

export class ExecutionService {
  private readonly now: () => number;

  constructor(private readonly options: ExecutionServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  /** Where changes are announced: this process only, or every instance (see change-feed.ts). */
  get feedReach() {
    return this.options.feed.reach;
  }

  /**
   * Records a run as running, with one pending record per planned stage. A `conversationId` must
   * name a conversation of the account (and of `userId`, when given): otherwise 404, nothing recorded.
   */
  async start(
    spec: NewExecution,
    stages: readonly StagePlan[] = [],
    /** For a run carried by the job queue: what any instance needs to continue it. */
    runPlan: Record<string, unknown> | null = null,
  ): Promise<{ execution: Execution; stages: Array<{ id: string; plan: StagePlan }> }> {
    const conversationId = spec.conversationId ?? null;
    const userId = spec.userId ?? null;
    if (conversationId !== null) {
      await this.options.conversations.get(spec.accountId, conversationId, userId);
    }
    const execution: Execution = {
      id: newId('exec'),
      accountId: spec.accountId,
      kind: spec.kind,
      agentId: spec.agentId ?? null,
      pipelineId: spec.pipelineId ?? null,
      conversationId,
      userId,
      status: 'running',
      input: spec.input,
      output: null,
      error: null,
      tokensUsed: 0,
      executionTimeMs: null,
      createdAt: this.iso(),
      completedAt: null,
      apiKeyId: spec.apiKeyId ?? null,
    };
    const records = stages.map((plan) => ({ id: newId('stage'), plan }));
    await this.options.repository.insert(execution, this.options.instanceId, records, runPlan);
    this.options.feed.changed(execution.id);
    return { execution, stages: records };
  }

  async updateStage(
    executionId: string,
    stageRecordId: string,
    update: StageUpdate,
  ): Promise<void> {
    await this.options.repository.updateStage(stageRecordId, update);
    this.options.feed.changed(executionId);
  }

  /** Records how the run ended (a failed run's unfinished stages become skipped); once only. */
  async finish(execution: Execution, outcome: ExecutionOutcome): Promise<Execution> {
    const completedAt = this.iso();
    await this.options.repository.finish(execution.id, { ...outcome, completedAt });
    this.options.feed.changed(execution.id);
    return { ...execution, ...outcome, completedAt };
  }

  async get(accountId: string, id: string): Promise<ExecutionDetail> {
    const execution = await this.options.repository.find(accountId, id);
    if (execution === undefined) throw new NotFoundError('Execution', id);
    const stages =
      execution.kind === 'pipeline' ? await this.options.repository.stagesOf(execution.id) : [];
    const steps = await this.options.steps.stepsOf(execution.id);
    return { execution, stages, steps };
  }

  /** A window of the account's execution's steps (404 for an execution it cannot see). */
  async stepsPage(
    accountId: string,
    id: string,
    page: { limit: number; offset: number },
  ): Promise<{ steps: StepRecord[]; total: number }> {
    const execution = await this.options.repository.find(accountId, id);
    if (execution === undefined) throw new NotFoundError('Execution', id);
    return this.options.steps.stepsPage(execution.id, page);
  }

  /** One step of the account's execution, whole (404 for either it cannot see). */
  async step(accountId: string, id: string, stepId: string): Promise<StepRecord> {
    const execution = await this.options.repository.find(accountId, id);
    if (execution === undefined) throw new NotFoundError('Execution', id);
    const step = await this.options.steps.step(execution.id, stepId);
    if (step === undefined) throw new NotFoundError('Step', stepId);
    return step;
  }

  /** A step's record as `addStep` would make it, kept in memory (a nested run's, never stored). */
  draftStep(id: string, position: number, step: NewStep): StepRecord {
    return stepRecordOf(id, '', position, step);
  }

  /** Records a step of a tool-calling agent, after the run's last (positions are the run's). */
  async addStep(executionId: string, position: number, step: NewStep): Promise<StepRecord> {
    const record = stepRecordOf(newId('step'), executionId, position, step);
    await this.options.steps.insertStep(record);
    this.options.feed.changed(executionId);
    return record;
  }

  /** Changes a step (with `from`: only from those statuses); answers whether it changed. */
  async updateStep(
    executionId: string,
    stepId: string,
    update: StepUpdate,
    from?: readonly StepRecord['status'][],
  ): Promise<boolean> {
    const changed = await this.options.steps.updateStep(stepId, update, from);
    if (changed) this.options.feed.changed(executionId);
    return changed;
  }

  /** The steps of a run (all its agents'), in order. */
  stepsOf(executionId: string): Promise<StepRecord[]> {
    return this.options.steps.stepsOf(executionId);
  }

  /**
   * Pauses a running run until a person decides on a call: `runPlan` is what any instance needs
   * to continue it, `workedMs` the time it worked until now (its execution time goes on from there
   * when it continues: the wait is not counted). Answers whether it was running.
   */
  async pause(
    executionId: string,
    runPlan: Record<string, unknown>,
    stageRecordId: string | null,
    workedMs: number,
  ): Promise<boolean> {
    const paused = await this.options.repository.pause(
      executionId,
      runPlan,
      stageRecordId,
      workedMs,
    );
    this.options.feed.changed(executionId);
    return paused;
  }

  /**
   * Where a run's execution time counts from in this sitting (`now` being its start): its
   * creation, or for a run that paused for a decision, as far back as it had worked.
   */
  workStart(execution: Pick<Execution, 'createdAt' | 'executionTimeMs'>, now: number): number {
    return workStart(execution, now);
  }

  /** Sets a paused run running again, on this instance; answers whether it was paused. */
  async reopen(executionId: string): Promise<boolean> {
    const reopened = await this.options.repository.reopen(executionId, this.options.instanceId);
    if (reopened) this.options.feed.changed(executionId);
    return reopened;
  }

  /** Paused runs with a call whose approval deadline has passed. */
  expiredApprovals(): Promise<Array<{ id: string; accountId: string }>> {
    return this.options.steps.expiredApprovals(this.iso(), awaitingDecision);
  }

  listForPipeline(accountId: string, pipelineId: string, page: { limit: number; offset: number }) {
    return this.options.repository.listForPipeline(accountId, pipelineId, page);
  }

  /** The plan stored with a queued run (null for a run tied to its request). */
  runPlanOf(id: string): Promise<Record<string, unknown> | null> {
    return this.options.repository.runPlanOf(id);
  }

  /** Records this instance as the one running execution `id` (its heartbeat now vouches for it). */
  async claim(id: string): Promise<void> {
    await this.options.repository.claim(id, this.options.instanceId);
  }

  /**
   * Queued runs whose instance stopped beating before `aliveSince`, each claimed for this
   * instance (when several instances try, each run goes to exactly one): to be queued again.
   */
  async claimOrphanedRuns(aliveSince: string): Promise<Array<{ id: string; accountId: string }>> {
    const claimed: Array<{ id: string; accountId: string }> = [];
    for (const run of await this.options.repository.orphanedRuns(aliveSince)) {
      if (await this.options.repository.claim(run.id, this.options.instanceId, aliveSince)) {
        claimed.push(run);
      }
    }
    return claimed;
  }

  /** Fails runs tied to their request whose instance stopped beating before `aliveSince`; announces each; how many. */
  async failOrphaned(aliveSince: string): Promise<string[]> {
    const ids = await this.options.repository.failOrphaned(
      aliveSince,
      interruptedError,
      this.iso(),
    );
    for (const id of ids) this.options.feed.changed(id);
    return ids;
  }

  /**
   * The events of an execution (404 first when the account cannot see it): what already happened
   * at once, then each change as it is announced, until `execution-end` or `signal` aborts. The
   * follower reads the records when woken, and only then: no polling.
   */
  async follow(
    accountId: string,
    id: string,
    signal: AbortSignal,
  ): Promise<AsyncIterable<ExecutionEvent>> {
    const state = { dirty: false, wakeUp: null as (() => void) | null };
    const wake = () => {
      state.dirty = true;
      state.wakeUp?.();
    };
    // Watching starts before the first read, so a change between the two is not missed.
    const unwatch = this.options.feed.watch(id, wake);
    const stop = () => {
      unwatch();
      state.wakeUp?.();
    };
    signal.addEventListener('abort', stop, { once: true });
    let first: ExecutionDetail;
    try {
      first = await this.get(accountId, id);
    } catch (error) {
      signal.removeEventListener('abort', stop);
      unwatch();
      throw error;
    }
    const read = () => this.get(accountId, id);
    return (async function* events(): AsyncGenerator<ExecutionEvent> {
      const told: ToldSoFar = { started: new Set(), ended: new Set(), steps: new Map() };
      let detail = first;
      try {
        for (;;) {
          const { execution, stages } = detail;
          yield* changesSince(detail, told);
          if (execution.status !== 'running' && execution.status !== 'waiting_for_approval') {
            const stagesCompleted = stages.filter((stage) => stage.status === 'completed').length;
            yield { type: 'execution-end', execution, stagesCompleted };
            return;
          }
          if (!state.dirty && !signal.aborted) {
            await new Promise<void>((resolve) => {
              state.wakeUp = resolve;
            });
            state.wakeUp = null;
          }
          if (signal.aborted) return;
          state.dirty = false;
          detail = await read();
        }
      } finally {
        signal.removeEventListener('abort', stop);
        unwatch();
      }
    })();
  }
}

/** What a follower has told so far: stages started and ended, each step's status as last told. */
interface ToldSoFar {
  readonly started: Set<string>;
  readonly ended: Set<string>;
  readonly steps: Map<string, string>;
}

/** The events of `detail` not yet told (steps, then stages), recorded in `told` as they are. */
function* changesSince(detail: ExecutionDetail, told: ToldSoFar): Generator<ExecutionEvent> {
  const { execution, stages, steps } = detail;
  for (const step of steps) {
    if (told.steps.get(step.id) === step.status) continue;
    // A decided call seen for the first time (a replay): its wait is told first.
    if (!told.steps.has(step.id) && step.decision !== null) {
      yield {
        type: 'approval-required',
        execution,
        step: { ...step, status: 'waiting_for_approval', completedAt: null },
      };
    }
    told.steps.set(step.id, step.status);
    yield awaitingDecision.includes(step.status)
      ? { type: 'approval-required', execution, step }
      : { type: 'step', execution, step };
  }
  for (const stage of stages) {
    if (stage.status !== 'pending' && stage.status !== 'skipped' && !told.started.has(stage.id)) {
      told.started.add(stage.id);
      yield { type: 'stage-start', execution, stage };
    }
    if (finishedStage.has(stage.status) && !told.ended.has(stage.id)) {
      told.ended.add(stage.id);
      yield { type: 'stage-end', execution, stage };
    }
  }
}
