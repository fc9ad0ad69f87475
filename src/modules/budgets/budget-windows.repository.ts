// The budgets' store when no Redis is configured: the windows and reservations in the database,
// each reservation one transaction over every budget of the call. On PostgreSQL the windows'
// rows are locked (SELECT … FOR UPDATE, in the budgets' order, so two calls never wait on each
// other crosswise) for the check and the reservation, so that instances sharing the database
// reserve exactly; SQLite runs one write transaction at a time.
import type { Kysely, Transaction } from 'kysely';
import type { DatabaseSchema } from '../../storage/schema.js';
import type {
  BudgetStore,
  Reservation,
  ReserveOutcome,
  WindowLine,
  WindowState,
} from './budget-store.js';

const numberOf = (value: number | string | null | undefined): number =>
  value === null || value === undefined ? 0 : Number(value);

export class DatabaseBudgetStore implements BudgetStore {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  async reserve(
    lines: readonly WindowLine[],
    reservation: Reservation,
    nowMs: number,
  ): Promise<ReserveOutcome> {
    await this.ensureWindows(lines);
    return this.db.transaction().execute(async (transaction) => {
      const spent = await this.lockedSpend(transaction, lines);
      const warnings: number[] = [];
      const amount = reservation.amountMicros;
      for (const [index, line] of lines.entries()) {
        const reserved = await reservedOn(transaction, line, nowMs);
        const lineSpent = spent[index]!;
        if (amount > 0 && lineSpent + reserved + amount > line.limitMicros) {
          return { kind: 'refused', line: index, spentMicros: lineSpent };
        }
        if (
          line.softLimitMicros !== null &&
          lineSpent + reserved + amount >= line.softLimitMicros
        ) {
          warnings.push(index);
        }
      }
      await transaction
        .deleteFrom('budget_reservations')
        .where(
          'budget_id',
          'in',
          lines.map((line) => line.budgetId),
        )
        .where('expires_at', '<=', nowMs)
        .execute();
      await transaction
        .insertInto('budget_reservations')
        .values(
          lines.map((line) => ({
            id: reservation.id,
            budget_id: line.budgetId,
            window_name: line.window,
            amount_micros: amount,
            expires_at: reservation.expiresAtMs,
          })),
        )
        .execute();
      return { kind: 'reserved', warnings };
    });
  }

  async settle(
    lines: readonly WindowLine[],
    reservationId: string,
    costMicros: number,
  ): Promise<void> {
    await this.db.transaction().execute(async (transaction) => {
      for (const line of lines) {
        await transaction
          .updateTable('budget_windows')
          .set((eb) => ({ spent_micros: eb('spent_micros', '+', costMicros) }))
          .where('budget_id', '=', line.budgetId)
          .where('window_name', '=', line.window)
          .execute();
      }
      await transaction.deleteFrom('budget_reservations').where('id', '=', reservationId).execute();
    });
  }

  /** Spend and reservations read in one statement: one snapshot, never a settlement half-seen. */
  async state(line: WindowLine, nowMs: number): Promise<WindowState> {
    const row = await this.db
      .selectFrom('budget_windows')
      .select((eb) => [
        'spent_micros',
        eb
          .selectFrom('budget_reservations')
          .select((inner) => inner.fn.sum<number | string | null>('amount_micros').as('sum'))
          .where('budget_id', '=', line.budgetId)
          .where('window_name', '=', line.window)
          .where('expires_at', '>', nowMs)
          .as('reserved'),
      ])
      .where('budget_id', '=', line.budgetId)
      .where('window_name', '=', line.window)
      .executeTakeFirst();
    if (row === undefined) {
      return {
        spentMicros: await line.seed(),
        reservedMicros: await reservedOn(this.db, line, nowMs),
      };
    }
    return { spentMicros: numberOf(row.spent_micros), reservedMicros: numberOf(row.reserved) };
  }

  /** Makes each window's row the first time it is used, its spend seeded from the ledger. */
  private async ensureWindows(lines: readonly WindowLine[]): Promise<void> {
    const present = await this.db
      .selectFrom('budget_windows')
      .select(['budget_id', 'window_name'])
      .where((eb) =>
        eb.or(
          lines.map((line) =>
            eb.and([eb('budget_id', '=', line.budgetId), eb('window_name', '=', line.window)]),
          ),
        ),
      )
      .execute();
    const known = new Set(present.map((row) => `${row.budget_id} ${row.window_name}`));
    for (const line of lines) {
      if (known.has(`${line.budgetId} ${line.window}`)) continue;
      const seed = await line.seed();
      await this.db
        .insertInto('budget_windows')
        .values({ budget_id: line.budgetId, window_name: line.window, spent_micros: seed })
        .onConflict((conflict) => conflict.columns(['budget_id', 'window_name']).doNothing())
        .execute();
    }
  }

  /** The windows' spend, their rows locked until the transaction ends (PostgreSQL). */
  private async lockedSpend(
    transaction: Transaction<DatabaseSchema>,
    lines: readonly WindowLine[],
  ): Promise<number[]> {
    const spent: number[] = [];
    // The lines come in the budgets' order (account, key, user; by id): every call locks alike.
    for (const line of lines) {
      let query = transaction
        .selectFrom('budget_windows')
        .select('spent_micros')
        .where('budget_id', '=', line.budgetId)
        .where('window_name', '=', line.window);
      if (this.dialect === 'postgres') query = query.forUpdate();
      const row = await query.executeTakeFirst();
      spent.push(numberOf(row?.spent_micros));
    }
    return spent;
  }
}

/** What live reservations hold on a window now. */
async function reservedOn(
  db: Kysely<DatabaseSchema>,
  line: WindowLine,
  nowMs: number,
): Promise<number> {
  const row = await db
    .selectFrom('budget_reservations')
    .select((eb) => eb.fn.sum<number | string | null>('amount_micros').as('reserved'))
    .where('budget_id', '=', line.budgetId)
    .where('window_name', '=', line.window)
    .where('expires_at', '>', nowMs)
    .executeTakeFirst();
  return numberOf(row?.reserved);
}
