// The steps of tool-calling agents (migration 016): each model turn and tool call of a run, the one
// place that maps them to rows and back.
import type { Kysely, Selectable } from 'kysely';
import type { DatabaseSchema } from '../../storage/schema.js';
import { json, parseJson } from '../../storage/repositories/json-text.js';
import { pageOf } from '../../storage/repositories/paging.js';
import type { StepDecision, StepRecord, StepUpdate } from './execution.js';

type StepRow = Selectable<DatabaseSchema['execution_steps']>;

function toStep(row: StepRow): StepRecord {
  return {
    id: row.id,
    executionId: row.execution_id,
    stageRecordId: row.stage_record_id,
    position: Number(row.position),
    kind: row.kind,
    name: row.name,
    callId: row.call_id,
    arguments: parseJson(row.arguments),
    output: parseJson(row.output),
    status: row.status,
    error: parseJson(row.error),
    decision: parseJson<StepDecision>(row.decision),
    tokensUsed: Number(row.tokens_used),
    durationMs: row.duration_ms === null ? null : Number(row.duration_ms),
    startedAt: row.started_at,
    completedAt: row.completed_at,
    expiresAt: row.expires_at,
    toolSchema: parseJson(row.tool_schema),
  };
}

export class ExecutionStepsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insertStep(step: StepRecord): Promise<void> {
    await this.db
      .insertInto('execution_steps')
      .values({
        id: step.id,
        execution_id: step.executionId,
        stage_record_id: step.stageRecordId,
        position: step.position,
        kind: step.kind,
        name: step.name,
        call_id: step.callId,
        arguments: json(step.arguments),
        output: json(step.output),
        status: step.status,
        error: json(step.error),
        decision: json(step.decision),
        tokens_used: step.tokensUsed,
        duration_ms: step.durationMs,
        started_at: step.startedAt,
        completed_at: step.completedAt,
        expires_at: step.expiresAt,
        tool_schema: json(step.toolSchema),
      })
      .execute();
  }

  /**
   * Changes a step; with `from`, only while its status is one of those (of two instances or two
   * people deciding one call, exactly one wins). Answers whether the step changed.
   */
  async updateStep(
    id: string,
    update: StepUpdate,
    from?: readonly StepRecord['status'][],
  ): Promise<boolean> {
    let query = this.db
      .updateTable('execution_steps')
      .set({
        status: update.status,
        ...(update.arguments === undefined ? {} : { arguments: json(update.arguments) }),
        ...(update.output === undefined ? {} : { output: json(update.output) }),
        ...(update.error === undefined ? {} : { error: json(update.error) }),
        ...(update.decision === undefined ? {} : { decision: json(update.decision) }),
        ...(update.durationMs === undefined ? {} : { duration_ms: update.durationMs }),
        ...(update.completedAt === undefined ? {} : { completed_at: update.completedAt }),
        ...(update.expiresAt === undefined ? {} : { expires_at: update.expiresAt }),
        ...(update.toolSchema === undefined ? {} : { tool_schema: json(update.toolSchema) }),
      })
      .where('id', '=', id);
    if (from !== undefined) query = query.where('status', 'in', from);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** A window of a run's steps in order, with how many it has. */
  async stepsPage(
    executionId: string,
    page: { limit: number; offset: number },
  ): Promise<{ steps: StepRecord[]; total: number }> {
    const { rows, total } = await pageOf(
      this.db.selectFrom('execution_steps').where('execution_id', '=', executionId),
      page,
      (query) => query.selectAll().orderBy('position', 'asc'),
    );
    return { steps: rows.map(toStep), total };
  }

  async step(executionId: string, stepId: string): Promise<StepRecord | undefined> {
    const row = await this.db
      .selectFrom('execution_steps')
      .selectAll()
      .where('execution_id', '=', executionId)
      .where('id', '=', stepId)
      .executeTakeFirst();
    return row === undefined ? undefined : toStep(row);
  }

  async stepsOf(executionId: string): Promise<StepRecord[]> {
    const rows = await this.db
      .selectFrom('execution_steps')
      .selectAll()
      .where('execution_id', '=', executionId)
      .orderBy('position', 'asc')
      .execute();
    return rows.map(toStep);
  }

  /**
   * Paused runs with a call whose approval deadline passed before `now` (a call waiting for a
   * decision is in one of `statuses`).
   */
  async expiredApprovals(
    now: string,
    statuses: readonly StepRecord['status'][],
  ): Promise<Array<{ id: string; accountId: string }>> {
    const rows = await this.db
      .selectFrom('execution_steps')
      .innerJoin('executions', 'executions.id', 'execution_steps.execution_id')
      .select(['executions.id as id', 'executions.account_id as account_id'])
      .distinct()
      .where('execution_steps.status', 'in', statuses)
      .where('execution_steps.expires_at', '<', now)
      .where('executions.status', '=', 'waiting_for_approval')
      .execute();
    return rows.map((row) => ({ id: row.id, accountId: row.account_id }));
  }
}
