// Executions record the `user_id` they were run for (the spec's common parameter).
import type { Kysely, Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function executions(_types: ColumnTypes): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('executions').addColumn('user_id', 'text').execute();
    },
  };
}
