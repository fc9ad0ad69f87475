// Accounts and their API keys.
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function accountsAndApiKeys(types: ColumnTypes): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('kind', 'text', (column) => column.notNull())
        .addColumn('created_at', sql.raw(types.timestamp), (column) => column.notNull())
        .execute();
      // At most one owner account, even when two instances bootstrap an empty database together.
      await db.schema
        .createIndex('accounts_single_owner')
        .on('accounts')
        .column('kind')
        .unique()
        .where(sql.ref('kind'), '=', 'owner')
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('name', 'text', (column) => column.notNull())
        .addColumn('key_hash', 'text', (column) => column.notNull().unique())
        .addColumn('display_key', 'text', (column) => column.notNull())
        .addColumn('scopes', sql.raw(types.json), (column) => column.notNull())
        .addColumn('tier', 'text', (column) => column.notNull())
        .addColumn('allowed_ips', sql.raw(types.json), (column) => column.notNull())
        .addColumn('expires_at', sql.raw(types.timestamp))
        .addColumn('last_used_at', sql.raw(types.timestamp))
        .addColumn('created_at', sql.raw(types.timestamp), (column) => column.notNull())
        .addColumn('revoked_at', sql.raw(types.timestamp))
        .execute();
      await db.schema
        .createIndex('api_keys_account_created')
        .on('api_keys')
        .columns(['account_id', 'created_at'])
        .execute();
    },
  };
}
