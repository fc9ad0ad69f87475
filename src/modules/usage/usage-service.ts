// Usage over time for an account: requests, tokens and latency per time bucket, per key and per
// model, from the stored turns and executions (see usage.repository.ts).
import { InvalidParameterError } from '../../errors/app-error.js';
import type { ApiKeysRepository } from '../accounts/api-keys.repository.js';
import type { ActivityRow, UsageRepository, UsageRow, UsageSource } from './usage.repository.js';
import type { TimeBucket } from '../../storage/dialects/time-buckets.js';

export interface UsageQuery {
  from?: string | undefined;
  to?: string | undefined;
  bucket?: TimeBucket | undefined;
  keyId?: string | undefined;
  model?: string | undefined;
}

export interface UsageFigures {
  requests: number;
  failed: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Mean over the requests that recorded a latency; null when none did. */
  averageLatencyMs: number | null;
  maxLatencyMs: number | null;
}

export interface UsagePoint extends UsageFigures {
  start: string;
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
}

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;
/** Bounds on the answer's size: at most 744 hourly or 366 daily buckets. */
const maxHourlyRangeMs = 31 * dayMs;
const maxDailyRangeMs = 366 * dayMs;
const defaultRangeMs = 7 * dayMs;

/** A row's figures summed over several rows (no latency maximum until a row has latencies). */
type Accumulator = Omit<UsageRow, 'bucket' | 'keyId' | 'model' | 'source' | 'latencyMaxMs'> & {
  latencyMaxMs: number | null;
};

const emptyAccumulator = (): Accumulator => ({
  requests: 0,
  failed: 0,
  promptTokens: 0,
  completionTokens: 0,
  totalTokens: 0,
  latencySumMs: 0,
  latencyCount: 0,
  latencyMaxMs: null,
});

function add(target: Accumulator, row: UsageRow): void {
  target.requests += row.requests;
  target.failed += row.failed;
  target.promptTokens += row.promptTokens;
  target.completionTokens += row.completionTokens;
  target.totalTokens += row.totalTokens;
  target.latencySumMs += row.latencySumMs;
  target.latencyCount += row.latencyCount;
  if (row.latencyCount > 0) {
    target.latencyMaxMs = Math.max(target.latencyMaxMs ?? 0, row.latencyMaxMs);
  }
}

function figures(accumulator: Accumulator): UsageFigures {
  return {
    requests: accumulator.requests,
    failed: accumulator.failed,
    promptTokens: accumulator.promptTokens,
    completionTokens: accumulator.completionTokens,
    totalTokens: accumulator.totalTokens,
    averageLatencyMs:
      accumulator.latencyCount === 0
        ? null
        : Math.round((accumulator.latencySumMs / accumulator.latencyCount) * 10) / 10,
    maxLatencyMs: accumulator.latencyMaxMs,
  };
}

/** Groups rows by `nameOf`, each group with totals and its non-empty buckets in time order. */
function groupBy<Name>(rows: readonly UsageRow[], nameOf: (row: UsageRow) => Name) {
  const groups = new Map<Name, { totals: Accumulator; points: Map<string, Accumulator> }>();
  for (const row of rows) {
    const name = nameOf(row);
    let group = groups.get(name);
    if (group === undefined) {
      group = { totals: emptyAccumulator(), points: new Map() };
      groups.set(name, group);
    }
    add(group.totals, row);
    let point = group.points.get(row.bucket);
    if (point === undefined) {
      point = emptyAccumulator();
      group.points.set(row.bucket, point);
    }
    add(point, row);
  }
  return [...groups.entries()]
    .map(([name, group]) => ({
      name,
      totals: figures(group.totals),
      points: [...group.points.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([start, point]) => ({ start, ...figures(point) })),
    }))
    .sort((a, b) => b.totals.requests - a.totals.requests);
}

function floorTo(ms: number, bucket: TimeBucket): number {
  return bucket === 'hour' ? Math.floor(ms / hourMs) * hourMs : Math.floor(ms / dayMs) * dayMs;
}

export interface UsageServiceOptions {
  usage: UsageRepository;
  /** Names the keys of the by-key groups. */
  keys: Pick<ApiKeysRepository, 'findInAccount'>;
  now?: () => number;
}

export class UsageService {
  private readonly now: () => number;

  constructor(private readonly options: UsageServiceOptions) {
    this.now = options.now ?? Date.now;
  }

  async report(accountId: string, query: UsageQuery): Promise<UsageReport> {
    const toMs = query.to === undefined ? this.now() : Date.parse(query.to);
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
    const from = new Date(fromMs).toISOString();
    const to = new Date(toMs).toISOString();
    const rows = await this.options.usage.aggregate({
      accountId,
      from,
      to,
      bucket,
      keyId: query.keyId,
      model: query.model,
    });

    const step = bucket === 'hour' ? hourMs : dayMs;
    const buckets: string[] = [];
    for (let start = floorTo(fromMs, bucket); start < toMs; start += step) {
      buckets.push(new Date(start).toISOString());
    }
    const all = groupBy(rows, () => 'all')[0];
    const byKey = groupBy(rows, (row) => row.keyId);
    const keyIds = byKey.map((group) => group.name).filter((id): id is string => id !== null);
    const names = new Map<string, UsageKeyName>();
    for (const id of keyIds) {
      const record = await this.options.keys.findInAccount(accountId, id);
      if (record !== undefined) {
        names.set(id, { id, name: record.name, displayKey: record.displayKey });
      }
    }
    return {
      from,
      to,
      bucket,
      buckets,
      totals: all?.totals ?? figures(emptyAccumulator()),
      points: all?.points ?? [],
      byKey: byKey.map((group) => ({
        ...group,
        key: group.name === null ? null : (names.get(group.name) ?? null),
      })),
      byModel: groupBy(rows, (row) => row.model),
      bySource: groupBy(rows, (row) => row.source),
    };
  }

  recentActivity(accountId: string, limit: number): Promise<ActivityRow[]> {
    return this.options.usage.recent(accountId, limit);
  }
}
