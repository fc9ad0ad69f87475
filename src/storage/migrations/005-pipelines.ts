// Pipelines, the stages of their executions, and the heartbeat of the instances that run them (so
// that runs left `running` by a stopped instance can be recognised and closed as interrupted).
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function pipelines(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  const json = sql.raw(types.json);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('pipelines')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        // The ordered stages, always read and replaced whole.
        .addColumn('stages', json, (column) => column.notNull())
        .addColumn('visual_layout', json)
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addColumn('updated_at', timestamp, (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex('pipelines_by_account')
        .on('pipelines')
        .columns(['account_id', 'created_at'])
        .execute();

      await db.schema
        .createTable('execution_stages')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('execution_id', 'text', (column) =>
          column.notNull().references('executions.id').onDelete('cascade'),
        )
        .addColumn('position', 'integer', (column) => column.notNull())
        .addColumn('stage_id', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('agent_id', 'text', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('attempts', 'integer', (column) => column.notNull())
        .addColumn('input', json)
        .addColumn('output', json)
        .addColumn('error', json)
        .addColumn('tokens_used', 'integer', (column) => column.notNull())
        .addColumn('execution_time_ms', 'integer')
        .addColumn('started_at', timestamp)
        .addColumn('completed_at', timestamp)
        .addUniqueConstraint('execution_stages_position', ['execution_id', 'position'])
        .execute();

      await db.schema
        .createTable('instances')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('started_at', timestamp, (column) => column.notNull())
        .addColumn('heartbeat_at', timestamp, (column) => column.notNull())
        .execute();
      await db.schema.alterTable('executions').addColumn('instance_id', 'text').execute();
    },
  };
}
