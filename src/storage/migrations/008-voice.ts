// Voice sessions: who opened them with which models and voice, the hash of their single-use
// connection token, and when they expire.
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function voice(types: ColumnTypes): Migration {
  const timestamp = sql.raw(types.timestamp);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('voice_sessions')
        .addColumn('id', 'text', (column) => column.primaryKey())
        .addColumn('account_id', 'text', (column) =>
          column.notNull().references('accounts.id').onDelete('cascade'),
        )
        .addColumn('key_id', 'text', (column) =>
          column.notNull().references('api_keys.id').onDelete('cascade'),
        )
        .addColumn('user_id', 'text', (column) => column.notNull())
        .addColumn('conversation_id', 'text', (column) =>
          column.references('conversations.id').onDelete('set null'),
        )
        .addColumn('model', 'text', (column) => column.notNull())
        .addColumn('stt_model', 'text', (column) => column.notNull())
        .addColumn('tts_model', 'text', (column) => column.notNull())
        .addColumn('voice_id', 'text', (column) => column.notNull())
        .addColumn('language_code', 'text')
        .addColumn('sample_rate', 'integer', (column) => column.notNull())
        .addColumn('audio_format', 'text', (column) => column.notNull())
        .addColumn('token_hash', 'text', (column) => column.unique())
        .addColumn('token_expires_at', timestamp, (column) => column.notNull())
        .addColumn('expires_at', timestamp, (column) => column.notNull())
        .addColumn('connected_at', timestamp)
        .addColumn('created_at', timestamp, (column) => column.notNull())
        .execute();
      await db.schema
        .createIndex('voice_sessions_by_account')
        .on('voice_sessions')
        .columns(['account_id', 'created_at'])
        .execute();
    },
  };
}
