// Pipelines with their ordered stages, and the per-stage records of pipeline executions.
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../schema.js';
import { pageOf } from './paging.js';
import {
  runningExecutionRow,
  toExecution,
  type Execution,
  type ExecutionError,
} from './executions.repository.js';

export interface PipelineStage {
  id: string;
  name: string;
  agent_id: string;
  input_mapping: Record<string, string>;
  output_mapping: Record<string, string>;
  timeout_ms?: number;
  retries?: number;
}

/** React Flow's shape; other fields (type, style, …) are kept as given. */
export interface VisualLayout {
  nodes: Array<{
    id: string;
    position: { x: number; y: number; [extra: string]: unknown };
    data?: Record<string, unknown>;
    [extra: string]: unknown;
  }>;
  edges: Array<{ id: string; source: string; target: string; [extra: string]: unknown }>;
  [extra: string]: unknown;
}

export interface Pipeline {
  id: string;
  accountId: string;
  name: string;
  description: string;
  stages: PipelineStage[];
  /** As given by the client; null when none was (a layout is then generated on read). */
  visualLayout: VisualLayout | null;
  createdAt: string;
  updatedAt: string;
}

export type StageStatus = 'pending' | 'running' | 'completed' | 'failed' | 'skipped';

export interface StageRecord {
  id: string;
  executionId: string;
  position: number;
  stageId: string;
  name: string;
  agentId: string;
  status: StageStatus;
  attempts: number;
  input: Record<string, unknown> | null;
  output: Record<string, unknown> | null;
  error: ExecutionError | null;
  tokensUsed: number;
  executionTimeMs: number | null;
  startedAt: string | null;
  completedAt: string | null;
}

function toPipeline(row: DatabaseSchema['pipelines']): Pipeline {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    description: row.description,
    stages: JSON.parse(row.stages) as PipelineStage[],
    visualLayout:
      row.visual_layout === null ? null : (JSON.parse(row.visual_layout) as VisualLayout),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

function toStage(row: DatabaseSchema['execution_stages']): StageRecord {
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

export interface StageUpdate {
  status: StageStatus;
  attempts?: number;
  input?: Record<string, unknown> | null;
  output?: Record<string, unknown> | null;
  error?: ExecutionError | null;
  tokensUsed?: number;
  executionTimeMs?: number | null;
  startedAt?: string | null;
  completedAt?: string | null;
}

export class PipelinesRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(pipeline: Pipeline): Promise<void> {
    await this.db
      .insertInto('pipelines')
      .values({
        id: pipeline.id,
        account_id: pipeline.accountId,
        name: pipeline.name,
        description: pipeline.description,
        stages: JSON.stringify(pipeline.stages),
        visual_layout:
          pipeline.visualLayout === null ? null : JSON.stringify(pipeline.visualLayout),
        created_at: pipeline.createdAt,
        updated_at: pipeline.updatedAt,
      })
      .execute();
  }

  async find(accountId: string, id: string): Promise<Pipeline | undefined> {
    const row = await this.db
      .selectFrom('pipelines')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toPipeline(row);
  }

  async list(
    accountId: string,
    page: { limit: number; offset: number },
  ): Promise<{ pipelines: Pipeline[]; total: number }> {
    const { rows, total } = await pageOf(
      this.db.selectFrom('pipelines').where('account_id', '=', accountId),
      page,
      (query) => query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    );
    return { pipelines: rows.map(toPipeline), total };
  }

  async update(pipeline: Pipeline): Promise<void> {
    await this.db
      .updateTable('pipelines')
      .set({
        name: pipeline.name,
        description: pipeline.description,
        stages: JSON.stringify(pipeline.stages),
        visual_layout:
          pipeline.visualLayout === null ? null : JSON.stringify(pipeline.visualLayout),
        updated_at: pipeline.updatedAt,
      })
      .where('id', '=', pipeline.id)
      .where('account_id', '=', pipeline.accountId)
      .execute();
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('pipelines')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** The execution row and one pending record per stage, in one transaction. */
  async insertExecution(
    execution: Execution,
    instanceId: string,
    stages: ReadonlyArray<{ id: string; stage: PipelineStage }>,
  ): Promise<void> {
    await this.db.transaction().execute(async (transaction) => {
      await transaction
        .insertInto('executions')
        .values(runningExecutionRow(execution, instanceId))
        .execute();
      if (stages.length > 0) {
        await transaction
          .insertInto('execution_stages')
          .values(
            stages.map(({ id, stage }, position) => ({
              id,
              execution_id: execution.id,
              position,
              stage_id: stage.id,
              name: stage.name,
              agent_id: stage.agent_id,
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
      }
    });
  }

  async updateStage(id: string, update: StageUpdate): Promise<void> {
    await this.db
      .updateTable('execution_stages')
      .set({
        status: update.status,
        ...(update.attempts === undefined ? {} : { attempts: update.attempts }),
        ...(update.input === undefined
          ? {}
          : { input: update.input === null ? null : JSON.stringify(update.input) }),
        ...(update.output === undefined
          ? {}
          : { output: update.output === null ? null : JSON.stringify(update.output) }),
        ...(update.error === undefined
          ? {}
          : { error: update.error === null ? null : JSON.stringify(update.error) }),
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

  /** Marks every stage not yet finished as skipped. */
  async skipRemaining(executionId: string): Promise<void> {
    await this.db
      .updateTable('execution_stages')
      .set({ status: 'skipped' })
      .where('execution_id', '=', executionId)
      .where('status', 'in', ['pending', 'running'])
      .execute();
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

  async listExecutions(
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
}
