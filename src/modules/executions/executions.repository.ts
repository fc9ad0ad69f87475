// Execution records and their stage records, and the instances' heartbeat rows: the one place that
// maps them to rows and back (a run's steps are execution-steps.repository.ts').
import type { Insertable, Kysely, Selectable } from 'kysely';
import type {
  Execution,
  ExecutionError,
  ExecutionOutcome,
  StagePlan,
  StageRecord,
  StageUpdate,
} from './execution.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import { json, parseJson } from '../../storage/repositories/json-text.js';
import { pageOf } from '../../storage/repositories/paging.js';

type ExecutionRow = Selectable<DatabaseSchema['executions']>;
type StageRow = Selectable<DatabaseSchema['execution_stages']>;

function toExecution(row: ExecutionRow): Execution {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind,
    agentId: row.agent_id,
    pipelineId: row.pipeline_id,
    conversationId: row.conversation_id,
    userId: row.user_id,
    status: row.status,
    input: JSON.parse(row.input) as Record<string, unknown>,
    output: parseJson<Record<string, unknown>>(row.output),
    error: parseJson<ExecutionError>(row.error),
    tokensUsed: Number(row.tokens_used),
    executionTimeMs: row.execution_time_ms === null ? null : Number(row.execution_time_ms),
    createdAt: row.created_at,
    completedAt: row.completed_at,
    apiKeyId: row.api_key_id,
  };
}

/** The one row builder: an execution as it is inserted, running on `instanceId`. */
function executionRow(
  execution: Execution,
  instanceId: string,
  runPlan: Record<string, unknown> | null,
): Insertable<DatabaseSchema['executions']> {
  return {
    id: execution.id,
    account_id: execution.accountId,
    kind: execution.kind,
    agent_id: execution.agentId,
    pipeline_id: execution.pipelineId,
    conversation_id: execution.conversationId,
    user_id: execution.userId,
    status: execution.status,
    input: JSON.stringify(execution.input),
    output: json(execution.output),
    error: json(execution.error),
    tokens_used: execution.tokensUsed,
    execution_time_ms: execution.executionTimeMs,
    created_at: execution.createdAt,
    completed_at: execution.completedAt,
    instance_id: instanceId,
    api_key_id: execution.apiKeyId,
    run_plan: json(runPlan),
  };
}

function toStage(row: StageRow): StageRecord {
  return {
    id: row.id,
    executionId: row.execution_id,
    position: Number(row.position),
    stageId: row.stage_id,
    name: row.name,
    agentId: row.agent_id,
    status: row.status,
    attempts: Number(row.attempts),
    input: parseJson(row.input),
    output: parseJson(row.output),
    error: parseJson(row.error),
    tokensUsed: Number(row.tokens_used),
    executionTimeMs: row.execution_time_ms === null ? null : Number(row.execution_time_ms),
    startedAt: row.started_at,
    completedAt: row.completed_at,
  };
}

/** Statuses of a run not yet finished: running, or paused for a person's approval. */
const unfinished = ['running', 'waiting_for_approval'] as const;

