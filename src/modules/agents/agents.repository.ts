// Agents: an account's own, and public ones of other accounts that it may read and execute.
import type { Kysely, Selectable } from 'kysely';
import type { Agent, AgentPatch } from './agent.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import { pageOf } from '../../storage/repositories/paging.js';

function toAgent(row: Selectable<DatabaseSchema['agents']>): Agent {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    description: row.description,
    agentType: row.agent_type,
    modelId: row.model_id,
    isPublic: row.is_public === true || row.is_public === 1,
    exposeAsTool: row.expose_as_tool === true || row.expose_as_tool === 1,
    configuration: JSON.parse(row.configuration) as Record<string, unknown>,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export class AgentsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(agent: Agent): Promise<void> {
    await this.db
      .insertInto('agents')
      .values({
        id: agent.id,
        account_id: agent.accountId,
        name: agent.name,
        description: agent.description,
        agent_type: agent.agentType,
        model_id: agent.modelId,
        is_public: agent.isPublic ? 1 : 0,
        expose_as_tool: agent.exposeAsTool ? 1 : 0,
        configuration: JSON.stringify(agent.configuration),
        created_at: agent.createdAt,
        updated_at: agent.updatedAt,
      })
      .execute();
  }

  /** The agent when the account owns it or it is public; undefined otherwise. */
  async findVisible(accountId: string, id: string): Promise<Agent | undefined> {
    const row = await this.db
      .selectFrom('agents')
      .selectAll()
      .where('id', '=', id)
      .where((eb) => eb.or([eb('account_id', '=', accountId), eb('is_public', '=', 1)]))
      .executeTakeFirst();
    return row === undefined ? undefined : toAgent(row);
  }

  /** The account's own agents and every public one, newest first. */
  async listVisible(
    accountId: string,
    page: { limit: number; offset: number },
  ): Promise<{ agents: Agent[]; total: number }> {
    const visible = this.db
      .selectFrom('agents')
      .where((eb) => eb.or([eb('account_id', '=', accountId), eb('is_public', '=', 1)]));
    const { rows, total } = await pageOf(visible, page, (query) =>
      query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    );
    return { agents: rows.map(toAgent), total };
  }

  /**
   * The account's own agents marked `expose_as_tool`, oldest first (tool names are given in this
   * order, so a name stays with the agent that had it first), at most `limit`.
   */
  async listExposed(accountId: string, limit: number): Promise<Agent[]> {
    const rows = await this.db
      .selectFrom('agents')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('expose_as_tool', '=', 1)
      .orderBy('created_at', 'asc')
      .orderBy('id', 'asc')
      .limit(limit)
      .execute();
    return rows.map(toAgent);
  }

  async update(
    accountId: string,
    id: string,
    patch: AgentPatch,
    updatedAt: string,
  ): Promise<Agent | undefined> {
    await this.db
      .updateTable('agents')
      .set({
        updated_at: updatedAt,
        ...(patch.name === undefined ? {} : { name: patch.name }),
        ...(patch.description === undefined ? {} : { description: patch.description }),
        ...(patch.modelId === undefined ? {} : { model_id: patch.modelId }),
        ...(patch.isPublic === undefined ? {} : { is_public: patch.isPublic ? 1 : 0 }),
        ...(patch.exposeAsTool === undefined ? {} : { expose_as_tool: patch.exposeAsTool ? 1 : 0 }),
        ...(patch.configuration === undefined
          ? {}
          : { configuration: JSON.stringify(patch.configuration) }),
      })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .execute();
    const row = await this.db
      .selectFrom('agents')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toAgent(row);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('agents')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
