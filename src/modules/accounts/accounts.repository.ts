// Accounts: the tenants that own keys and everything the keys create.
import type { Kysely } from 'kysely';
import type { DatabaseSchema } from '../../storage/schema.js';
import { pageOf } from '../../storage/repositories/paging.js';
import type { Account } from './account.js';

function toAccount(row: DatabaseSchema['accounts']): Account {
  return { id: row.id, name: row.name, kind: row.kind, createdAt: row.created_at, tier: row.tier };
}

export class AccountsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(account: Account, db: Kysely<DatabaseSchema> = this.db): Promise<void> {
    await db
      .insertInto('accounts')
      .values({
        id: account.id,
        name: account.name,
        kind: account.kind,
        created_at: account.createdAt,
        tier: account.tier ?? null,
      })
      .execute();
  }

  async findById(id: string): Promise<Account | undefined> {
    const row = await this.db
      .selectFrom('accounts')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  }

  async findOwner(): Promise<Account | undefined> {
    const row = await this.db
      .selectFrom('accounts')
      .selectAll()
      .where('kind', '=', 'owner')
      .executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  }

  async list(page: {
    limit: number;
    offset: number;
  }): Promise<{ accounts: Account[]; total: number }> {
    const { rows, total } = await pageOf(this.db.selectFrom('accounts'), page, (query) =>
      query.selectAll().orderBy('created_at', 'asc').orderBy('id', 'asc'),
    );
    return { accounts: rows.map(toAccount), total };
  }
}
