// Messages keep everything a turn held beyond its text (issue 20): its content parts (images,
// audio, files), an assistant turn's tool calls, a tool turn's call id, and the participant name.
// Roles gain 'tool': `role` is plain text on both dialects (002 gave it no CHECK constraint), so
// only the types change. The JSON columns are text, not the dialect's JSON type: they are kept as
// written, byte for byte (PostgreSQL's jsonb would reorder keys and drop duplicates), and both
// databases then store and bound them alike. Nullable: every earlier message has none of them.
import type { Kysely, Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function messageParts(_types: ColumnTypes): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // One column per statement: SQLite's ALTER TABLE adds one at a time.
      await db.schema.alterTable('messages').addColumn('parts', 'text').execute();
      await db.schema.alterTable('messages').addColumn('tool_calls', 'text').execute();
      await db.schema.alterTable('messages').addColumn('tool_call_id', 'text').execute();
      await db.schema.alterTable('messages').addColumn('name', 'text').execute();
    },
  };
}
