// The steps of tool-calling agents (issue 22): each model turn and each tool call of a run, in
// order, with its arguments, result, status and duration — what the execution detail and its
// events show, and what a paused run is continued from (on any instance, after any restart). A
// call that needs a person's approval waits here (`waiting_for_approval`, until `expires_at`).
// JSON columns are text, as in 013.
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function executionSteps(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('execution_steps')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('execution_id', 'text', (column) =>
          column.notNull().references('executions.id').onDelete('cascade'),
        )
        // The stage record whose agent took the step; null for an agent execution's own steps.
        .addColumn('stage_record_id', 'text')
        .addColumn('position', 'integer', (column) => column.notNull())
        // `model` (a turn of the model) or `tool` (a call of a tool).
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('name', 'text', (column) => column.notNull())
        // The model's id of a tool call, which its result answers.
        .addColumn('call_id', 'text')
        .addColumn('arguments', 'text')
        .addColumn('output', 'text')
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('error', 'text')
        // A person's decision on a call that needed approval: JSON {decision, reason, edited}.
        .addColumn('decision', 'text')
        .addColumn('tokens_used', 'integer', (column) => column.notNull().defaultTo(0))
        .addColumn('duration_ms', 'integer')
        .addColumn('started_at', timestamp, (column) => column.notNull())
        .addColumn('completed_at', timestamp)
        .addColumn('expires_at', timestamp)
        .execute();
      await db.schema
        .createIndex('execution_steps_by_execution')
        .on('execution_steps')
        .columns(['execution_id', 'position'])
        .execute();
      // The approvals that time out are found by their deadline.
      await db.schema
        .createIndex('execution_steps_waiting')
        .on('execution_steps')
        .columns(['status', 'expires_at'])
        .execute();
    },
  };
}
