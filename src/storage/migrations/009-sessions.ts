// Dashboard sessions (stored by the hash of their cookie token), and the key behind each stored turn
// and execution, so usage can be reported per key.
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function sessions(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('sessions')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('token_hash', 'text', (column) => column.notNull().unique())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('api_key_id', 'text', (column) =>
          column.notNull().references('api_keys.id').onDelete('cascade'),
        )
        .addColumn('client_address', 'text', (column) => column.notNull())
        .addColumn('user_agent', 'text', (column) => column.notNull())
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addColumn('last_seen_at', timestamp, (column) => column.notNull())
        .addColumn('expires_at', timestamp, (column) => column.notNull())
        .execute();
      await db.schema.createIndex('sessions_by_key').on('sessions').column('api_key_id').execute();
      await db.schema
        .createIndex('sessions_by_expiry')
        .on('sessions')
        .column('expires_at')
        .execute();

      // Nullable: turns and runs stored before this migration belong to no known key.
      await db.schema.alterTable('messages').addColumn('api_key_id', 'text').execute();
      await db.schema.alterTable('executions').addColumn('api_key_id', 'text').execute();
      await db.schema
        .createIndex('messages_usage')
        .on('messages')
        .columns(['account_id', 'created_at'])
        .execute();
      await db.schema
        .createIndex('executions_usage')
        .on('executions')
        .columns(['account_id', 'created_at'])
        .execute();
    },
  };
}
