// Runs carried by the job queue keep their plan (the pipeline's stages as they were when the run
// started), so whichever instance takes a run up continues it from its records alone.
import type { Kysely, Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function executionPlans(_types: ColumnTypes): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('executions').addColumn('run_plan', 'text').execute();
    },
  };
}
