// Agents of each account, and the record of every execution (of an agent, or later of a pipeline).
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function agents(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  const json = sql.raw(types.json);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('agents')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        .addColumn('agent_type', 'text', (column) => column.notNull())
        .addColumn('model_id', 'text')
        .addColumn('is_public', sql.raw(types.boolean), (column) => column.notNull())
        .addColumn('configuration', json, (column) => column.notNull())
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addColumn('updated_at', timestamp, (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex('agents_by_account')
        .on('agents')
        .columns(['account_id', 'created_at'])
        .execute();
      await db.schema.createIndex('agents_public').on('agents').column('is_public').execute();

      await db.schema
        .createTable('executions')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('kind', 'text', (column) => column.notNull())
        // Kept when the agent or pipeline is deleted: the record of what ran stays readable.
        .addColumn('agent_id', 'text')
        .addColumn('pipeline_id', 'text')
        .addColumn('conversation_id', 'text')
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('input', json, (column) => column.notNull())
        .addColumn('output', json)
        .addColumn('error', json)
        .addColumn('tokens_used', 'integer', (column) => column.notNull())
        .addColumn('execution_time_ms', 'integer')
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addColumn('completed_at', timestamp)
        .execute();
      await db.schema
        .createIndex('executions_by_pipeline')
        .on('executions')
        .columns(['pipeline_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('executions_by_status')
        .on('executions')
        .columns(['status'])
        .execute();
    },
  };
}
