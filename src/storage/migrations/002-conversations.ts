// Conversations, their messages (both turns of every exchange, in order) and feedback on messages.
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function conversations(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  const json = sql.raw(types.json);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('conversations')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('user_id', 'text')
        .addColumn('title', 'text', (column) => column.notNull())
        .addColumn('description', 'text', (column) => column.notNull())
        .addColumn('model', 'text')
        .addColumn('system_prompt', 'text')
        .addColumn('status', 'text', (column) => column.notNull())
        .addColumn('metadata', json, (column) => column.notNull())
        .addColumn('template_name', 'text')
        .addColumn('template_variables', json)
        // Kept in the same transaction as the messages it counts; also hands out their `seq`.
        .addColumn('message_count', 'integer', (column) => column.notNull())
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addColumn('updated_at', timestamp, (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex('conversations_by_user')
        .on('conversations')
        .columns(['account_id', 'user_id', 'status', 'updated_at'])
        .execute();

      await db.schema
        .createTable('messages')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('conversation_id', 'text', (column) =>
          column.notNull().references('conversations.id').onDelete('cascade'),
        )
        .addColumn('account_id', 'text', (column) => column.notNull())
        .addColumn('seq', 'integer', (column) => column.notNull())
        .addColumn('role', 'text', (column) => column.notNull())
        .addColumn('content', 'text', (column) => column.notNull())
        .addColumn('model', 'text')
        .addColumn('prompt_tokens', 'integer')
        .addColumn('completion_tokens', 'integer')
        .addColumn('latency_ms', 'integer')
        .addColumn('finish_reason', 'text')
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addUniqueConstraint('messages_conversation_seq', ['conversation_id', 'seq'])
        .execute();

      await db.schema
        .createTable('feedback')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) => column.notNull())
        .addColumn('conversation_id', 'text', (column) =>
          column.notNull().references('conversations.id').onDelete('cascade'),
        )
        .addColumn('message_id', 'text', (column) =>
          column.notNull().references('messages.id').onDelete('cascade'),
        )
        .addColumn('user_id', 'text', (column) => column.notNull())
        .addColumn('feedback_type', 'text', (column) => column.notNull())
        .addColumn('feedback_value', sql.raw(types.real), (column) => column.notNull())
        .addColumn('comment', 'text')
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .addColumn('updated_at', timestamp, (column) => column.notNull())
        // A user's second feedback on a message replaces the first.
        .addUniqueConstraint('feedback_one_per_user', ['message_id', 'user_id'])
        .execute();
      await db.schema
        .createIndex('feedback_by_conversation')
        .on('feedback')
        .columns(['conversation_id', 'created_at'])
        .execute();
    },
  };
}
