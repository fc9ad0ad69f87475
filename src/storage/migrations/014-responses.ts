// Responses of the Responses API (`POST /v1/responses`, issue 21), stored unless `store: false`:
// each the answer object as it was returned, the input items it was given, and the conversation
// its chain shares (one conversation per chain of `previous_response_id`s, which holds the turns).
// The JSON columns are text, as in 013: written once and returned byte for byte. A response goes
// with its account and with its conversation (deleting the conversation deletes its responses).
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function responses(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('responses')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('conversation_id', 'text', (column) =>
          column.notNull().references('conversations.id').onDelete('cascade'),
        )
        // The stored assistant message that is this response's answer: where the chain stands.
        .addColumn('message_id', 'text', (column) => column.notNull())
        .addColumn('previous_response_id', 'text')
        .addColumn('model', 'text', (column) => column.notNull())
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('created_at', timestamp, (column) => column.notNull())
        // The Response object, JSON text.
        .addColumn('body', 'text', (column) => column.notNull())
        // The input items (with their ids), JSON text.
        .addColumn('input_items', 'text', (column) => column.notNull())
        .execute();
      // Deleting a conversation deletes its responses: PostgreSQL does not index foreign keys itself.
      await db.schema
        .createIndex('responses_by_conversation')
        .on('responses')
        .column('conversation_id')
        .execute();
    },
  };
}
