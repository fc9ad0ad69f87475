// The audit log's tables: appending to an account's chain (one append at a time per account, on
// every instance: the chain's head row is locked for the transaction — FOR UPDATE on PostgreSQL,
// SQLite's write lock taken by BEGIN IMMEDIATE), listing records, walking a chain, and moving a
// chain's base past the records retention deletes.
import type { Kysely, Transaction } from 'kysely';
import { pageOf, type PageWindow } from '../../storage/repositories/paging.js';
import type { DatabaseSchema } from '../../storage/schema.js';
import type { AuditChainsTable, AuditRecordsTable } from '../../storage/schema-audit.js';

export type AuditRow = AuditRecordsTable;
export type ChainRow = AuditChainsTable;

export interface AuditFilter {
  /** One account's records; null: every account's (the owner's view). */
  readonly accountId: string | null;
  readonly action?: string;
  readonly targetType?: string;
  /** ISO timestamps: `at >= from`, `at < to`. */
  readonly from?: string;
  readonly to?: string;
}

/** The head a new record links to: the chain's last seq and hash. */
export interface ChainHead {
  readonly seq: number;
  readonly hash: string;
}

export class AuditRepository {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly kind: 'sqlite' | 'postgres',
    /** The base hash of a chain no record was pruned from. */
    private readonly genesis: string,
  ) {}

  /**
   * Appends the record `build` makes from the chain's head, in one transaction that holds the
   * head: concurrent appends to one account (from any instance) take turns, and each links to
   * the one before it. Appends to different accounts do not wait for each other on PostgreSQL.
   */
  append(accountId: string, build: (head: ChainHead) => AuditRow): Promise<AuditRow> {
    return this.db.transaction().execute(async (trx) => {
      const chain = await this.lockedChain(trx, accountId);
      const row = build({ seq: chain.last_seq, hash: chain.last_hash });
      await trx.insertInto('audit_records').values(row).execute();
      await trx
        .updateTable('audit_chains')
        .set({ last_seq: row.seq, last_hash: row.hash })
        .where('account_id', '=', accountId)
        .execute();
      return row;
    });
  }

  /** The chain's row, made if missing, locked until the transaction ends. */
  private async lockedChain(
    trx: Transaction<DatabaseSchema>,
    accountId: string,
  ): Promise<ChainRow> {
    // A write first: on SQLite the transaction holds the write lock already (BEGIN IMMEDIATE); on
    // PostgreSQL two first appends of an account make one row (the second waits, then skips).
    await trx
      .insertInto('audit_chains')
      .values({
        account_id: accountId,
        last_seq: 0,
        last_hash: this.genesis,
        base_seq: 0,
        base_hash: this.genesis,
      })
      .onConflict((conflict) => conflict.column('account_id').doNothing())
      .execute();
    return trx
      .selectFrom('audit_chains')
      .selectAll()
      .where('account_id', '=', accountId)
      .$if(this.kind === 'postgres', (query) => query.forUpdate())
      .executeTakeFirstOrThrow();
  }

  /** A page of records, newest first, and how many match. */
  list(filter: AuditFilter, page: PageWindow): Promise<{ rows: AuditRow[]; total: number }> {
    let query = this.db.selectFrom('audit_records');
    if (filter.accountId !== null) query = query.where('account_id', '=', filter.accountId);
    if (filter.action !== undefined) query = query.where('action', '=', filter.action);
    if (filter.targetType !== undefined) query = query.where('target_type', '=', filter.targetType);
    if (filter.from !== undefined) query = query.where('at', '>=', filter.from);
    if (filter.to !== undefined) query = query.where('at', '<', filter.to);
    return pageOf(query, page, (filtered) =>
      filtered.selectAll().orderBy('at', 'desc').orderBy('account_id').orderBy('seq', 'desc'),
    );
  }

  /** Every account that has a chain or records, in id order (a deleted head still shows). */
  async chainAccounts(): Promise<string[]> {
    const [chains, records] = await Promise.all([
      this.db.selectFrom('audit_chains').select('account_id').execute(),
      this.db.selectFrom('audit_records').select('account_id').distinct().execute(),
    ]);
    const accounts = new Set([...chains, ...records].map((row) => row.account_id));
    return [...accounts].sort();
  }

  chain(accountId: string): Promise<ChainRow | undefined> {
    return this.db
      .selectFrom('audit_chains')
      .selectAll()
      .where('account_id', '=', accountId)
      .executeTakeFirst();
  }

  /** The account's records after `seq`, oldest first, at most `limit` of them. */
  recordsAfter(accountId: string, seq: number, limit: number): Promise<AuditRow[]> {
    return this.db
      .selectFrom('audit_records')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('seq', '>', seq)
      .orderBy('seq')
      .limit(limit)
      .execute();
  }

  /** Accounts with records older than `cutoff`. */
  async accountsWithRecordsBefore(cutoff: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('audit_records')
      .select('account_id')
      .distinct()
      .where('at', '<', cutoff)
      .execute();
    return rows.map((row) => row.account_id);
  }

  /**
   * Deletes the account's records older than `cutoff` from the start of its chain, and moves the
   * chain's base to the last one deleted (its seq and hash), so the rest still verifies. Records
   * go in seq order only: one that is older than the cutoff but follows a newer one stays.
   */
  prune(accountId: string, cutoff: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const chain = await this.lockedChain(trx, accountId);
      const newer = await trx
        .selectFrom('audit_records')
        .select((eb) => eb.fn.min('seq').as('seq'))
        .where('account_id', '=', accountId)
        .where('at', '>=', cutoff)
        .executeTakeFirst();
      const keepFrom = newer?.seq ?? chain.last_seq + 1;
      const last = await trx
        .selectFrom('audit_records')
        .select(['seq', 'hash'])
        .where('account_id', '=', accountId)
        .where('seq', '<', keepFrom)
        .orderBy('seq', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (last === undefined) return 0;
      const deleted = await trx
        .deleteFrom('audit_records')
        .where('account_id', '=', accountId)
        .where('seq', '<=', last.seq)
        .executeTakeFirst();
      await trx
        .updateTable('audit_chains')
        .set({ base_seq: last.seq, base_hash: last.hash })
        .where('account_id', '=', accountId)
        .execute();
      return Number(deleted.numDeletedRows);
    });
  }
}
