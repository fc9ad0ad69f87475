// The usage ledger's and the budgets' configuration (`usage` in the config file): whether calls
// are metered at all, how long a record may wait in memory before it is written (what a kill -9
// can lose at most), how long records are kept, and what a call under a budget does when the
// budgets' store cannot be reached.
import type { Static } from 'typebox';
import Type from 'typebox';
import { Closed, OptionalInteger, type EnvReader } from '../../config/config-kit.js';

export const UsageFileSchema = Closed({
  /** false: no usage record is written and no budget holds (a benchmark's control, a test bed). */
  enabled: Type.Optional(Type.Boolean()),
  flush_interval_ms: OptionalInteger(10, 250),
  /** Days a record is kept; 0 keeps them all. */
  retention_days: OptionalInteger(0, 36_500),
  budgets_fail_open: Type.Optional(Type.Boolean()),
});

type UsageFile = Static<typeof UsageFileSchema>;

export function readUsageEnv(env: EnvReader): UsageFile {
  return {
    enabled: env.boolean('USAGE_LEDGER'),
    flush_interval_ms: env.integer('USAGE_FLUSH_INTERVAL_MS', 10, 250),
    retention_days: env.integer('USAGE_RETENTION_DAYS', 0, 36_500),
    budgets_fail_open: env.boolean('BUDGETS_FAIL_OPEN'),
  };
}

export function usageConfig(fromEnv: UsageFile, file: UsageFile = {}) {
  const retentionDays = fromEnv.retention_days ?? file.retention_days ?? 400;
  return {
    /** Whether model calls are metered at all: recorded in the ledger and held to budgets. */
    enabled: fromEnv.enabled ?? file.enabled ?? true,
    /** Longest a usage record waits in memory before it is written. */
    flushIntervalMs: fromEnv.flush_interval_ms ?? file.flush_interval_ms ?? 250,
    /** Days records are kept; null: forever. */
    retentionDays: retentionDays === 0 ? null : retentionDays,
    /** A call under a budget goes on (unmetered by the budget) when its store cannot be reached. */
    budgetsFailOpen: fromEnv.budgets_fail_open ?? file.budgets_fail_open ?? false,
  };
}
