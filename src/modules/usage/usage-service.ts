// Usage over time for an account, from the ledger (every model call one record): calls, tokens,
// model time and cost per time bucket, in total, per key, per model, per source, and grouped by any
// of key, model, end user, route and deployment (`group_by`); and the latest calls and runs.
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ApiKeysRepository } from '../accounts/api-keys.repository.js';
import type { TimeBucket } from '../../storage/dialects/time-buckets.js';
import { usageCsv } from './usage-csv.js';
import type { UsageExportRepository } from './usage-export.repository.js';
import type { ActivityRow, UsageActivityRepository } from './usage-activity.repository.js';
import type {
  UsageDimension,
  UsageFilter,
  UsageRepository,
  UsageRow,
  UsageSource,
  UsageSums,
} from './usage.repository.js';
import {
  figuresOf,
  groupRows,
  sumInto,
  emptySums,
  type UsageFigures,
  type UsagePoint,
} from './usage-figures.js';

export type { UsageFigures, UsagePoint } from './usage-figures.js';

/** What `group_by` may name, in the order groups list them. */
export const groupDimensions = ['key', 'model', 'user', 'route', 'deployment'] as const;
export type GroupDimension = (typeof groupDimensions)[number];

/** Groups `group_by` answers at most (those that cost most, then made most calls). */
export const maxGroups = 100;

export interface UsageQuery {
  from?: string | undefined;
  to?: string | undefined;
  bucket?: TimeBucket | undefined;
  keyId?: string | undefined;
  model?: string | undefined;
  endUser?: string | undefined;
  groupBy?: readonly GroupDimension[] | undefined;
}

export interface UsageGroup<Name> {
  name: Name;
  totals: UsageFigures;
  points: UsagePoint[];
}

export interface UsageKeyName {
  id: string;
  name: string;
  displayKey: string;
}

/** A group of `group_by`: its dimensions' values (null: none recorded), figures and points. */
export interface UsageGrouping {
  values: Partial<Record<GroupDimension, string | null>>;
  key: UsageKeyName | null;
  totals: UsageFigures;
  points: UsagePoint[];
}

export interface UsageReport {
  from: string;
  to: string;
  bucket: TimeBucket;
  buckets: string[];
  totals: UsageFigures;
  points: UsagePoint[];
  byKey: (UsageGroup<string | null> & { key: UsageKeyName | null })[];
  byModel: UsageGroup<string | null>[];
  bySource: UsageGroup<UsageSource>[];
  groupBy: GroupDimension[];
  groups: UsageGrouping[];
  /** More groups matched than `maxGroups`. */
  groupsTruncated: boolean;
}

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;
/** Bounds on the answer's size: at most 744 hourly or 366 daily buckets. */
const maxHourlyRangeMs = 31 * dayMs;
const maxDailyRangeMs = 366 * dayMs;
const defaultRangeMs = 7 * dayMs;

function floorTo(ms: number, bucket: TimeBucket): number {
  return bucket === 'hour' ? Math.floor(ms / hourMs) * hourMs : Math.floor(ms / dayMs) * dayMs;
}

/** The range of a query, checked: `from` before `to`, at most 366 days (31 hourly). */
export function rangeOf(
  query: Pick<UsageQuery, 'from' | 'to' | 'bucket'>,
  nowMs: number,
): { fromMs: number; toMs: number; bucket: TimeBucket } {
  const toMs = query.to === undefined ? nowMs : Date.parse(query.to);
  const fromMs = query.from === undefined ? toMs - defaultRangeMs : Date.parse(query.from);
  if (fromMs >= toMs) {
    throw new InvalidParameterError('from', "'from' must be earlier than 'to'.");
  }
  const rangeMs = toMs - fromMs;
  const bucket = query.bucket ?? (rangeMs <= 2 * dayMs ? 'hour' : 'day');
  if (bucket === 'hour' && rangeMs > maxHourlyRangeMs) {
    throw new InvalidParameterError(
      'bucket',
      "Hourly buckets cover at most 31 days; use 'bucket=day' or a shorter range.",
    );
  }
  if (rangeMs > maxDailyRangeMs) {
    throw new InvalidParameterError('from', 'The range covers at most 366 days.');
  }
  return { fromMs, toMs, bucket };
}

export interface UsageServiceOptions {
  usage: UsageRepository;
  activity: UsageActivityRepository;
  records: Pick<UsageExportRepository, 'page'>;
  /** Names the keys of the by-key groups. */
  keys: Pick<ApiKeysRepository, 'findInAccount'>;
  /**
   * Writes this instance's buffered ledger records before a read (another instance's last
   * flush interval, at most 250 ms, may still be on its way).
   */
  flushLedger?: (() => Promise<void>) | undefined;
  now?: () => number;
}

export class UsageService {
  private readonly now: () => number;

