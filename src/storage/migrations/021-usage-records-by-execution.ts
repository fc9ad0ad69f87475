// The usage ledger's records of one run: GET /v1/usage's recent activity sums each run's calls
// (its models, tokens, model time and cost) by execution.
import type { Kysely, Migration } from 'kysely';

export function usageRecordsByExecution(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('usage_records_by_execution')
        .on('usage_records')
        .column('execution_id')
        .execute();
    },
  };
}
