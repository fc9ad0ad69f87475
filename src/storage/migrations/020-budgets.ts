// Budgets (issue 31): a spending limit on an account, one of its keys, or one of its end users,
// per calendar period in UTC (or in total), with an optional soft limit. `budget_windows` holds a
// budget's settled spend of one period (the window's name, `2026-11` say, is part of its key: a
// new period is a new row, so nothing sweeps old ones); `budget_reservations` the worst cases of
// calls under way, each until it is settled or its deadline passes (an instance that died). Both
// are the store of reservations when no Redis is configured. Every string is bounded by a check,
// alike on both databases.
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

/** The longest end user name a request may carry (`user_id`, `user`), as the chat routes bound it. */
export const budgetUserIdMaxLength = 256;

export function budgets(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('budgets')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) => column.notNull())
        .addColumn('scope', 'text', (column) => column.notNull())
        .addColumn('key_id', 'text')
        .addColumn('user_id', 'text')
        .addColumn('limit_micros', 'bigint', (column) => column.notNull())
        .addColumn('soft_limit_micros', 'bigint')
        .addColumn('period', 'text', (column) => column.notNull())
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addColumn('updated_at', timestamp, (column) => column.notNull())
        .addCheckConstraint('budgets_id_length', sql`length(id) <= 64`)
        .addCheckConstraint('budgets_account_length', sql`length(account_id) <= 64`)
        .addCheckConstraint('budgets_scope', sql`scope in ('account', 'key', 'user')`)
        .addCheckConstraint('budgets_period', sql`period in ('day', 'week', 'month', 'total')`)
        .addCheckConstraint('budgets_key_length', sql`key_id is null or length(key_id) <= 64`)
        .addCheckConstraint(
          'budgets_user_length',
          sql`user_id is null or length(user_id) <= ${sql.lit(budgetUserIdMaxLength)}`,
        )
        .addCheckConstraint(
          'budgets_limits',
          sql`limit_micros >= 0 and (soft_limit_micros is null or soft_limit_micros >= 0)`,
        )
        .execute();
      // The budgets on a call's path: its account's, its key's, its end user's.
      await db.schema
        .createIndex('budgets_by_account')
        .on('budgets')
        .columns(['account_id', 'scope'])
        .execute();
      await db.schema
        .createTable('budget_windows')
        .addColumn('budget_id', 'text', (column) => column.notNull())
        .addColumn('window_name', 'text', (column) => column.notNull())
        .addColumn('spent_micros', 'bigint', (column) => column.notNull())
        .addPrimaryKeyConstraint('budget_windows_key', ['budget_id', 'window_name'])
        .addCheckConstraint('budget_windows_window_length', sql`length(window_name) <= 16`)
        .execute();
      await db.schema
        .createTable('budget_reservations')
        .addColumn('id', 'text', (column) => column.notNull())
        .addColumn('budget_id', 'text', (column) => column.notNull())
        .addColumn('window_name', 'text', (column) => column.notNull())
        .addColumn('amount_micros', 'bigint', (column) => column.notNull())
        // Milliseconds since the epoch: past it, the reservation no longer counts.
        .addColumn('expires_at', 'bigint', (column) => column.notNull())
        .addPrimaryKeyConstraint('budget_reservations_key', ['id', 'budget_id'])
        .addCheckConstraint('budget_reservations_window_length', sql`length(window_name) <= 16`)
        .execute();
      await db.schema
        .createIndex('budget_reservations_by_window')
        .on('budget_reservations')
        .columns(['budget_id', 'window_name', 'expires_at'])
        .execute();
    },
  };
}
