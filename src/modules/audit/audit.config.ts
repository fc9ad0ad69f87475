// The audit log's configuration (`audit` in the config file): how long records are kept. Pruning
// deletes records from the start of each chain and moves the chain's base past them, so what is
// left still verifies (docs/audit.md).
import type { Static } from 'typebox';
import { Closed, OptionalInteger, type EnvReader } from '../../config/config-kit.js';

export const AuditFileSchema = Closed({
  /** Days a record is kept; 0 (the default) keeps every record. */
  retention_days: OptionalInteger(0, 36_500),
  /** Minutes between two prunings (when `retention_days` is set). */
  prune_interval_minutes: OptionalInteger(1, 10_080),
});

type AuditFile = Static<typeof AuditFileSchema>;

export function readAuditEnv(env: EnvReader): AuditFile {
  return {
    retention_days: env.integer('AUDIT_RETENTION_DAYS', 0, 36_500),
    prune_interval_minutes: env.integer('AUDIT_PRUNE_INTERVAL_MINUTES', 1, 10_080),
  };
}

export function auditConfig(fromEnv: AuditFile, file: AuditFile = {}) {
  const retentionDays = fromEnv.retention_days ?? file.retention_days ?? 0;
  return {
    /** Days records are kept; null: forever. */
    retentionDays: retentionDays === 0 ? null : retentionDays,
    /** How often each instance deletes the records past retention. */
    pruneIntervalMs: (fromEnv.prune_interval_minutes ?? file.prune_interval_minutes ?? 60) * 60_000,
  };
}

export type AuditConfig = ReturnType<typeof auditConfig>;
