// Accounts carry a rate-limit tier: their ceiling (all their keys' requests together) comes from it.
// An existing member account takes the tier of its first key (the admin key it was created with);
// the owner account (the platform operator's) has none: no ceiling above its keys' own limits.
import { sql, type Kysely, type Migration } from 'kysely';
import type { ColumnTypes } from '../dialects/dialect.js';

export function accountTiers(_types: ColumnTypes): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('accounts').addColumn('tier', 'text').execute();
      await backfillAccountTiers(db);
    },
  };
}

/** Gives each member account the tier of its first key. */
export async function backfillAccountTiers(db: Kysely<unknown>): Promise<void> {
  await sql`
    update accounts set tier = (
      select api_keys.tier from api_keys
      where api_keys.account_id = accounts.id
      order by api_keys.created_at asc, api_keys.id asc
      limit 1
    )
    where kind = 'member'`.execute(db);
}
