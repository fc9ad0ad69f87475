// Sums of ledger records turned into the figures GET /v1/usage answers: calls, failures, tokens,
// mean and longest model time, cost in dollars and the calls whose cost is unknown; and rows
// grouped by a name, each group with its totals and its non-empty buckets in time order.
import type { UsageRow, UsageSums } from './usage.repository.js';

export interface UsageFigures {
  requests: number;
  failed: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedInputTokens: number;
  /** Mean model time of the calls; null when there were none. */
  averageLatencyMs: number | null;
  maxLatencyMs: number | null;
  /** Dollars, to the micro-dollar: the sum of the known costs. */
  costUsd: number;
  /** Calls whose cost is unknown (a model without a price): not in `costUsd`. */
  unpricedRequests: number;
}

export interface UsagePoint extends UsageFigures {
  start: string;
}

export const emptySums = (): UsageSums => ({
  requests: 0,
  failed: 0,
  promptTokens: 0,
  completionTokens: 0,
  cachedInputTokens: 0,
  latencySumMs: 0,
  latencyMaxMs: 0,
  costMicros: 0,
  unpriced: 0,
});

export function sumInto(target: UsageSums, row: UsageSums): void {
  target.requests += row.requests;
  target.failed += row.failed;
  target.promptTokens += row.promptTokens;
  target.completionTokens += row.completionTokens;
  target.cachedInputTokens += row.cachedInputTokens;
  target.latencySumMs += row.latencySumMs;
  target.latencyMaxMs = Math.max(target.latencyMaxMs, row.latencyMaxMs);
  target.costMicros += row.costMicros;
  target.unpriced += row.unpriced;
}

/** Micro-dollars as dollars with 6 decimals. */
export const usdOf = (micros: number): number => Math.round(micros) / 1_000_000;

export function figuresOf(sums: UsageSums): UsageFigures {
  return {
    requests: sums.requests,
    failed: sums.failed,
    promptTokens: sums.promptTokens,
    completionTokens: sums.completionTokens,
    totalTokens: sums.promptTokens + sums.completionTokens,
    cachedInputTokens: sums.cachedInputTokens,
    averageLatencyMs:
      sums.requests === 0 ? null : Math.round((sums.latencySumMs / sums.requests) * 10) / 10,
    maxLatencyMs: sums.requests === 0 ? null : sums.latencyMaxMs,
    costUsd: usdOf(sums.costMicros),
    unpricedRequests: sums.unpriced,
  };
}

/** Groups rows by `nameOf`, each group with totals and its non-empty buckets in time order. */
export function groupRows<Name>(rows: readonly UsageRow[], nameOf: (row: UsageRow) => Name) {
  const groups = new Map<Name, { totals: UsageSums; points: Map<string, UsageSums> }>();
  for (const row of rows) {
    const name = nameOf(row);
    let group = groups.get(name);
    if (group === undefined) {
      group = { totals: emptySums(), points: new Map() };
      groups.set(name, group);
    }
    sumInto(group.totals, row);
    let point = group.points.get(row.bucket);
    if (point === undefined) {
      point = emptySums();
      group.points.set(row.bucket, point);
    }
    sumInto(point, row);
  }
  return [...groups.entries()]
    .map(([name, group]) => ({
      name,
      totals: figuresOf(group.totals),
      points: [...group.points.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([start, point]) => ({ start, ...figuresOf(point) })),
    }))
    .sort((a, b) => b.totals.costUsd - a.totals.costUsd || b.totals.requests - a.totals.requests);
}
