// The usage ledger (issue 31): one record per model call on every route — who (account, key, end
// user), where (route, model, provider, deployment, execution), what it used as the provider
// reported it (tokens of each kind, audio, characters), how it ended, the model's time, and its
// cost in integer micro-dollars (null: unknown). Written in batches off the request path; read
// by GET /v1/usage, the CSV export and the budgets' seeding.
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function usageRecords(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  const boolean = sql.raw(types.boolean);
  const no = sql.raw(types.boolean === 'boolean' ? 'false' : '0');
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('usage_records')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) => column.notNull())
        .addColumn('api_key_id', 'text')
        .addColumn('end_user', 'text')
        .addColumn('route', 'text', (column) => column.notNull())
        .addColumn('model', 'text', (column) => column.notNull())
        .addColumn('provider', 'text', (column) => column.notNull())
        .addColumn('deployment', 'text')
        .addColumn('execution_id', 'text')
        .addColumn('input_tokens', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('output_tokens', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('cached_input_tokens', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('cache_write_tokens', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('reasoning_tokens', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('audio_ms', 'bigint', (column) => column.notNull().defaultTo(0))
        .addColumn('characters', 'bigint', (column) => column.notNull().defaultTo(0))
        // `ok`, `error` or `aborted` (the client left before the answer ended).
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('error_code', 'text')
        .addColumn('latency_ms', 'integer', (column) => column.notNull())
        .addColumn('cache_hit', boolean, (column) => column.notNull().defaultTo(no))
        .addColumn('cost_micros', 'bigint')
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .execute();
      // Periods of an account, of a key, of an end user: what usage and budgets read.
      await db.schema
        .createIndex('usage_records_by_account')
        .on('usage_records')
        .columns(['account_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('usage_records_by_key')
        .on('usage_records')
        .columns(['account_id', 'api_key_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('usage_records_by_user')
        .on('usage_records')
        .columns(['account_id', 'end_user', 'created_at'])
        .execute();
      // Retention deletes by age across accounts.
      await db.schema
        .createIndex('usage_records_by_time')
        .on('usage_records')
        .column('created_at')
        .execute();
    },
  };
}
