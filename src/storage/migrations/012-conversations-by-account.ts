// GET /v1/conversations?all_users=true lists an account's conversations of every user, newest
// first: an index in that order, so a page is read from it instead of sorting the account's rows.
import type { Kysely, Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function conversationsByAccount(_types: ColumnTypes): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('conversations_by_account')
        .on('conversations')
        .columns(['account_id', 'updated_at', 'id'])
        .execute();
    },
  };
}