  constructor(private readonly options: UsageServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The filter of a query over the account (its range checked). */
  filterOf(
    accountId: string,
    query: UsageQuery,
  ): UsageFilter & { bucket: TimeBucket; fromMs: number; toMs: number } {
    const { fromMs, toMs, bucket } = rangeOf(query, this.now());
    return {
      accountId,
      from: new Date(fromMs).toISOString(),
      to: new Date(toMs).toISOString(),
      fromMs,
      toMs,
      bucket,
      keyId: query.keyId,
      model: query.model,
      endUser: query.endUser,
    };
  }

  async report(accountId: string, query: UsageQuery): Promise<UsageReport> {
    const filter = this.filterOf(accountId, query);
    const { bucket, fromMs, toMs } = filter;
    await this.flushed();
    const rows = await this.options.usage.aggregate(filter, bucket, ['key', 'model', 'source']);
    const step = bucket === 'hour' ? hourMs : dayMs;
    const buckets: string[] = [];
    for (let start = floorTo(fromMs, bucket); start < toMs; start += step) {
      buckets.push(new Date(start).toISOString());
    }
    const all = groupRows(rows, () => 'all')[0];
    const byKey = groupRows(rows, (row) => row.values.key ?? null);
    const names = await this.keyNames(
      accountId,
      byKey.map((group) => group.name),
    );
    const groupBy = [...new Set(query.groupBy ?? [])].sort(
      (a, b) => groupDimensions.indexOf(a) - groupDimensions.indexOf(b),
    );
    const grouped = await this.grouped(filter, groupBy);
    const groupKeyNames = groupBy.includes('key')
      ? await this.keyNames(
          accountId,
          grouped.groups.map((group) => group.values.key ?? null),
        )
      : new Map<string, UsageKeyName>();
    return {
      from: filter.from,
      to: filter.to,
      bucket,
      buckets,
      totals: all?.totals ?? figuresOf(emptySums()),
      points: all?.points ?? [],
      byKey: byKey.map((group) => ({
        ...group,
        key: group.name === null ? null : (names.get(group.name) ?? null),
      })),
      byModel: groupRows(rows, (row) => row.values.model ?? null),
      bySource: groupRows(rows, (row) => (row.values.source ?? 'chat') as UsageSource),
      groupBy,
      groups: grouped.groups.map((group) => ({
        ...group,
        key:
          group.values.key === undefined || group.values.key === null
            ? null
            : (groupKeyNames.get(group.values.key) ?? null),
      })),
      groupsTruncated: grouped.truncated,
    };
  }

  /** The groups of `group_by`: the costliest `maxGroups` with their totals, then their points. */
  private async grouped(
    filter: UsageFilter & { bucket: TimeBucket },
    dimensions: GroupDimension[],
  ): Promise<{ groups: Omit<UsageGrouping, 'key'>[]; truncated: boolean }> {
    if (dimensions.length === 0) return { groups: [], truncated: false };
    const top = await this.options.usage.topGroups(filter, dimensions, maxGroups);
    const kept = top.slice(0, maxGroups);
    if (kept.length === 0) return { groups: [], truncated: false };
    const rows = await this.options.usage.aggregate(
      filter,
      filter.bucket,
      dimensions,
      kept.map((group) => group.values),
    );
    const identity = (values: Partial<Record<UsageDimension, string | null>>) =>
      JSON.stringify(dimensions.map((dimension) => values[dimension] ?? null));
    const points = new Map(
      groupRows(rows, (row) => identity(row.values)).map((g) => [g.name, g.points]),
    );
    return {
      groups: kept.map((group) => {
        const totals: UsageSums = emptySums();
        sumInto(totals, group);
        return {
          values: group.values,
          totals: figuresOf(totals),
          points: points.get(identity(group.values)) ?? [],
        };
      }),
      truncated: top.length > maxGroups,
    };
  }

  private async keyNames(accountId: string, ids: (string | null)[]) {
    const names = new Map<string, UsageKeyName>();
    for (const id of ids) {
      if (id === null || names.has(id)) continue;
      const record = await this.options.keys.findInAccount(accountId, id);
      if (record !== undefined) {
        names.set(id, { id, name: record.name, displayKey: record.displayKey });
      }
    }
    return names;
  }

  /** The CSV of the query's records (its range checked now, its rows read as they are sent). */
  exportCsv(
    accountId: string,
    query: UsageQuery,
  ): { filter: UsageFilter; rows: AsyncGenerator<string> } {
    const filter = this.filterOf(accountId, query);
    const flushed = () => this.flushed();
    const records = this.options.records;
    async function* rows(): AsyncGenerator<string> {
      await flushed();
      yield* usageCsv(records, filter);
    }
    return { filter, rows: rows() };
  }

  /** The latest calls and runs that pass the query's filters, newest first. */
  async recentActivity(
    accountId: string,
    query: UsageQuery,
    limit: number,
  ): Promise<ActivityRow[]> {
    const filter = this.filterOf(accountId, query);
    await this.flushed();
    return this.options.activity.recent(filter, limit);
  }

  /** Flushes the local ledger; a failure is the ledger's to retry, and the read goes on. */
  private async flushed(): Promise<void> {
    await this.options.flushLedger?.().catch(() => undefined);
  }
}

export type { UsageRow };
