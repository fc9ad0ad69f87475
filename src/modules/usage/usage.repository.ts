// Usage read from the ledger (usage_records, one row per model call), aggregated in SQL by time
// bucket and by any of key, model, end user, route, deployment and source (the request itself, an
// agent run or a pipeline run), with the calls' tokens, model time and cost.
import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type RawBuilder,
  type SqlBool,
} from 'kysely';
import { timeBucketExpression, type TimeBucket } from '../../storage/dialects/time-buckets.js';
import type { DialectAdapter } from '../../storage/dialects/dialect.js';
import type { DatabaseSchema } from '../../storage/schema.js';

export type UsageSource = 'chat' | 'agent' | 'pipeline';

/** What records can be grouped by: the five of `group_by`, and the source. */
export type UsageDimension = 'key' | 'model' | 'user' | 'route' | 'deployment' | 'source';

/** The figures of a set of records, summed in SQL. */
export interface UsageSums {
  requests: number;
  failed: number;
  promptTokens: number;
  completionTokens: number;
  cachedInputTokens: number;
  latencySumMs: number;
  latencyMaxMs: number;
  /** Sum of the known costs, in micro-dollars. */
  costMicros: number;
  /** Records whose cost is unknown (a model without a price). */
  unpriced: number;
}

/** One aggregated group: the values of its dimensions (null: none recorded), and its sums. */
export interface UsageRow extends UsageSums {
  bucket: string;
  values: Partial<Record<UsageDimension, string | null>>;
}

export interface UsageFilter {
  accountId: string;
  from: string;
  to: string;
  keyId?: string | undefined;
  model?: string | undefined;
  endUser?: string | undefined;
}

type Builder = ExpressionBuilder<DatabaseSchema, 'usage_records' | 'executions'>;

/** Each dimension's value of a record, as SQL. */
function dimensionOf(dimension: UsageDimension): RawBuilder<string | null> {
  switch (dimension) {
    case 'key':
      return sql.ref<string | null>('usage_records.api_key_id');
    case 'model':
      return sql.ref<string | null>('usage_records.model');
    case 'user':
      return sql.ref<string | null>('usage_records.end_user');
    case 'route':
      return sql.ref<string | null>('usage_records.route');
    case 'deployment':
      return sql.ref<string | null>('usage_records.deployment');
    case 'source':
      return sql<string>`case when usage_records.execution_id is null then 'chat' when executions.kind = 'pipeline' then 'pipeline' else 'agent' end`;
  }
}

const number = (value: unknown): number => (value === null ? 0 : Number(value));

/** The sums of the group's records, as SQL (the same on both dialects). */
const sumsSelection = [
  sql<number>`count(*)`.as('requests'),
  sql<number>`sum(case when usage_records.status = 'error' then 1 else 0 end)`.as('failed'),
  sql<number>`sum(usage_records.input_tokens)`.as('input_tokens'),
  sql<number>`sum(usage_records.output_tokens)`.as('output_tokens'),
  sql<number>`sum(usage_records.cached_input_tokens)`.as('cached_input_tokens'),
  sql<number>`sum(usage_records.latency_ms)`.as('latency_sum'),
  sql<number>`max(usage_records.latency_ms)`.as('latency_max'),
  sql<number | null>`sum(usage_records.cost_micros)`.as('cost_micros'),
  sql<number>`sum(case when usage_records.cost_micros is null then 1 else 0 end)`.as('unpriced'),
];

function sumsOf(row: Record<string, unknown>): UsageSums {
  return {
    requests: number(row.requests),
    failed: number(row.failed),
    promptTokens: number(row.input_tokens),
    completionTokens: number(row.output_tokens),
    cachedInputTokens: number(row.cached_input_tokens),
    latencySumMs: number(row.latency_sum),
    latencyMaxMs: number(row.latency_max),
    costMicros: number(row.cost_micros),
    unpriced: number(row.unpriced),
  };
}

const alias = (dimension: UsageDimension) => `d_${dimension}`;

export class UsageRepository {
  constructor(
    private readonly db: Kysely<DatabaseSchema>,
    private readonly dialect: DialectAdapter['kind'],
  ) {}