export class ExecutionsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /**
   * The execution and one pending record per planned stage, in one transaction; a `runPlan` marks
   * a run carried by the job queue (resumable by any instance).
   */
  async insert(
    execution: Execution,
    instanceId: string,
    stages: ReadonlyArray<{ id: string; plan: StagePlan }>,
    runPlan: Record<string, unknown> | null = null,
  ): Promise<void> {
    await this.db.transaction().execute(async (transaction) => {
      await transaction
        .insertInto('executions')
        .values(executionRow(execution, instanceId, runPlan))
        .execute();
      if (stages.length === 0) return;
      await transaction
        .insertInto('execution_stages')
        .values(
          stages.map(({ id, plan }, position) => ({
            id,
            execution_id: execution.id,
            position,
            stage_id: plan.stageId,
            name: plan.name,
            agent_id: plan.agentId,
            status: 'pending' as const,
            attempts: 0,
            input: null,
            output: null,
            error: null,
            tokens_used: 0,
            execution_time_ms: null,
            started_at: null,
            completed_at: null,
          })),
        )
        .execute();
    });
  }

  /**
   * Records how a run ended; a run already finished is left as it was. A failed run's stages that
   * had not finished are recorded skipped in the same transaction.
   */
  async finish(id: string, outcome: ExecutionOutcome & { completedAt: string }): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .updateTable('executions')
        .set({
          status: outcome.status,
          output: json(outcome.output),
          error: json(outcome.error),
          tokens_used: outcome.tokensUsed,
          execution_time_ms: outcome.executionTimeMs,
          completed_at: outcome.completedAt,
        })
        .where('id', '=', id)
        .where('status', 'in', unfinished)
        .executeTakeFirst();
      if (outcome.status === 'failed') {
        await transaction
          .updateTable('execution_stages')
          .set({ status: 'skipped' })
          .where('execution_id', '=', id)
          .where('status', 'in', ['pending', 'running', 'waiting_for_approval'])
          .execute();
      }
      return Number(result.numUpdatedRows) > 0;
    });
  }

  async updateStage(id: string, update: StageUpdate): Promise<void> {
    await this.db
      .updateTable('execution_stages')
      .set({
        status: update.status,
        ...(update.attempts === undefined ? {} : { attempts: update.attempts }),
        ...(update.input === undefined ? {} : { input: json(update.input) }),
        ...(update.output === undefined ? {} : { output: json(update.output) }),
        ...(update.error === undefined ? {} : { error: json(update.error) }),
        ...(update.tokensUsed === undefined ? {} : { tokens_used: update.tokensUsed }),
        ...(update.executionTimeMs === undefined
          ? {}
          : { execution_time_ms: update.executionTimeMs }),
        ...(update.startedAt === undefined ? {} : { started_at: update.startedAt }),
        ...(update.completedAt === undefined ? {} : { completed_at: update.completedAt }),
      })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Pauses a running run for approval, keeping `runPlan` (so that any instance can continue it
   * once approved) and the time it has worked so far (a wait for a person is not counted); a stage
   * waiting is marked so. Answers whether the run was running.
   */
  async pause(
    id: string,
    runPlan: Record<string, unknown>,
    stageRecordId: string | null,
    workedMs: number,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .updateTable('executions')
        .set({
          status: 'waiting_for_approval',
          run_plan: JSON.stringify(runPlan),
          execution_time_ms: Math.max(0, Math.round(workedMs)),
        })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .executeTakeFirst();
      if (stageRecordId !== null) {
        await transaction
          .updateTable('execution_stages')
          .set({ status: 'waiting_for_approval' })
          .where('id', '=', stageRecordId)
          .execute();
      }
      return Number(result.numUpdatedRows) > 0;
    });
  }

  /** A paused run set running again on `instanceId`; answers whether it was paused (one wins). */
  async reopen(id: string, instanceId: string): Promise<boolean> {
    const result = await this.db
      .updateTable('executions')
      .set({ status: 'running', instance_id: instanceId })
      .where('id', '=', id)
      .where('status', '=', 'waiting_for_approval')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async find(accountId: string, id: string): Promise<Execution | undefined> {
    const row = await this.db
      .selectFrom('executions')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toExecution(row);
  }

  async stagesOf(executionId: string): Promise<StageRecord[]> {
    const rows = await this.db
      .selectFrom('execution_stages')
      .selectAll()
      .where('execution_id', '=', executionId)
      .orderBy('position', 'asc')
      .execute();
    return rows.map(toStage);
  }

  async listForPipeline(
    accountId: string,
    pipelineId: string,
    page: { limit: number; offset: number },
  ): Promise<{ executions: Execution[]; total: number }> {
    const { rows, total } = await pageOf(
      this.db
        .selectFrom('executions')
        .where('account_id', '=', accountId)
        .where('pipeline_id', '=', pipelineId),
      page,
      (query) => query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    );
    return { executions: rows.map(toExecution), total };
  }

  /**
   * Fails every running execution whose instance is not among those beating since `aliveSince`
   * (its running stage failed with `error`, pending ones skipped); answers their ids.
   */
  async failOrphaned(
    aliveSince: string,
    error: ExecutionError,
    completedAt: string,
  ): Promise<string[]> {
    const db = this.db;
    const alive = db.selectFrom('instances').select('id').where('heartbeat_at', '>', aliveSince);
    const orphaned = await db
      .selectFrom('executions')
      .select('id')
      .where('status', '=', 'running')
      .where('run_plan', 'is', null)
      .where((eb) => eb.or([eb('instance_id', 'is', null), eb('instance_id', 'not in', alive)]))
      .execute();
    if (orphaned.length === 0) return [];
    const ids = orphaned.map((row) => row.id);
    const errorJson = JSON.stringify(error);
    await db.transaction().execute(async (transaction) => {
      await transaction
        .updateTable('executions')
        .set({ status: 'failed', error: errorJson, completed_at: completedAt })
        .where('id', 'in', ids)
        .where('status', '=', 'running')
        .execute();
      await transaction
        .updateTable('execution_stages')
        .set({ status: 'failed', error: errorJson, completed_at: completedAt })
        .where('execution_id', 'in', ids)
        .where('status', '=', 'running')
        .execute();
      await transaction
        .updateTable('execution_stages')
        .set({ status: 'skipped' })
        .where('execution_id', 'in', ids)
        .where('status', '=', 'pending')
        .execute();
    });
    return ids;
  }

  /** Queued runs still running whose instance is not among those beating since `aliveSince`. */
  async orphanedRuns(aliveSince: string): Promise<Array<{ id: string; accountId: string }>> {
    const alive = this.db
      .selectFrom('instances')
      .select('id')
      .where('heartbeat_at', '>', aliveSince);
    const rows = await this.db
      .selectFrom('executions')
      .select(['id', 'account_id'])
      .where('status', '=', 'running')
      .where('run_plan', 'is not', null)
      .where((eb) => eb.or([eb('instance_id', 'is', null), eb('instance_id', 'not in', alive)]))
      .execute();
    return rows.map((row) => ({ id: row.id, accountId: row.account_id }));
  }

  /**
   * Records `instanceId` as the one running execution `id`, if it is still running and (when
   * `aliveSince` is given) its instance is not alive: of several instances claiming one orphan,
   * exactly one wins. Answers whether this one did.
   */
  async claim(id: string, instanceId: string, aliveSince?: string): Promise<boolean> {
    let query = this.db
      .updateTable('executions')
      .set({ instance_id: instanceId })
      .where('id', '=', id)
      .where('status', '=', 'running');
    if (aliveSince !== undefined) {
      const alive = this.db
        .selectFrom('instances')
        .select('id')
        .where('heartbeat_at', '>', aliveSince);
      query = query.where((eb) =>
        eb.or([eb('instance_id', 'is', null), eb('instance_id', 'not in', alive)]),
      );
    }
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The plan of a queued run, as stored; null for a run tied to its request (or an unknown id). */
  async runPlanOf(id: string): Promise<Record<string, unknown> | null> {
    const row = await this.db
      .selectFrom('executions')
      .select('run_plan')
      .where('id', '=', id)
      .executeTakeFirst();
    return parseJson<Record<string, unknown>>(row?.run_plan ?? null);
  }

  // Instances: the heartbeat that tells running executions of live instances from orphans.

  async registerInstance(id: string, now: string): Promise<void> {
    await this.db
      .insertInto('instances')
      .values({ id, started_at: now, heartbeat_at: now })
      .execute();
  }

  async beat(id: string, now: string): Promise<void> {
    await this.db
      .updateTable('instances')
      .set({ heartbeat_at: now })
      .where('id', '=', id)
      .execute();
  }

  /** Removes this instance's row, and rows of instances silent since `staleBefore`. */
  async unregisterInstance(id: string, staleBefore: string): Promise<void> {
    await this.db.deleteFrom('instances').where('id', '=', id).execute();
    await this.db.deleteFrom('instances').where('heartbeat_at', '<', staleBefore).execute();
  }
}
