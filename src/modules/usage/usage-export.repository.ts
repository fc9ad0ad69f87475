// The ledger's records of a range, a page at a time in (created_at, id) order: what the CSV export
// streams, so that no more than a page is held in memory whatever the range holds.
import type { Kysely, Selectable } from 'kysely';
import type { DatabaseSchema, UsageRecordsTable } from '../../storage/schema.js';
import type { UsageFilter } from './usage.repository.js';

export type UsageRecordRow = Selectable<UsageRecordsTable>;

/** Where the previous page ended. */
export interface ExportCursor {
  createdAt: string;
  id: string;
}

export class UsageExportRepository {
  constructor(private readonly db: Kysely<DatabaseSchema>) {}

  /** Up to `size` records after `after` (from the start of the range without it). */
  async page(
    filter: UsageFilter,
    after: ExportCursor | null,
    size: number,
  ): Promise<UsageRecordRow[]> {
    let query = this.db
      .selectFrom('usage_records')
      .selectAll()
      .where('account_id', '=', filter.accountId)
      .where('created_at', '>=', filter.from)
      .where('created_at', '<', filter.to);
    if (filter.keyId !== undefined) query = query.where('api_key_id', '=', filter.keyId);
    if (filter.model !== undefined) query = query.where('model', '=', filter.model);
    if (filter.endUser !== undefined) query = query.where('end_user', '=', filter.endUser);
    if (after !== null) {
      query = query.where((eb) =>
        eb.or([
          eb('created_at', '>', after.createdAt),
          eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)]),
        ]),
      );
    }
    return query.orderBy('created_at').orderBy('id').limit(size).execute();
  }
}