  /** The account's records of the range that pass the filter (and `extra`, when given). */
  private records(filter: UsageFilter, extra?: (eb: Builder) => Expression<SqlBool>) {
    let query = this.db
      .selectFrom('usage_records')
      .leftJoin('executions', 'executions.id', 'usage_records.execution_id')
      .where('usage_records.account_id', '=', filter.accountId)
      .where('usage_records.created_at', '>=', filter.from)
      .where('usage_records.created_at', '<', filter.to);
    if (filter.keyId !== undefined) {
      query = query.where('usage_records.api_key_id', '=', filter.keyId);
    }
    if (filter.model !== undefined) query = query.where('usage_records.model', '=', filter.model);
    if (filter.endUser !== undefined) {
      query = query.where('usage_records.end_user', '=', filter.endUser);
    }
    return extra === undefined ? query : query.where(extra);
  }

  /** Sums per time bucket and per value of each of `dimensions`. */
  async aggregate(
    filter: UsageFilter,
    bucket: TimeBucket,
    dimensions: readonly UsageDimension[],
    only?: readonly Partial<Record<UsageDimension, string | null>>[],
  ): Promise<UsageRow[]> {
    const bucketOf = timeBucketExpression(this.dialect, bucket);
    const extra =
      only === undefined ? undefined : (eb: Builder) => this.anyOf(eb, dimensions, only);
    const rows = await this.records(filter, extra)
      .select([
        bucketOf('usage_records.created_at').as('bucket'),
        ...dimensions.map((dimension) => dimensionOf(dimension).as(alias(dimension))),
        ...sumsSelection,
      ])
      .groupBy([sql.ref('bucket'), ...dimensions.map((dimension) => sql.ref(alias(dimension)))])
      .execute();
    return rows.map((row) => {
      const fields = row as Record<string, unknown>;
      return {
        bucket: String(fields.bucket),
        values: valuesOf(fields, dimensions),
        ...sumsOf(fields),
      };
    });
  }

  /**
   * The `limit` groups of `dimensions` that cost most (then made most calls) over the range, with
   * their sums; one more than `limit` tells the caller there were more.
   */
  async topGroups(
    filter: UsageFilter,
    dimensions: readonly UsageDimension[],
    limit: number,
  ): Promise<(UsageSums & { values: Partial<Record<UsageDimension, string | null>> })[]> {
    const rows = await this.records(filter)
      .select([
        ...dimensions.map((dimension) => dimensionOf(dimension).as(alias(dimension))),
        ...sumsSelection,
      ])
      .groupBy(dimensions.map((dimension) => sql.ref(alias(dimension))))
      .orderBy(sql`coalesce(sum(usage_records.cost_micros), 0)`, 'desc')
      .orderBy(sql`count(*)`, 'desc')
      .orderBy(dimensions.map((dimension) => sql.ref(alias(dimension))))
      .limit(limit + 1)
      .execute();
    return rows.map((row) => {
      const fields = row as Record<string, unknown>;
      return { values: valuesOf(fields, dimensions), ...sumsOf(fields) };
    });
  }

  /** Records in any of the given groups (each an AND of its dimensions' values). */
  private anyOf(
    eb: Builder,
    dimensions: readonly UsageDimension[],
    groups: readonly Partial<Record<UsageDimension, string | null>>[],
  ): Expression<SqlBool> {
    return eb.or(
      groups.map((group) =>
        eb.and(
          dimensions.map((dimension) => {
            const value = group[dimension] ?? null;
            return value === null
              ? eb(dimensionOf(dimension), 'is', null)
              : eb(dimensionOf(dimension), '=', value);
          }),
        ),
      ),
    );
  }
}

function valuesOf(
  row: Record<string, unknown>,
  dimensions: readonly UsageDimension[],
): Partial<Record<UsageDimension, string | null>> {
  const values: Partial<Record<UsageDimension, string | null>> = Object.create(null) as Partial<
    Record<UsageDimension, string | null>
  >;
  for (const dimension of dimensions) {
    const value = row[alias(dimension)];
    values[dimension] =
      typeof value === 'string' || typeof value === 'number' ? String(value) : null;
  }
  return values;
}
