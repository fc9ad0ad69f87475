// Pipelines with their ordered stages (one JSON list per pipeline).
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Pipeline, PipelineReference, PipelineStage, VisualLayout } from './pipeline.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import { pageOf } from '../../storage/repositories/paging.js';

function toPipeline(row: Selectable<DatabaseSchema['pipelines']>): Pipeline {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    description: row.description,
    stages: JSON.parse(row.stages) as PipelineStage[],
    visualLayout:
      row.visual_layout === null ? null : (JSON.parse(row.visual_layout) as VisualLayout),
    exposeAsTool: row.expose_as_tool === true || row.expose_as_tool === 1,
    inputSchema:
      row.input_schema === null ? null : (JSON.parse(row.input_schema) as Record<string, unknown>),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
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
        expose_as_tool: pipeline.exposeAsTool ? 1 : 0,
        input_schema: pipeline.inputSchema === null ? null : JSON.stringify(pipeline.inputSchema),
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

  /**
   * The account's pipelines marked `expose_as_tool`, oldest first (tool names are given in this
   * order, so a name stays with the pipeline that had it first), at most `limit`.
   */
  async listExposed(accountId: string, limit: number): Promise<Pipeline[]> {
    const rows = await this.db
      .selectFrom('pipelines')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('expose_as_tool', '=', 1)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    return rows.map(toPipeline);
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
        expose_as_tool: pipeline.exposeAsTool ? 1 : 0,
        input_schema: pipeline.inputSchema === null ? null : JSON.stringify(pipeline.inputSchema),
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

  /**
   * Pipelines of any account with a stage running `agentId`, oldest first. Agent ids are random
   * and never a part of another id, so a text match on the stored stage list finds the candidates
   * on both dialects alike; parsing the list confirms each.
   */
  async usingAgent(agentId: string): Promise<PipelineReference[]> {
    const pattern = `%${agentId.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
    const rows = await this.db
      .selectFrom('pipelines')
      .select(['id', 'account_id', 'name', 'stages'])
      .where(sql<boolean>`cast(stages as text) like ${pattern} escape '\\'`)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .execute();
    return rows
      .filter((row) =>
        (JSON.parse(row.stages) as PipelineStage[]).some((stage) => stage.agent_id === agentId),
      )
      .map((row) => ({ id: row.id, accountId: row.account_id, name: row.name }));
  }
}
