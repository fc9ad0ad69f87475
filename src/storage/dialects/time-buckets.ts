// The start of a timestamp's hour or day (UTC), as ISO 8601 text, in each dialect's SQL: SQLite keeps
// timestamps as ISO text (so a prefix is the bucket); PostgreSQL keeps timestamptz.
import { sql, type RawBuilder } from 'kysely';
import type { DialectAdapter } from './dialect.js';

export type TimeBucket = 'hour' | 'day';

export type BucketExpression = (column: string) => RawBuilder<string>;

export function timeBucketExpression(
  kind: DialectAdapter['kind'],
  bucket: TimeBucket,
): BucketExpression {
  if (kind === 'sqlite') {
    return bucket === 'hour'
      ? (column) => sql<string>`substr(${sql.ref(column)}, 1, 13) || ':00:00.000Z'`
      : (column) => sql<string>`substr(${sql.ref(column)}, 1, 10) || 'T00:00:00.000Z'`;
  }
  const format =
    bucket === 'hour' ? 'YYYY-MM-DD"T"HH24":00:00.000Z"' : 'YYYY-MM-DD"T00:00:00.000Z"';
  return (column) =>
    sql<string>`to_char(date_trunc(${bucket}, ${sql.ref(column)} at time zone 'UTC'), ${format})`;
}
