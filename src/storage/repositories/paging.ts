// One page of a filtered query and the number of rows the filter matches, for the list endpoints.
import type { SelectQueryBuilder } from 'kysely';

export interface PageWindow {
  limit: number;
  offset: number;
}

/**
 * Runs `select(filtered)` (columns and order) for the page's window, then counts every row of
 * `filtered`, so `total` and the page come from the same conditions.
 */
export async function pageOf<DB, TB extends keyof DB, Row>(
  filtered: SelectQueryBuilder<DB, TB, object>,
  page: PageWindow,
  select: (query: SelectQueryBuilder<DB, TB, object>) => SelectQueryBuilder<DB, TB, Row>,
): Promise<{ rows: Row[]; total: number }> {
  const rows = await select(filtered).limit(page.limit).offset(page.offset).execute();
  // Kysely cannot name the selection of a generic table; the count row is `{ total }` whatever it is.
  const counted = (await filtered
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow()) as { total: number | string | bigint };
  return { rows, total: Number(counted.total) };
}
