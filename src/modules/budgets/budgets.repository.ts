// The budgets' rows: created, read, changed and deleted within one account; the budgets on a
// call's path; and what the ledger recorded of a budget's subjects in a period (a window's seed).
import { sql, type Kysely } from 'kysely';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { BudgetsTable } from '../../storage/schema-budgets.js';

export type BudgetScope = BudgetsTable['scope'];

export interface Budget {
  readonly id: string;
  readonly accountId: string;
  readonly scope: BudgetScope;
  readonly keyId: string | null;
  readonly userId: string | null;
  readonly limitMicros: number;
  readonly softLimitMicros: number | null;
  readonly period: BudgetsTable['period'];
  readonly createdAt: string;
  readonly updatedAt: string;
}

export type BudgetChanges = Partial<
  Pick<Budget, 'limitMicros' | 'softLimitMicros' | 'period' | 'updatedAt'>
>;

/** Whose call it is: the budgets on its path are its account's, its key's, its end user's. */
export interface BudgetPath {
  readonly accountId: string;
  readonly apiKeyId: string | null;
  readonly endUser: string | null;
}

/** PostgreSQL answers bigint columns as text. */
const numberOf = (value: number | string): number => Number(value);

function toBudget(row: BudgetsTable): Budget {
  return {
    id: row.id,
    accountId: row.account_id,
    scope: row.scope,
    keyId: row.key_id,
    userId: row.user_id,
    limitMicros: numberOf(row.limit_micros),
    softLimitMicros: row.soft_limit_micros === null ? null : numberOf(row.soft_limit_micros),
    period: row.period,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** The order of a call's budgets: account, key, end user (and by id within one scope). */
const scopeOrder: Record<BudgetScope, number> = { account: 0, key: 1, user: 2 };

export class BudgetsRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  async insert(budget: Budget): Promise<void> {
    await this.db
      .insertInto('budgets')
      .values({
        id: budget.id,
        account_id: budget.accountId,
        scope: budget.scope,
        key_id: budget.keyId,
        user_id: budget.userId,
        limit_micros: budget.limitMicros,
        soft_limit_micros: budget.softLimitMicros,
        period: budget.period,
        created_at: budget.createdAt,
        updated_at: budget.updatedAt,
      })
      .execute();
  }

  async find(accountId: string, id: string): Promise<Budget | undefined> {
    const row = await this.db
      .selectFrom('budgets')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toBudget(row);
  }

  async list(accountId: string, page: { limit: number; offset: number }): Promise<Budget[]> {
    const rows = await this.db
      .selectFrom('budgets')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(page.limit)
      .offset(page.offset)
      .execute();
    return rows.map(toBudget);
  }

  async count(accountId: string): Promise<number> {
    const row = await this.db
      .selectFrom('budgets')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async update(accountId: string, id: string, changes: BudgetChanges): Promise<boolean> {
    const result = await this.db
      .updateTable('budgets')
      .set({
        ...(changes.limitMicros === undefined ? {} : { limit_micros: changes.limitMicros }),
        ...(changes.softLimitMicros === undefined
          ? {}
          : { soft_limit_micros: changes.softLimitMicros }),
        ...(changes.period === undefined ? {} : { period: changes.period }),
        ...(changes.updatedAt === undefined ? {} : { updated_at: changes.updatedAt }),
      })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Deletes the budget with its windows and reservations; false when the account has none such. */
  async delete(accountId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      const result = await transaction
        .deleteFrom('budgets')
        .where('id', '=', id)
        .where('account_id', '=', accountId)
        .executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) return false;
      await transaction.deleteFrom('budget_windows').where('budget_id', '=', id).execute();
      await transaction.deleteFrom('budget_reservations').where('budget_id', '=', id).execute();
      return true;
    });
  }

  /** The budgets a call of `path` runs under: account first, then key, then end user. */
  async onPath(path: BudgetPath): Promise<Budget[]> {
    const rows = await this.db
      .selectFrom('budgets')
      .selectAll()
      .where('account_id', '=', path.accountId)
      .where((eb) => {
        const alternatives = [eb('scope', '=', 'account')];
        if (path.apiKeyId !== null) {
          alternatives.push(eb.and([eb('scope', '=', 'key'), eb('key_id', '=', path.apiKeyId)]));
        }
        if (path.endUser !== null) {
          alternatives.push(eb.and([eb('scope', '=', 'user'), eb('user_id', '=', path.endUser)]));
        }
        return eb.or(alternatives);
      })
      .execute();
    return rows
      .map(toBudget)
      .sort((a, b) => scopeOrder[a.scope] - scopeOrder[b.scope] || a.id.localeCompare(b.id));
  }

  /** What the ledger recorded of the budget's subject since `from` (ISO 8601), in micro-dollars. */
  async ledgerSpend(budget: Budget, from: string): Promise<number> {
    let query = this.db
      .selectFrom('usage_records')
      .select(sql<number | string | null>`sum(cost_micros)`.as('spent'))
      .where('account_id', '=', budget.accountId)
      .where('created_at', '>=', from);
    if (budget.scope === 'key') query = query.where('api_key_id', '=', budget.keyId ?? '');
    if (budget.scope === 'user') query = query.where('end_user', '=', budget.userId ?? '');
    const row = await query.executeTakeFirst();
    return row?.spent === null || row?.spent === undefined ? 0 : numberOf(row.spent);
  }
}
